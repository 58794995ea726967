// Pure: what went wrong with an upstream exchange, by the error's type (never its message text), and foreign
// error text scrubbed of the upstream's URL and header values before it travels.
import { InsufficientScopeError, ProtocolError, SdkError, SdkErrorCode, SdkHttpError, SseError } from "@modelcontextprotocol/client";
import { $ZodError } from "zod/v4/core";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../lib/errors.ts";
import { ExchangeTimeout, exchangeMs } from "./exchange.ts";

/** What the client knew when the error came. */
export interface FaultContext {
  spec: Pick<UpstreamSpec, "url" | "timeout">;
  /** Text that must not leave the proxy: header values (at least 4 characters each), withheld values in every form. */
  secrets: readonly string[];
  /** An answer outgrew the size limit: the client was closed because of it, whatever error that caused. */
  overflowLimit?: number | undefined;
  /** The upstream session id the client holds (a 404/400 to it means the upstream forgot the session). */
  sessionId?: string | undefined;
  /** The last Retry-After of a 429, in ms. */
  retryAfterMs?: number | undefined;
  /** The client's connection is closed (the SDK then fails every pending request with CONNECTION_CLOSED). */
  closed?: boolean | undefined;
}

/**
 * The `data` of the error the proxy itself gives a request whose answer stream ended without the answer
 * (fetch-chain.ts): a broken connection, though the client stays open.
 */
export const ANSWER_STREAM_ENDED = { dynmcp: "answer-stream-ended" } as const;
/** The JSON-RPC code that error carries (the one MCP servers use for a connection closed). */
export const CONNECTION_CLOSED = -32000;

const isAnswerStreamEnded = (err: ProtocolError): boolean =>
  typeof err.data === "object" && err.data !== null && (err.data as { dynmcp?: unknown }).dynmcp === ANSWER_STREAM_ENDED.dynmcp;

/** The fault an error stands for. */
export function faultOf(err: unknown, context: FaultContext): UpstreamFault {
  const clean = (text: string) => scrub(text, context.spec.url, context.secrets);
  if (err instanceof UpstreamError) return err.fault;
  // A 403 `insufficient_scope` from an OAuth upstream: a definite refusal (nothing ran), and what it needs is an
  // account connected with more scopes, not a retry.
  if (err instanceof InsufficientScopeError) {
    const scopes = err.requiredScope ? clean(err.requiredScope) : "not named";
    return { kind: "auth_required", detail: `the server refused: the account needs more access (scopes: ${scopes}); add them to the entry's auth.scopes and connect the account again` };
  }
  if (err instanceof ExchangeTimeout) return { kind: "timeout", ms: err.ms };
  if (context.overflowLimit !== undefined) return { kind: "too_large", limit: context.overflowLimit };
  if (err instanceof SseError) {
    const status = err.code ?? -1;
    if (status > 0) return { kind: "http", status, detail: clean(bodyOf(err.message)) };
    return { kind: "unreachable", detail: clean(err.message) };
  }
  if (err instanceof SdkHttpError) {
    const status = err.status;
    if (!(status > 0)) return { kind: "protocol", detail: clean(err.message) };
    // A 404 (or 400) to a request that carried our session id: the upstream forgot the session.
    if ((status === 404 || status === 400) && context.sessionId) return { kind: "expired" };
    const fault: UpstreamFault = { kind: "http", status, detail: clean(bodyOf(err.message)) };
    if (status === 429 && context.retryAfterMs !== undefined) fault.retryAfterMs = context.retryAfterMs;
    return fault;
  }
  if (err instanceof SdkError) {
    if (err.code === SdkErrorCode.RequestTimeout) return { kind: "timeout", ms: exchangeMs(context.spec.timeout) };
    if (err.code === SdkErrorCode.ConnectionClosed) return { kind: "closed" };
    // An answer the SDK refused (its result schema, a result kind it cannot read), or anything else it raised.
    if (err.code === SdkErrorCode.InvalidResult || err.code === SdkErrorCode.UnsupportedResultType) return { kind: "protocol", detail: "malformed answer" };
    return { kind: "protocol", detail: clean(err.message) };
  }
  if (err instanceof ProtocolError) {
    // -32000 after the connection went (or with the proxy's own answer-stream marker) is a closed connection;
    // otherwise it is the upstream's own error code, passed on as such.
    if (err.code === CONNECTION_CLOSED && (context.closed || isAnswerStreamEnded(err))) return { kind: "closed" };
    return { kind: "rpc", code: err.code, detail: clean(err.message) };
  }
  // An answer that is not what MCP says (the SDK's result schema refused it, or it is not JSON).
  if (err instanceof $ZodError || err instanceof SyntaxError) return { kind: "protocol", detail: "malformed answer" };
  if (err instanceof TypeError) return { kind: "unreachable", detail: clean(err.message) };
  // An aborted fetch: a DOMException whose name is its type (the platform has no subclass for it).
  if (err instanceof DOMException && err.name === "AbortError") return { kind: "closed" };
  if (err instanceof Error) return { kind: "unreachable", detail: clean(err.message) };
  return { kind: "unreachable", detail: "unknown error" };
}

/** The text without the upstream's URL, host or secret header values; whitespace folded, at most 300 characters. */
export function scrub(text: string, url: string, secrets: readonly string[]): string {
  let out = text;
  const parsed = new URL(url);
  for (const needle of [url, parsed.origin + parsed.pathname, parsed.host, ...secrets]) {
    if (needle) out = out.split(needle).join(needle === parsed.host ? "<host>" : "***");
  }
  return out.replace(/\s+/g, " ").trim().slice(0, 300);
}

/** The SDK puts the response body after a prefix; keep the body, short. */
export function bodyOf(message: string): string {
  const text = message.replace(/^Streamable HTTP error: /, "").replace(/^Error POSTing to endpoint: ?/, "");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
