// The host side of a session: the SDK's streamable-HTTP server transport plus what surviving eviction needs (the
// session id, the initialized flag and the initialize parameters, persisted once and replayed into a fresh instance).
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
  type HandleRequestOptions,
  type InitializeRequest,
  type JSONRPCMessage,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { THROWN_CODE_KEY } from "../errors.ts";

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

/**
 * The SDK's private fields this class reads and sets. They are the same in every SDK release we have used;
 * test/unit/session-transport.test.ts fails when an SDK update renames them.
 */
export interface TransportInternals {
  sessionId?: string | undefined;
  _initialized: boolean;
  _onsessioninitialized?: ((sessionId: string) => void | Promise<void>) | undefined;
}

export class SessionTransport extends WebStandardStreamableHTTPServerTransport {
  readonly #storage: TransportStorage;
  #restored: Promise<void> | undefined;
  #params: InitializeRequest["params"] | undefined;

  constructor(sessionId: string, storage: TransportStorage, options: { maxRequestBodySize?: number } = {}) {
    super({ sessionIdGenerator: () => sessionId, ...options });
    this.#storage = storage;
    this.#sdk._onsessioninitialized = () => this.#save();
  }

  get #sdk(): TransportInternals {
    return this as unknown as TransportInternals;
  }

  /**
   * Restores the stored state first (once per instance). A POST body is parsed here, once: the SDK is handed the
   * parsed message, and an initialize's parameters are kept for the stored state.
   */
  override async handleRequest(request: Request, options: HandleRequestOptions = {}): Promise<Response> {
    await (this.#restored ??= this.#restore());
    if (request.method !== "POST" || options.parsedBody !== undefined) return super.handleRequest(request, options);
    const text = await request.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // The SDK answers a body that is not JSON (after its own header checks), from the same text.
      return super.handleRequest(new Request(request, { body: text }), options);
    }
    if (!this.#sdk._initialized) {
      const init = (Array.isArray(body) ? body : [body]).find((m) => isInitializeRequest(m));
      if (init) this.#params = (init as InitializeRequest).params;
    }
    return super.handleRequest(request, { ...options, parsedBody: body });
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The answer to the replayed initialize goes nowhere. (An answer whose host stream has gone is the SDK's to
    // drop: without an event store it never closes a stream on purpose, and it drops an undeliverable answer.)
    const id = "id" in message && !("method" in message) ? message.id : options?.relatedRequestId;
    if (id === REPLAY_ID) return;
    await super.send(thrownCode(message), options);
  }

  /** A fresh instance takes the stored state and replays initialize into the server (its answer is dropped). */
  async #restore(): Promise<void> {
    const state = await this.#storage.get();
    if (!state) return;
    this.#sdk.sessionId = state.sessionId;
    this.#sdk._initialized = state.initialized;
    this.#params = state.initializeParams;
    if (state.initializeParams) this.onmessage?.({ jsonrpc: "2.0", id: REPLAY_ID, method: "initialize", params: state.initializeParams });
  }

  #save(): Promise<void> {
    return this.#storage.set({ sessionId: this.#sdk.sessionId, initialized: this.#sdk._initialized, initializeParams: this.#params });
  }
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
