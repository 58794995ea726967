// A team's `subscriptions/listen` streams (the 2026-07-28 era's way to hear of changed lists): one SDK handler per
// life of the team's index object, whose listen router does the protocol's work (the acknowledgement first, with the
// filter narrowed to what the proxy advertises; each notification stamped with its subscription id; keep-alive
// comments; teardown when the request's signal aborts or the reader goes). The index publishes the team's list
// changes here, and each team has its own index object, so a team's streams hear only its own changes.
// Design: docs/protocol-2026.md §3.6.
import { InMemoryServerEventBus, createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { ListsChanged } from "../env.ts";
import { JsonRpcCode } from "../errors.ts";
import { KEEP_ALIVE_MS, modernServer } from "./server.ts";

export const LISTEN_METHOD = "subscriptions/listen";

/**
 * Listen streams a team may hold open at once. An open SSE stream keeps the team's index object in memory (billed
 * for as long as the stream lasts: a streaming object cannot hibernate), so the count is bounded; the stream past it
 * gets the SDK's in-band refusal (`-32603` "Subscription limit reached", HTTP 200, before any acknowledgement).
 * Every host of a team shares the bound: a host holds one stream, so this is room for a hundred hosts.
 */
export const MAX_LISTEN_STREAMS = 100;

const requestId = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

export class TeamListen {
  /** The handler's event source, ours so that its listener count (one per open stream) can be read. */
  readonly #bus = new InMemoryServerEventBus();
  readonly #handler: McpHttpHandler;

  constructor() {
    // modernHandler's options, plus the bus and the cap (modernHandler takes neither). The factory's server is only
    // read for its capabilities and identity (the filter is narrowed to them), then closed by the SDK.
    this.#handler = createMcpHandler(() => modernServer(), {
      legacy: "reject",
      responseMode: "auto",
      keepAliveMs: KEEP_ALIVE_MS,
      bus: this.#bus,
      maxSubscriptions: MAX_LISTEN_STREAMS,
    });
  }

  /**
   * Serves one listen request. Any other method is refused here before the SDK sees it: the era's server would
   * otherwise answer server/discover and tools/list from this object, which is not where they belong. The method is
   * read from the `Mcp-Method` header, which the SDK then holds the body to (a mismatch is its 400 -32020). The
   * refusal is the SDK's own for the era's unknown methods: 404 -32601.
   */
  async fetch(request: Request): Promise<Response> {
    const method = request.headers.get("mcp-method");
    if (request.method !== "POST" || method !== LISTEN_METHOD) {
      const body: unknown = request.method === "POST" ? await request.json().catch(() => undefined) : undefined;
      const named = method === null ? "This method" : JSON.stringify(method.slice(0, 80));
      return Response.json(
        { jsonrpc: "2.0", id: requestId(body), error: { code: JsonRpcCode.MethodNotFound, message: `Method not found: ${named} is not served here; this route serves ${LISTEN_METHOD} only.` } },
        { status: 404 },
      );
    }
    return this.#handler.fetch(request);
  }

  /** Announces each changed list on the open streams whose filter asked for it (none open: nothing happens). */
  publish(what: ListsChanged): void {
    if (what.tools === true) this.#handler.notify.toolsChanged();
    if (what.prompts === true) this.#handler.notify.promptsChanged();
    if (what.resources === true) this.#handler.notify.resourcesChanged();
  }

  /**
   * Streams open right now. Each open stream holds one bus listener from its acknowledgement to its teardown (one
   * whose honoured filter is empty is closed at once and never counts), which is the set the SDK's cap counts.
   */
  get open(): number {
    return this.#bus.listenerCount;
  }
}
