// A team's `subscriptions/listen` streams (the 2026-07-28 era's way to hear of changed lists): one SDK handler per
// life of the team's index object, whose listen router does the protocol's work (the acknowledgement first, with the
// filter narrowed to what the proxy advertises; each notification stamped with its subscription id; keep-alive
// comments; teardown when the request's signal aborts or the reader goes). The index publishes the team's list
// changes here, and each team has its own index object, so a team's streams hear only its own changes. Around the
// SDK's router: a bound per principal, and a lifetime per stream, ended with the protocol's graceful close.
// Design: docs/protocol-2026.md §3.6.
import { InMemoryServerEventBus, SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import { PRODUCT, type ListsChanged } from "../lib/env.ts";
import { JsonRpcCode } from "../lib/errors.ts";
import { KEEP_ALIVE_MS, modernServer } from "./server.ts";

export const LISTEN_METHOD = "subscriptions/listen";

/**
 * Listen streams a team may hold open at once. An open SSE stream keeps the team's index object in memory (billed
 * for as long as the stream lasts: a streaming object cannot hibernate), so the count is bounded; the stream past it
 * gets the SDK's in-band refusal (`-32603` "Subscription limit reached", HTTP 200, before any acknowledgement).
 * Every host of a team shares the bound: a host holds one stream, so this is room for a hundred hosts.
 */
export const MAX_LISTEN_STREAMS = 100;

/** What one principal may hold (settings LISTEN_STREAMS_PER_PRINCIPAL, LISTEN_STREAM_MAX_SECONDS). */
export interface ListenLimits {
  /**
   * Streams one principal holds open at once. Past it the new stream is refused (in band, as the team's cap is),
   * rather than the principal's oldest closed: hosts listen again when a stream ends, so closing the oldest would
   * set a principal's hosts past the bound closing each other's streams in turn, for ever.
   */
  perPrincipal: number;
  /**
   * How long a stream lasts at most (ms). Then it ends with the protocol's graceful close (the listen request's
   * result) and the host listens again: a stream held by a token since revoked, or by a host long gone whose
   * connection nobody closed, does not hold its place for ever.
   */
  lifetimeMs: number;
}

const requestId = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

const rpcError = (id: string | number | null, code: number, message: string, status: number): Response =>
  Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status });

/** The listen request's result: the protocol's graceful close of a subscription, as the SDK writes it. */
const gracefulClose = (id: string | number | null): string =>
  `event: message\ndata: ${JSON.stringify({
    jsonrpc: "2.0",
    id,
    result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID_META_KEY]: id, [SERVER_INFO_META_KEY]: { name: PRODUCT.name, version: PRODUCT.version } } },
  })}\n\n`;

export class TeamListen {
  /** The handler's event source, ours so that its listener count (one per open stream) can be read. */
  readonly #bus = new InMemoryServerEventBus();
  readonly #handler: McpHttpHandler;
  readonly #limits: ListenLimits;
  /** Streams each principal holds open or is opening (a principal holding none is not in the map). */
  readonly #held = new Map<string, number>();

  constructor(limits: ListenLimits) {
    this.#limits = limits;
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
   * Serves one listen request of `principal` (`t:<token id>` or `u:<user id>`). Any other method is refused here
   * before the SDK sees it: the era's server would otherwise answer server/discover and tools/list from this object,
   * which is not where they belong. The method is read from the `Mcp-Method` header, which the SDK then holds the
   * body to (a mismatch is its 400 -32020). The refusal is the SDK's own for the era's unknown methods: 404 -32601.
   */
  async fetch(request: Request, principal: string): Promise<Response> {
    const method = request.headers.get("mcp-method");
    const text = request.method === "POST" ? await request.text() : "";
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      message = undefined; // the SDK answers it (-32700)
    }
    if (request.method !== "POST" || method !== LISTEN_METHOD) {
      const named = method === null ? "This method" : JSON.stringify(method.slice(0, 80));
      return rpcError(requestId(message), JsonRpcCode.MethodNotFound, `Method not found: ${named} is not served here; this route serves ${LISTEN_METHOD} only.`, 404);
    }
    const held = this.#held.get(principal) ?? 0;
    if (held >= this.#limits.perPrincipal) {
      return rpcError(
        requestId(message),
        JsonRpcCode.InternalError,
        `Subscription limit reached: this token (or member) already holds ${held} listen streams, the most one may hold at once; close one, then listen again.`,
        200,
      );
    }
    // Taken before anything is awaited, so that requests arriving together cannot all pass the check.
    this.#held.set(principal, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(principal) ?? 1) - 1;
      if (left > 0) this.#held.set(principal, left);
      else this.#held.delete(principal);
    };
    const lifetime = new AbortController();
    let response: Response;
    try {
      const signal = AbortSignal.any([request.signal, lifetime.signal]);
      const served = new Request(request.url, { method: "POST", headers: request.headers, body: text, signal });
      response = await this.#handler.fetch(served, message === undefined ? {} : { parsedBody: message });
    } catch (err) {
      release();
      throw err;
    }
    // A refusal or an invalid request is a plain JSON answer: it holds nothing.
    if (!response.body || !(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      release();
      return response;
    }
    return this.#limited(response, requestId(message), lifetime, release);
  }

  /**
   * The stream, counted for its principal until it ends however it ends, and ended at its lifetime: the SDK's
   * subscription is torn down (its request's signal aborted) and the listen request's result follows what it wrote.
   */
  #limited(response: Response, id: string | number | null, lifetime: AbortController, release: () => void): Response {
    const reader = response.body!.getReader();
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      lifetime.abort();
    }, this.#limits.lifetimeMs);
    const over = () => {
      clearTimeout(timer);
      release();
    };
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (!done) return controller.enqueue(value);
            over();
            if (expired) controller.enqueue(new TextEncoder().encode(gracefulClose(id)));
            controller.close();
          } catch (err) {
            over();
            controller.error(err);
          }
        },
        cancel(reason) {
          over();
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, headers: response.headers });
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
