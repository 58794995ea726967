// One upstream MCP server over the SDK Client: connect, read its catalog, call its tools, close; foreign errors become
// UpstreamError here (the fetch its transport goes through is fetch-chain.ts, the classification of faults faults.ts).
import {
  Client,
  ProtocolErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type Notification,
  type Request as McpRequest,
  type RequestMethod,
  type Result,
  type ResultTypeMap,
  type ServerCapabilities,
} from "@modelcontextprotocol/client";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../errors.ts";
import { waitAtMost } from "./backoff.ts";
import type { FetchLike } from "./exchange.ts";
import { faultOf } from "./faults.ts";
import { FetchChain } from "./fetch-chain.ts";
import type { FetchGate, ResponseTooLarge } from "./fetch-gate.ts";

/** How an upstream reaches the host through the session: capabilities, server-to-client requests, notifications. */
export interface UpstreamHooks {
  /** The host's own client capabilities; the upstream is told the ones the proxy can relay. */
  capabilities: () => ClientCapabilities;
  /** A server-to-client request (sampling, elicitation, roots) relayed to the host; its answer goes back up. */
  relay: (upstream: string, request: McpRequest) => Promise<Result>;
  /** Every notification the upstream sends (logging, resource updates, list changes). */
  notify: (upstream: string, notification: Notification) => void;
}

export interface ClientDeps {
  /** The fetch every upstream request goes through (tests inject a recording one). */
  fetch: FetchLike;
  clientInfo: Implementation;
  hooks?: UpstreamHooks;
  /** Connection slots and the response size limit of the session. */
  gate?: FetchGate;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Called for each upstream progress notification of this request. */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** Client capabilities the proxy relays to the host, and the upstream request that needs each. */
const RELAYED = [
  ["sampling", "sampling/createMessage"],
  ["elicitation", "elicitation/create"],
  ["roots", "roots/list"],
] as const;

/** Lists are followed through their cursors, but never forever. */
const MAX_PAGES = 100;
const NO_TIMEOUT = 2_147_483_647;
/** How long close() waits for the DELETE that ends the upstream session before it returns (the DELETE goes on). */
export const CLOSE_GRACE_MS = 1_000;

export class UpstreamClient {
  readonly spec: UpstreamSpec;
  readonly #client: Client;
  readonly #transport: StreamableHTTPClientTransport | SSEClientTransport;
  readonly #secrets: string[];
  #closed = false;
  /** The standalone GET stream is opened only on demand (see isStandaloneStream). */
  #streamWanted = false;
  /** Set when an answer outgrew the limit: the client was closed because of it. */
  #overflow: ResponseTooLarge | undefined;
  readonly #chain: FetchChain;

  private constructor(
    spec: UpstreamSpec,
    client: Client,
    transport: StreamableHTTPClientTransport | SSEClientTransport,
    chain: FetchChain,
    secrets: string[],
  ) {
    this.spec = spec;
    this.#client = client;
    this.#transport = transport;
    this.#chain = chain;
    this.#secrets = secrets;
  }

  /**
   * Opens the connection and runs `initialize`. Headers come resolved (secret references filled in). When `signal`
   * aborts before the connection is up, the client is closed (every exchange under way is aborted) and the
   * attempt fails with the signal's reason.
   */
  static async connect(spec: UpstreamSpec, headers: Record<string, string>, deps: ClientDeps, signal?: AbortSignal): Promise<UpstreamClient> {
    let upstream: UpstreamClient | undefined;
    const chain = new FetchChain(spec, deps, {
      overflowed: (error) => upstream && upstream.#overflowed(error),
      streamWanted: () => (upstream ? upstream.#streamWanted : false),
      closed: () => (upstream ? upstream.#closed : true),
    });
    const transport =
      spec.transport === "sse"
        ? // The older HTTP+SSE transport: its one GET stream carries every answer, so it stays open while connected.
          new SSEClientTransport(new URL(spec.url), { fetch: chain.fetch, requestInit: { headers } })
        : new StreamableHTTPClientTransport(new URL(spec.url), {
            fetch: chain.streamableFetch,
            requestInit: { headers },
            // One reconnect attempt for a dropped GET stream; call-level retries are the registry's business.
            reconnectionOptions: { maxRetries: 1, initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2 },
          });
    const hooks = deps.hooks;
    const host = hooks?.capabilities() ?? {};
    const capabilities: ClientCapabilities = {};
    for (const [name] of RELAYED) if (host[name]) Object.assign(capabilities, { [name]: host[name] });
    // The 2025 handshake (`initialize`) for every upstream: the wire stays what the 2025 clients send.
    const client = new Client(deps.clientInfo, { capabilities, versionNegotiation: { mode: "legacy" } });
    if (hooks) {
      for (const [name, method] of RELAYED) {
        if (capabilities[name]) client.setRequestHandler(method, (request) => hooks.relay(spec.name, request as McpRequest) as never);
      }
      client.fallbackNotificationHandler = async (notification) => hooks.notify(spec.name, notification);
    }
    const secrets = Object.values(headers).filter((v) => v.length >= 4);
    const created = new UpstreamClient(spec, client, transport, chain, secrets);
    upstream = created;
    client.onclose = () => {
      created.#closed = true;
    };
    const abort = () => void client.close().catch(() => {});
    signal?.addEventListener("abort", abort, { once: true });
    try {
      if (signal?.aborted) throw signal.reason;
      await client.connect(transport, created.#options());
    } catch (err) {
      await client.close().catch(() => {});
      throw created.#convert(signal?.aborted ? signal.reason : err);
    } finally {
      signal?.removeEventListener("abort", abort);
    }
    // From now on, note which watched requests got their answer, so one whose stream ends without it is failed
    // at once.
    transport.onmessage = chain.watchAnswers(transport.onmessage);
    return created;
  }

  /** An answer outgrew the limit: close, so every pending request ends now, and remember why. */
  #overflowed(error: ResponseTooLarge): void {
    this.#overflow = error;
    void this.close();
  }

  /** What the upstream said it can do at initialize. */
  get capabilities(): ServerCapabilities {
    return this.#client.getServerCapabilities() ?? {};
  }

  /**
   * Opens the standalone GET stream (server-initiated notifications and requests). Only while the host holds
   * its own stream: an open upstream stream keeps the session object from being evicted.
   */
  async openStream(): Promise<void> {
    if (this.#streamWanted || this.#closed) return;
    this.#streamWanted = true;
    if (this.#transport instanceof StreamableHTTPClientTransport) await this.#transport.resumeStream("").catch(() => {});
  }

  get streaming(): boolean {
    return this.#streamWanted;
  }

  /** Any request to the upstream (its answer is checked against the method's result schema); failures become UpstreamError. */
  async request<M extends RequestMethod>(request: { method: M; params?: McpRequest["params"] }, options: RequestOptions = {}): Promise<ResultTypeMap[M]> {
    try {
      return await this.#client.request(request as never, {
        ...this.#options(options.signal),
        ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
      });
    } catch (err) {
      throw this.#convert(err);
    }
  }

  /** A notification to the upstream (roots changed, cancellations are the SDK's own). */
  async notify(notification: Notification): Promise<void> {
    await this.#client.notification(notification as never).catch(() => {});
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** tools/list to the end (required), then resources, templates and prompts (best-effort). */
  async readCatalog(signal?: AbortSignal): Promise<UpstreamCatalog> {
    const caps = this.#client.getServerCapabilities() ?? {};
    const catalog: UpstreamCatalog = {
      capabilities: caps,
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
      notes: [],
    };
    const info = this.#client.getServerVersion();
    if (info) catalog.serverInfo = info;
    const version = this.#transport instanceof StreamableHTTPClientTransport ? this.#transport.protocolVersion : undefined;
    if (version) catalog.protocolVersion = version;
    const instructions = this.#client.getInstructions();
    if (instructions) catalog.instructions = instructions;

    try {
      catalog.tools = await this.#pages((cursor) => this.#list("tools/list", cursor, signal), (r) => r.tools);
    } catch (err) {
      throw this.#convert(err);
    }
    const optional = async <T>(what: string, enabled: unknown, read: () => Promise<T[]>): Promise<T[]> => {
      if (!enabled) return [];
      try {
        return await read();
      } catch (err) {
        const fault = this.#fault(err);
        // -32601 to an advertised list is common (see shared/corpus): the list is empty, not a failure.
        if (!(fault.kind === "rpc" && fault.code === ProtocolErrorCode.MethodNotFound)) {
          catalog.notes.push(`${what}: ${new UpstreamError(this.spec.name, fault).message}`);
        }
        return [];
      }
    };
    [catalog.resources, catalog.resourceTemplates, catalog.prompts] = await Promise.all([
      optional("resources/list", caps.resources, () =>
        this.#pages((cursor) => this.#list("resources/list", cursor, signal), (r) => r.resources),
      ),
      optional("resources/templates/list", caps.resources, () =>
        this.#pages((cursor) => this.#list("resources/templates/list", cursor, signal), (r) => r.resourceTemplates),
      ),
      optional("prompts/list", caps.prompts, () =>
        this.#pages((cursor) => this.#list("prompts/list", cursor, signal), (r) => r.prompts),
      ),
    ]);
    return catalog;
  }

  /** tools/call, result passed through as the upstream gave it (no output-schema validation in between). */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions = {}): Promise<CallToolResult> {
    return this.request({ method: "tools/call", params: { name, arguments: args } }, options) as Promise<CallToolResult>;
  }

  /**
   * Closes the client: every exchange under way is aborted at once (its slot freed, its request failed), and the
   * upstream session is ended with a DELETE (best-effort) that runs under its own deadline. Waits for that DELETE
   * at most CLOSE_GRACE_MS: a healthy upstream has answered by then, a hanging one delays no caller.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const ending = this.#transport instanceof StreamableHTTPClientTransport ? this.#transport.terminateSession().catch(() => {}) : undefined;
    await this.#client.close().catch(() => {});
    if (ending) await waitAtMost(ending, CLOSE_GRACE_MS);
  }

  #options(signal?: AbortSignal) {
    const timeout = this.spec.timeout === 0 ? NO_TIMEOUT : this.spec.timeout;
    return signal ? { timeout, signal } : { timeout };
  }

  /**
   * One page of a list, as a plain request: the SDK's list helpers would walk every page themselves, keep a
   * response cache, and (for 2026-era servers) filter tools; the proxy pages, caches and filters on its own terms.
   */
  #list<M extends "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list">(method: M, cursor: string | undefined, signal?: AbortSignal): Promise<ResultTypeMap[M]> {
    return this.#client.request({ method, ...(cursor === undefined ? {} : { params: { cursor } }) } as never, this.#options(signal)) as Promise<ResultTypeMap[M]>;
  }

  async #pages<R extends { nextCursor?: string | undefined }, T>(
    read: (cursor: string | undefined) => Promise<R>,
    items: (r: R) => T[],
  ): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await read(cursor);
      out.push(...items(result));
      cursor = result.nextCursor;
      if (!cursor) return out;
    }
    throw new UpstreamError(this.spec.name, { kind: "protocol", detail: `list did not end after ${MAX_PAGES} pages` });
  }

  #convert(err: unknown): UpstreamError {
    if (err instanceof UpstreamError) return err;
    return new UpstreamError(this.spec.name, this.#fault(err));
  }

  /** By type, never by message text (faults.ts); messages are scrubbed of the URL and header values before they travel. */
  #fault(err: unknown): UpstreamFault {
    return faultOf(err, {
      spec: this.spec,
      secrets: this.#secrets,
      overflowLimit: this.#overflow?.limit,
      sessionId: this.#transport instanceof StreamableHTTPClientTransport ? this.#transport.sessionId : undefined,
      retryAfterMs: this.#chain.retryAfterMs,
      closed: this.#closed,
    });
  }
}
