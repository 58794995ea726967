// One upstream MCP server over streamable HTTP: connect, read its catalog, call its tools; foreign errors become UpstreamError here.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type ClientCapabilities,
  type Implementation,
  type Notification,
  type Request as McpRequest,
  type Result,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../errors.ts";
import { tapResponse } from "../streams.ts";
import { parseRetryAfter, waitAtMost } from "./backoff.ts";
import { anySignal, classify, deadline, exchangeMs, ExchangeTimeout, type FetchLike } from "./exchange.ts";
import { ResponseTooLarge, type FetchGate } from "./fetch-gate.ts";

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

/** Client capabilities the proxy relays to the host, and the upstream requests that need each. */
const RELAYED = [
  ["sampling", CreateMessageRequestSchema],
  ["elicitation", ElicitRequestSchema],
  ["roots", ListRootsRequestSchema],
] as const;

/** How long after an answer stream ends its answer may still be on its way through the SDK's parser. */
const ANSWER_GRACE_MS = 100;

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
  /** The last Retry-After of a 429, in ms. */
  #retryAfterMs: number | undefined;

  private constructor(spec: UpstreamSpec, client: Client, transport: StreamableHTTPClientTransport | SSEClientTransport, secrets: string[]) {
    this.spec = spec;
    this.#client = client;
    this.#transport = transport;
    this.#secrets = secrets;
  }

  /**
   * Opens the connection and runs `initialize`. Headers come resolved (secret references filled in). When `signal`
   * aborts before the connection is up, the client is closed (every exchange under way is aborted) and the
   * attempt fails with the signal's reason.
   */
  static async connect(spec: UpstreamSpec, headers: Record<string, string>, deps: ClientDeps, signal?: AbortSignal): Promise<UpstreamClient> {
    let upstream: UpstreamClient | undefined;
    const gated = deps.gate ? deps.gate.wrap(deps.fetch, (error) => upstream && upstream.#overflowed(error), spec.name) : deps.fetch;
    // Every exchange can be aborted and none waits forever (see exchange.ts). A request's fetch is aborted when the
    // SDK gives up on it (timeout, the host cancelled): the SDK sends notifications/cancelled upstream but leaves
    // the POST open; seeing that notification go out, the request's fetch is aborted, so its slot is freed at once.
    const inFlight = new Map<string | number, AbortController>();
    const limitMs = exchangeMs(spec.timeout);
    const watched: FetchLike = async (input, init) => {
      const exchange = classify(init);
      if (exchange.kind === "cancel") inFlight.get(exchange.cancels)?.abort(new Error("the request was cancelled"));
      const id = exchange.kind === "request" ? exchange.id : undefined;
      const own = id === undefined ? undefined : new AbortController();
      if (own && id !== undefined) inFlight.set(id, own);
      const limit = exchange.kind === "request" ? undefined : deadline(limitMs, exchange.kind === "end" ? "the DELETE ending the session" : exchange.kind === "stream" ? "a GET stream" : "a notification");
      // The DELETE is not tied to the client's life: close() aborts everything else at once and lets it finish.
      const signal = anySignal(exchange.kind === "end" ? undefined : (init?.signal ?? undefined), own?.signal, limit?.signal);
      let response: Response;
      try {
        response = await gated(input, { ...init, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (id !== undefined) inFlight.delete(id);
        limit?.clear();
        throw limit?.signal.aborted ? limit.signal.reason : err;
      }
      // A stream's deadline is on its headers; any other exchange's on its whole body.
      if (exchange.kind === "stream") limit?.clear();
      else if (limit) response = tapResponse(response, { end: () => limit.clear() });
      if (id !== undefined) {
        response = tapResponse(response, { end: () => inFlight.get(id) === own && inFlight.delete(id) });
      }
      if (response.status === 429 && upstream) upstream.#retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      if (upstream && upstream.#awaiting && id !== undefined && response.body && (response.headers.get("content-type") ?? "").includes("text/event-stream")) {
        return upstream.#watchAnswerStream(response, id);
      }
      return response;
    };
    const transport =
      spec.transport === "sse"
        ? // The older HTTP+SSE transport: its one GET stream carries every answer, so it stays open while connected.
          new SSEClientTransport(new URL(spec.url), { fetch: watched, requestInit: { headers } })
        : new StreamableHTTPClientTransport(new URL(spec.url), {
            fetch: (input, init) =>
              isStandaloneStream(init) && !(upstream && upstream.#streamWanted) ? Promise.resolve(NO_STREAM()) : watched(input, init),
            requestInit: { headers },
            // One reconnect attempt for a dropped GET stream; call-level retries are the registry's business.
            reconnectionOptions: { maxRetries: 1, initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2 },
          });
    const hooks = deps.hooks;
    const host = hooks?.capabilities() ?? {};
    const capabilities: ClientCapabilities = {};
    for (const [name] of RELAYED) if (host[name]) Object.assign(capabilities, { [name]: host[name] });
    const client = new Client(deps.clientInfo, { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    if (hooks) {
      for (const [name, schema] of RELAYED) {
        if (capabilities[name]) client.setRequestHandler(schema, (request) => hooks.relay(spec.name, request as McpRequest) as never);
      }
      client.fallbackNotificationHandler = async (notification) => hooks.notify(spec.name, notification);
    }
    const secrets = Object.values(headers).filter((v) => v.length >= 4);
    const created = new UpstreamClient(spec, client, transport, secrets);
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
    const deliver = transport.onmessage;
    const awaiting = new Set<string | number>();
    transport.onmessage = (message: JSONRPCMessage) => {
      if ("id" in message && !("method" in message) && (typeof message.id === "string" || typeof message.id === "number")) awaiting.delete(message.id);
      deliver?.(message);
    };
    created.#awaiting = awaiting;
    created.#deliver = deliver;
    return created;
  }

  /**
   * Requests whose answer stream is watched (see #watchAnswerStream) and whose answer has not arrived: an id
   * leaves when its answer comes or its stream is over, so the set holds at most the requests in flight.
   * Undefined until the client is connected.
   */
  #awaiting: Set<string | number> | undefined;
  #deliver: ((message: JSONRPCMessage) => void) | undefined;

  /**
   * The SDK waits until the timeout when a POST's SSE stream ends (or breaks) before the answer and cannot be
   * resumed. Watch such a stream: when it is over and no answer with the request's id came, fail the request
   * with ConnectionClosed at once (after a short grace for the SDK's parser to hand over the last event). A
   * stream that carried an event id can be resumed (the SDK reconnects with Last-Event-ID): it is left alone.
   */
  #watchAnswerStream(response: Response, id: string | number): Response {
    const decoder = new TextDecoder();
    let resumable = false;
    this.#awaiting?.add(id);
    return tapResponse(response, {
      chunk: (value) => {
        if (!resumable && /(^|\n)id:/.test(decoder.decode(value, { stream: true }))) resumable = true;
        return undefined;
      },
      end: () => {
        // A resumable stream's answer may come on the SDK's reconnection: it is not waited for here.
        if (resumable) return void this.#awaiting?.delete(id);
        setTimeout(() => {
          if (!this.#awaiting?.delete(id) || this.#closed) return;
          this.#deliver?.({ jsonrpc: "2.0", id, error: { code: ErrorCode.ConnectionClosed, message: "the answer stream ended before the answer" } });
        }, ANSWER_GRACE_MS);
      },
    });
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

  /** Any request to the upstream, with its result schema; failures become UpstreamError. */
  async request<S extends z.ZodType<Result>>(request: McpRequest, schema: S, options: RequestOptions = {}): Promise<z.infer<S>> {
    try {
      return await this.#client.request(request as never, schema as never, {
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
      catalog.tools = await this.#pages((cursor) => this.#client.listTools({ cursor }, this.#options(signal)), (r) => r.tools);
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
        if (!(fault.kind === "rpc" && fault.code === ErrorCode.MethodNotFound)) {
          catalog.notes.push(`${what}: ${new UpstreamError(this.spec.name, fault).message}`);
        }
        return [];
      }
    };
    [catalog.resources, catalog.resourceTemplates, catalog.prompts] = await Promise.all([
      optional("resources/list", caps.resources, () =>
        this.#pages((cursor) => this.#client.listResources({ cursor }, this.#options(signal)), (r) => r.resources),
      ),
      optional("resources/templates/list", caps.resources, () =>
        this.#pages(
          (cursor) => this.#client.listResourceTemplates({ cursor }, this.#options(signal)),
          (r) => r.resourceTemplates,
        ),
      ),
      optional("prompts/list", caps.prompts, () =>
        this.#pages((cursor) => this.#client.listPrompts({ cursor }, this.#options(signal)), (r) => r.prompts),
      ),
    ]);
    return catalog;
  }

  /** tools/call, result passed through as the upstream gave it (no output-schema validation in between). */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions = {}): Promise<CallToolResult> {
    return this.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, options);
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

  /** By type, never by message text; messages are scrubbed of the URL and header values before they travel. */
  #fault(err: unknown): UpstreamFault {
    if (err instanceof UpstreamError) return err.fault;
    if (err instanceof ExchangeTimeout) return { kind: "timeout", ms: err.ms };
    if (this.#overflow) return { kind: "too_large", limit: this.#overflow.limit };
    if (err instanceof SseError) {
      const status = err.code ?? -1;
      if (status > 0) return { kind: "http", status, detail: this.#scrub(bodyOf(err.message)) };
      return { kind: "unreachable", detail: this.#scrub(err.message) };
    }
    if (err instanceof StreamableHTTPError) {
      const status = err.code ?? -1;
      if (status <= 0) return { kind: "protocol", detail: this.#scrub(err.message) };
      // A 404 (or 400) to a request that carried our session id: the upstream forgot the session.
      if ((status === 404 || status === 400) && this.#transport instanceof StreamableHTTPClientTransport && this.#transport.sessionId) {
        return { kind: "expired" };
      }
      const fault: UpstreamFault = { kind: "http", status, detail: this.#scrub(bodyOf(err.message)) };
      if (status === 429 && this.#retryAfterMs !== undefined) fault.retryAfterMs = this.#retryAfterMs;
      return fault;
    }
    if (err instanceof McpError) {
      if (err.code === ErrorCode.RequestTimeout) return { kind: "timeout", ms: exchangeMs(this.spec.timeout) };
      if (err.code === ErrorCode.ConnectionClosed) return { kind: "closed" };
      return { kind: "rpc", code: err.code, detail: this.#scrub(err.message.replace(/^MCP error -?\d+: /, "")) };
    }
    if (err instanceof TypeError) return { kind: "unreachable", detail: this.#scrub(err.message) };
    if (err instanceof Error) {
      if (err.name === "AbortError") return { kind: "closed" };
      if (err.name === "ZodError" || err.name === "SyntaxError") return { kind: "protocol", detail: "malformed answer" };
      return { kind: "unreachable", detail: this.#scrub(err.message) };
    }
    return { kind: "unreachable", detail: "unknown error" };
  }

  #scrub(text: string): string {
    let out = text;
    const url = new URL(this.spec.url);
    for (const needle of [this.spec.url, url.origin + url.pathname, url.host, ...this.#secrets]) {
      if (needle) out = out.split(needle).join(needle === url.host ? "<host>" : "***");
    }
    return out.replace(/\s+/g, " ").trim().slice(0, 300);
  }
}

/**
 * The SDK opens a standalone GET (SSE) stream after initialize. An open upstream stream keeps the session
 * object from ever being evicted, and nothing the proxy serves needs server-initiated messages yet, so the
 * client is told the server has none (405, as the spec lets servers answer).
 */
function isStandaloneStream(init: RequestInit | undefined): boolean {
  if ((init?.method ?? "GET").toUpperCase() !== "GET") return false;
  // A GET with Last-Event-ID resumes a request's own answer stream: always allowed.
  return !new Headers(init?.headers).has("last-event-id");
}
const NO_STREAM = () => new Response(null, { status: 405, headers: { Allow: "POST, DELETE" } });

/** The SDK puts the response body after a prefix; keep the body, short. */
function bodyOf(message: string): string {
  const text = message.replace(/^Streamable HTTP error: /, "").replace(/^Error POSTing to endpoint: ?/, "");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
