// The host side of a session: the SDK's streamable-HTTP server transport plus what surviving eviction needs (the
// session id, the initialized flag and the initialize parameters, persisted once and replayed into a fresh instance).
// Only the SDK's public surface is used: the `onsessioninitialized` option says when to persist, and a fresh instance
// is initialized by handing the stored `initialize` to the transport's own `handleRequest`, so the SDK sets its
// session id and initialized flag itself.
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
  isJSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  type HandleRequestOptions,
  type InitializeRequest,
  type JSONRPCMessage,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { THROWN_CODE_KEY } from "../lib/errors.ts";
import { AnswerModes, singleRequestId } from "./answer-mode.ts";

/** What is stored under the session's `transport` key (the same shape earlier releases stored). */
export interface TransportState {
  sessionId?: string | undefined;
  initialized: boolean;
  initializeParams?: InitializeRequest["params"] | undefined;
}

export interface TransportStorage {
  get: () => Promise<TransportState | undefined>;
  set: (state: TransportState) => Promise<void>;
}

/** The id of the replayed initialize: its answer goes nowhere. */
export const REPLAY_ID = "__dynmcp_restore__";

/** How a runtime built by the session's n-th reload tags the ids of its requests to the host. */
export const reloadTag = (n: number): string => `reload${n}:`;
const TAGGED = /^reload\d+:/;

/** What the replayed initialize is sent as: the headers the SDK checks, the stored message as the parsed body. */
const REPLAY_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

/** The parameters of an initialize replayed for a state stored without them: a client that declared nothing. */
const NO_PARAMS: InitializeRequest["params"] = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "unknown", version: "0" } };

export class SessionTransport extends WebStandardStreamableHTTPServerTransport {
  readonly #storage: TransportStorage;
  #restored: Promise<void> | undefined;
  #params: InitializeRequest["params"] | undefined;
  /** Whether the session is initialized (the SDK keeps its own flag private): at its initialize, or once restored. */
  #initialized = false;
  /** While the stored initialize is replayed: the SDK calls `onsessioninitialized` again, and nothing is to be written. */
  #replaying = false;
  /**
   * A runtime built by a reload tags the ids of its requests to the host (an upstream's elicitation, sampling or roots
   * request relayed), and takes only the host's answers that carry its tag; the first runtime of an object's life
   * sends plain ids and takes only untagged answers. The host's answers are handed to every runtime of the session
   * still answering calls (SessionObject), so each reaches the runtime that asked, whatever ids the SDK chose.
   */
  readonly #tag: string | undefined;
  /** Whether each request is answered as JSON or on its stream, decided by its first message (answer-mode.ts). */
  readonly #modes = new AnswerModes();

  constructor(sessionId: string, storage: TransportStorage, { tag, ...options }: { maxRequestBodySize?: number; tag?: string | undefined } = {}) {
    // The callback is built before `this` may be used; it runs only once a request is handled.
    const self: { transport?: SessionTransport } = {};
    super({ sessionIdGenerator: () => sessionId, onsessioninitialized: () => self.transport && self.transport.#initializedNow(), ...options });
    self.transport = this;
    this.#storage = storage;
    this.#tag = tag;
  }

  /**
   * Restores the stored state first (once per instance). A POST body is parsed here, once: the SDK is handed the
   * parsed message, and an initialize's parameters are kept for the stored state. A POST of one request is answered
   * as JSON when nothing but its answer is sent for it (answer-mode.ts).
   */
  override async handleRequest(request: Request, options: HandleRequestOptions = {}): Promise<Response> {
    await (this.#restored ??= this.#restore());
    if (request.method !== "POST") return super.handleRequest(request, options);
    let body = options.parsedBody;
    if (body === undefined) {
      const text = await request.text();
      try {
        body = JSON.parse(text);
      } catch {
        // The SDK answers a body that is not JSON (after its own header checks), from the same text.
        return super.handleRequest(new Request(request, { body: text }), options);
      }
    }
    if (!this.#initialized) {
      const init = (Array.isArray(body) ? body : [body]).find((m) => isInitializeRequest(m));
      if (init) this.#params = (init as InitializeRequest).params;
    }
    return this.#answered(request, { ...options, parsedBody: this.#ownAnswers(body) });
  }

  /** The SDK's answer to a POST; one request's is JSON when nothing but that answer is sent for it (answer-mode.ts). */
  async #answered(request: Request, options: HandleRequestOptions): Promise<Response> {
    const id = singleRequestId(options.parsedBody);
    const first = id === undefined ? undefined : this.#modes.watch(id);
    if (id === undefined || !first) return super.handleRequest(request, options);
    let response: Response;
    try {
      response = await super.handleRequest(request, options);
    } catch (err) {
      this.#modes.forget(id);
      throw err;
    }
    if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
      this.#modes.forget(id);
      return response;
    }
    return this.#modes.answer(id, first, response);
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The answer to the replayed initialize goes nowhere. (An answer whose host stream has gone is the SDK's to
    // drop: without an event store it never closes a stream on purpose, and it drops an undeliverable answer.)
    const id = "id" in message && !("method" in message) ? message.id : options?.relatedRequestId;
    if (id === REPLAY_ID) return;
    const out = thrownCode(this.#tagged(message));
    try {
      await super.send(out, options);
    } catch (err) {
      if (id !== undefined) this.#modes.forget(id);
      throw err;
    }
    // Decided once the message is on the request's stream: an answer has closed that stream by then.
    this.#modes.sent(id, out);
  }

  /** Our request to the host, or our cancellation of one, under this runtime's tag (when it has one). */
  #tagged(message: JSONRPCMessage): JSONRPCMessage {
    const tag = this.#tag;
    if (tag === undefined || !("method" in message)) return message;
    if (isJSONRPCRequest(message)) return { ...message, id: `${tag}${message.id}` };
    const params = message.params as { requestId?: unknown } | undefined;
    if (message.method !== "notifications/cancelled" || params?.requestId === undefined) return message;
    return { ...message, params: { ...params, requestId: `${tag}${String(params.requestId)}` } };
  }

  /** The body without the host's answers to another runtime's requests, and the tag taken off answers to ours. */
  #ownAnswers(body: unknown): unknown {
    const tag = this.#tag;
    const own = (message: unknown): unknown[] => {
      // An answer has an id and no method (the SDK checks the rest).
      if (typeof message !== "object" || message === null || !("id" in message) || "method" in message) return [message];
      const id = message.id;
      if (tag === undefined) return typeof id === "string" && TAGGED.test(id) ? [] : [message];
      return typeof id === "string" && id.startsWith(tag) ? [{ ...message, id: id.slice(tag.length) }] : [];
    };
    return Array.isArray(body) ? body.flatMap(own) : (own(body)[0] ?? []);
  }

  /**
   * A fresh instance takes the stored state and replays initialize through the SDK's own request handling (its answer
   * is dropped, its stream never read): the SDK takes the session as initialized, and the server knows the host's
   * capabilities again.
   */
  async #restore(): Promise<void> {
    const state = await this.#storage.get();
    if (!state?.initialized) return;
    this.#params = state.initializeParams;
    const replay = { jsonrpc: "2.0", id: REPLAY_ID, method: "initialize", params: state.initializeParams ?? NO_PARAMS };
    this.#replaying = true;
    try {
      const answer = await super.handleRequest(new Request("https://session.invalid/", { method: "POST", headers: REPLAY_HEADERS }), { parsedBody: replay });
      await answer.body?.cancel();
    } finally {
      this.#replaying = false;
    }
    this.#initialized = true;
  }

  /** The SDK initialized the session: persisted once, at the host's initialize (not at a replay). */
  async #initializedNow(): Promise<void> {
    this.#initialized = true;
    if (this.#replaying) return;
    await this.#storage.set({ sessionId: this.sessionId, initialized: true, initializeParams: this.#params });
  }
}

/**
 * A request of the host's for the session's transport. While runtimes a reload retired still answer calls, a POST that
 * carries no request (the host's answers to what an upstream asked during a call, its cancellations) goes to their
 * transports as well: each takes only the answers to its own requests (its tag), and cancellations of requests it
 * does not answer change nothing there.
 */
export async function handleWithRetired(current: SessionTransport, retired: SessionTransport[], request: Request): Promise<Response> {
  if (retired.length === 0 || request.method !== "POST") return current.handleRequest(request);
  const text = await request.text();
  const copy = () => new Request(request, { body: text });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return current.handleRequest(copy());
  }
  if (!(Array.isArray(body) ? body : [body]).some((message) => isJSONRPCRequest(message))) {
    await Promise.all(retired.map((old) => old.handleRequest(copy(), { parsedBody: body }).catch(() => undefined)));
  }
  return current.handleRequest(copy(), { parsedBody: body });
}

/** An error answer sent with the code its handler threw (see THROWN_CODE_KEY), without the key. */
function thrownCode(message: JSONRPCMessage): JSONRPCMessage {
  if (!("error" in message)) return message;
  const data = message.error.data as Record<string, unknown> | undefined;
  const code = data?.[THROWN_CODE_KEY];
  if (typeof code !== "number") return message;
  const { [THROWN_CODE_KEY]: _, ...rest } = data as Record<string, unknown>;
  const error = { code, message: message.error.message, ...(Object.keys(rest).length ? { data: rest } : {}) };
  return { ...message, error };
}
