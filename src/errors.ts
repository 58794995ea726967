// One closed union of the proxy's failures, and the one place that turns them into words.

/** Why an upstream could not serve a request: the upstream client classifies what the wire did; the registry adds throttled and unknown_outcome; the header resolver and the URL check add config. */
export type UpstreamFault =
  | { kind: "unreachable"; detail: string }
  | { kind: "http"; status: number; detail: string; retryAfterMs?: number }
  | { kind: "timeout"; ms: number }
  | { kind: "rpc"; code: number; detail: string }
  | { kind: "protocol"; detail: string }
  | { kind: "config"; detail: string }
  | { kind: "closed" }
  /** The upstream no longer knows our session (404/400 to its id). */
  | { kind: "expired" }
  | { kind: "too_large"; limit: number }
  /** The connection broke after a call was sent: it may or may not have run. */
  | { kind: "unknown_outcome"; detail: string }
  | { kind: "throttled"; detail: string };

/** A failure of one named upstream, carried through the registry and the meta-tools. */
export class UpstreamError extends Error {
  readonly upstream: string;
  readonly fault: UpstreamFault;
  constructor(upstream: string, fault: UpstreamFault) {
    super(describeFault(upstream, fault));
    this.name = "UpstreamError";
    this.upstream = upstream;
    this.fault = fault;
  }
}

/** The readable reason, safe to show to the agent: names the server, never its URL or headers. */
export function describeFault(upstream: string, fault: UpstreamFault): string {
  switch (fault.kind) {
    case "unreachable":
      return `could not reach "${upstream}" (${fault.detail})`;
    case "http":
      return `"${upstream}" answered HTTP ${fault.status}${fault.detail ? ` (${fault.detail})` : ""}`;
    case "timeout":
      return `"${upstream}" did not answer within ${fault.ms} ms; the request was cancelled`;
    case "rpc":
      return `"${upstream}" returned an error: ${fault.detail}`;
    case "protocol":
      return `"${upstream}" broke the MCP protocol (${fault.detail})`;
    case "config":
      return `"${upstream}" is misconfigured: ${fault.detail}`;
    case "closed":
      return `the connection to "${upstream}" closed`;
    case "expired":
      return `"${upstream}" no longer knows this session and a new one failed too`;
    case "too_large":
      return `"${upstream}" sent an answer larger than ${fault.limit} bytes; it was refused`;
    case "unknown_outcome":
      return `the connection to "${upstream}" broke after the call was sent (${fault.detail}); it may or may not have run, and it was not repeated because the tool is not marked read-only or idempotent`;
    case "throttled":
      return `"${upstream}" is reconnecting too often (${fault.detail}); try again then`;
  }
}

/** The short reason shown in the catalog line `name: unavailable — <reason>`. */
export function shortReason(fault: UpstreamFault): string {
  switch (fault.kind) {
    case "unreachable":
      return `unreachable (${fault.detail})`;
    case "http":
      return `HTTP ${fault.status}`;
    case "timeout":
      return `no answer within ${fault.ms} ms`;
    case "rpc":
      return `error: ${fault.detail}`;
    case "protocol":
      return `protocol error (${fault.detail})`;
    case "config":
      return `misconfigured: ${fault.detail}`;
    case "closed":
      return "connection closed";
    case "expired":
      return "session expired";
    case "too_large":
      return `answer over ${fault.limit} bytes`;
    case "unknown_outcome":
      return "connection broke mid-call";
    case "throttled":
      return "reconnecting too often";
  }
}

/**
 * An upstream failure as a JSON-RPC error for the forwarded methods (resources, prompts, completion): the
 * upstream's own JSON-RPC error passes through with its code; anything else is -32603 naming the server.
 */
export function toJsonRpcError(err: UpstreamError): { code: number; message: string } {
  if (err.fault.kind === "rpc") return { code: err.fault.code, message: err.fault.detail };
  return { code: -32603, message: err.message };
}

/** A JSON-RPC error a request handler throws: the SDK sends its code and its message as they are. */
export class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "RpcError";
    this.code = code;
  }
}

/** Converts what an upstream call threw into the JSON-RPC error the host gets. */
export function forwardedError(err: unknown): unknown {
  if (err instanceof UpstreamError) {
    const { code, message } = toJsonRpcError(err);
    return new RpcError(code, message);
  }
  return err;
}
