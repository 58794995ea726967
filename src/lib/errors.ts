// One closed union of the proxy's failures (`ProxyError`, told apart by its `kind`), and the one place that turns
// them into words and answers: a tool result (`toToolResult`), a JSON-RPC error (`toJsonRpcError`, `RpcError`), and
// the router's HTTP answer (status and code per kind in `HTTP_ANSWERS`, the Response made by `httpError` in
// responses.ts). What an upstream's fault is and how it is worded: upstream-fault.ts.
import { describeFault, type UpstreamFault } from "./upstream-fault.ts";

export type { UpstreamFault } from "./upstream-fault.ts";

/** The proxy's own failures of a tool call, answered as an `isError` result. */
export type ToolErrorKind =
  /** No such tool (or not in this session's catalog, or a server not loaded yet). */
  | "unknown_tool"
  /** A meta-tool's arguments did not match its input schema. */
  | "invalid_arguments"
  /** The tool's server is unavailable in this session, even after one more attempt. */
  | "unavailable"
  /** load_mcp: no such server to load (a typo, or one already evicted). */
  | "unknown_server"
  /** load_mcp: the attempt failed; the server can be loaded again. */
  | "load_failed"
  /** load_mcp: the last allowed attempt failed; the server is no longer offered. */
  | "evicted"
  /** 2026 era: a toolset handle that is malformed, not this token's, or expired. */
  | "invalid_toolset"
  /** Code mode: an execute program did not finish (`cause` in `_meta` says why: timeout, error, tool_calls…). */
  | "program_failed"
  /** The tool's calls need the user's consent, and this host cannot be asked: the call was not made. */
  | "approval_required"
  /** The user did not allow the call (said no, or did not answer in time): it was not made. */
  | "approval_refused";

/** The proxy's own failures of a forwarded request, answered as a JSON-RPC error. */
export type RpcErrorKind =
  /** No upstream owns the URI. */
  | "resource_not_found"
  /** An unknown prompt or resource template: the host's mistake. */
  | "invalid_params"
  /** The owning upstream does not offer what was asked (resource subscriptions). */
  | "not_supported"
  /**
   * An upstream's request for the host (elicitation, sampling) that the proxy cannot place on the call it belongs
   * to: several calls to that upstream are in progress and the upstream did not say which, or that call is over.
   */
  | "unrelated_request";

/** The router's own answers before any session code runs, each an HTTP status with a JSON-RPC error body. */
export type HttpErrorKind =
  | "session_not_found"
  | "session_id_required"
  | "not_configured"
  | "rate_limited"
  | "method_not_allowed"
  | "unsupported_version"
  | "unsupported_media_type"
  | "not_acceptable"
  | "invalid_request"
  | "parse_error"
  | "body_too_large"
  /** `?view=` names no view, or not the one the session started with. */
  | "invalid_view"
  /** A principal's live sessions are at MAX_SESSIONS_PER_PRINCIPAL and every one is in use (src/session/admission.ts). */
  | "too_many_sessions";

/** Team management (the store shared by the admin API and the CLI). */
export type StoreErrorKind = "secrets_disabled" | "invalid_secret_name";

/**
 * An embedder of the search's semantic stage that gave no vectors (src/catalog/workers-ai-embedder.ts): its service
 * failed or refused (`embedder_failed`), or answered something that is not one vector per text of the model's
 * dimension (`embedder_malformed`). Never an answer of its own: the search goes on without the stage.
 */
export type EmbedderErrorKind = "embedder_failed" | "embedder_malformed";

/** Why an embedder gave no vectors: the kind, the model, and words that never hold a text it was asked to embed. */
export class EmbedderError extends Error {
  readonly kind: EmbedderErrorKind;
  readonly model: string;
  constructor(kind: EmbedderErrorKind, model: string, message: string) {
    super(message);
    this.name = "EmbedderError";
    this.kind = kind;
    this.model = model;
  }
}

/** Every kind of failure the proxy names: an upstream fault's kind, or one of the proxy's own. */
export type ProxyErrorKind = UpstreamFault["kind"] | ToolErrorKind | RpcErrorKind | HttpErrorKind | StoreErrorKind;

/** JSON-RPC error codes the proxy answers with (the spec's, the SDK's ConnectionClosed/-32000, MCP's -32002). */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The generic server error the transport answers with (bad headers, method, media type, rate limit). */
  ServerError: -32000,
  SessionNotFound: -32001,
  ResourceNotFound: -32002,
} as const;

/**
 * The `_meta` key of every `isError` result the proxy makes itself: `{ kind, upstream?, status?, code? }`. An
 * upstream's own `isError` result passes through without it, so its absence means "the tool said so".
 */
export const ERROR_META_KEY = "dynmcp/error";

/** What `_meta["dynmcp/error"]` holds. */
export interface ErrorMeta {
  kind: ProxyErrorKind;
  /** The server the failure is about, when there is one. */
  upstream?: string;
  /** The upstream's HTTP status (kind `http`). */
  status?: number;
  /** The upstream's JSON-RPC error code (kind `rpc`). */
  code?: number;
  /** Where the caller's member connects their account (an OAuth upstream without one: docs/oauth.md 3.3). */
  connectUrl?: string;
  /** Why an execute program failed (kind `program_failed`): `syntax`, `error`, `timeout`, `tool_calls`… (src/views/code/sandbox.ts). */
  cause?: string;
  /** Where in the program (kind `program_failed`), when known: 1-based line and column of the agent's code. */
  line?: number;
  column?: number;
}

/** A failure of the proxy, of one of its upstreams or of a request to it; `kind` says which, the message words it. */
export class ProxyError extends Error {
  readonly kind: ProxyErrorKind;
  /** The server the failure is about, when there is one. */
  readonly upstream: string | undefined;
  constructor(kind: ProxyErrorKind, message: string, upstream?: string) {
    super(message);
    this.name = "ProxyError";
    this.kind = kind;
    this.upstream = upstream;
  }
}

/** A failure of one named upstream, carried through the registry and the meta-tools; its kind is its fault's. */
export class UpstreamError extends ProxyError {
  declare readonly upstream: string;
  readonly fault: UpstreamFault;
  constructor(upstream: string, fault: UpstreamFault) {
    super(fault.kind, describeFault(upstream, fault), upstream);
    this.name = "UpstreamError";
    this.fault = fault;
  }
}

/** Why load_mcp did not load (`unknown_server`, `load_failed`, `evicted`): the agent reads `message`; the kind says what load_mcp logs and announces. */
export class LoadError extends ProxyError {
  constructor(kind: "unknown_server" | "load_failed" | "evicted", message: string, upstream: string) {
    super(kind, message, upstream);
    this.name = "LoadError";
  }
  /** This failure changed the catalog (the server was evicted). */
  get catalogChanged(): boolean {
    return this.kind === "evicted";
  }
  /** Something was tried (not a name that is no server to load: the agent's mistake, not an event to log). */
  get attempted(): boolean {
    return this.kind !== "unknown_server";
  }
}

/**
 * Where a JSON-RPC error's `data` keeps the code it was thrown with while the SDK sends another: the SDK sends
 * resource-not-found (-32002) as -32602, as the 2026-07-28 revision asks, on every session. A 2025 host is owed
 * -32002: the session transport puts it back and drops this key (session/transport.ts).
 */
export const THROWN_CODE_KEY = "dynmcp/code";

/** A JSON-RPC error a request handler throws: the SDK sends its code and its message as they are. */
export class RpcError extends ProxyError {
  readonly code: number;
  readonly data: { [THROWN_CODE_KEY]: number } | undefined;
  constructor(kind: ProxyErrorKind, message: string, code: number = rpcCode(kind), upstream?: string) {
    super(kind, message, upstream);
    this.name = "RpcError";
    this.code = code;
    this.data = code === JsonRpcCode.ResourceNotFound ? { [THROWN_CODE_KEY]: code } : undefined;
  }
}

/** The JSON-RPC code of a kind when nothing more specific (an upstream's own code) is known. */
function rpcCode(kind: ProxyErrorKind): number {
  switch (kind) {
    case "resource_not_found":
      return JsonRpcCode.ResourceNotFound;
    case "invalid_params":
    case "invalid_arguments":
      return JsonRpcCode.InvalidParams;
    case "not_supported":
      return JsonRpcCode.MethodNotFound;
    case "unrelated_request":
      return JsonRpcCode.InvalidRequest;
    default:
      return kind in HTTP_ANSWERS ? HTTP_ANSWERS[kind as HttpErrorKind].code : JsonRpcCode.InternalError;
  }
}

/** The router's answers: the HTTP status and the JSON-RPC code of each of its kinds. */
export const HTTP_ANSWERS: Record<HttpErrorKind, { status: number; code: number }> = {
  session_not_found: { status: 404, code: JsonRpcCode.SessionNotFound },
  session_id_required: { status: 400, code: JsonRpcCode.ServerError },
  not_configured: { status: 503, code: JsonRpcCode.InternalError },
  rate_limited: { status: 429, code: JsonRpcCode.ServerError },
  method_not_allowed: { status: 405, code: JsonRpcCode.ServerError },
  unsupported_version: { status: 400, code: JsonRpcCode.ServerError },
  unsupported_media_type: { status: 415, code: JsonRpcCode.ServerError },
  not_acceptable: { status: 406, code: JsonRpcCode.ServerError },
  invalid_request: { status: 400, code: JsonRpcCode.InvalidRequest },
  parse_error: { status: 400, code: JsonRpcCode.ParseError },
  body_too_large: { status: 413, code: JsonRpcCode.InvalidRequest },
  invalid_view: { status: 400, code: JsonRpcCode.ServerError },
  too_many_sessions: { status: 429, code: JsonRpcCode.ServerError },
};

/** The words of the router's one session-not-found answer (the router and the session object both give it). */
export const SESSION_NOT_FOUND_MESSAGE = "Session not found: start a new session with initialize.";

/** An `isError` tool result: the text, and the kind in `_meta` (`ERROR_META_KEY`) so nobody has to read the text. */
export interface ToolErrorResult {
  [key: string]: unknown;
  isError: true;
  content: { type: "text"; text: string }[];
  _meta: { [ERROR_META_KEY]: ErrorMeta };
}

/** What `_meta` says of a failure. */
export function errorMeta(err: ProxyError): ErrorMeta {
  const meta: ErrorMeta = { kind: err.kind };
  if (err.upstream !== undefined && err.upstream !== "") meta.upstream = err.upstream;
  if (err instanceof UpstreamError) {
    if (err.fault.kind === "http") meta.status = err.fault.status;
    if (err.fault.kind === "rpc") meta.code = err.fault.code;
    if (err.fault.kind === "auth_required" && err.fault.connectUrl) meta.connectUrl = err.fault.connectUrl;
  }
  return meta;
}

/** A failure as the tool result the model reads (the error's message, or `text` when the caller words it). */
export function toToolResult(err: ProxyError, text: string = err.message): ToolErrorResult {
  return { isError: true, content: [{ type: "text", text }], _meta: { [ERROR_META_KEY]: errorMeta(err) } };
}

/** The proxy's kind of an `isError` result, or undefined for an upstream's own (or any result without one). */
export function errorKindOf(result: { _meta?: { [key: string]: unknown } | undefined }): ErrorMeta | undefined {
  const meta = result._meta?.[ERROR_META_KEY];
  return typeof meta === "object" && meta !== null && typeof (meta as ErrorMeta).kind === "string" ? (meta as ErrorMeta) : undefined;
}

/**
 * A failure as a JSON-RPC error for the forwarded methods (resources, prompts, completion): the upstream's own
 * JSON-RPC error passes through with its code; any other upstream failure is -32603 naming the server; the proxy's
 * own errors have the code of their kind.
 */
export function toJsonRpcError(err: ProxyError): { code: number; message: string } {
  if (err instanceof UpstreamError) {
    if (err.fault.kind === "rpc") return { code: err.fault.code, message: err.fault.detail };
    return { code: JsonRpcCode.InternalError, message: err.message };
  }
  if (err instanceof RpcError) return { code: err.code, message: err.message };
  return { code: rpcCode(err.kind), message: err.message };
}

/** Converts what an upstream call threw into the JSON-RPC error the host gets. */
export function forwardedError(err: unknown): unknown {
  if (err instanceof UpstreamError) {
    const { code, message } = toJsonRpcError(err);
    return new RpcError(err.kind, message, code, err.upstream);
  }
  return err;
}
