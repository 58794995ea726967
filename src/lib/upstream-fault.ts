// Why an upstream could not serve a request (`UpstreamFault`, told apart by its `kind`), in the words the agent reads
// (`describeFault` for a call's answer, `shortReason` for a catalog line), and as an upstream's record keeps it
// (`KeptFailure`: the words, and the kind and an account's connect link as data, so no reader parses the words).

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
  | { kind: "throttled"; detail: string }
  /**
   * An OAuth upstream (docs/oauth.md 3.3) with no usable account for this caller: `detail` says why and what to do,
   * `connectUrl` (when there is one) is where the member connects their account.
   */
  | { kind: "auth_required"; detail: string; connectUrl?: string };

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
    case "auth_required":
      return fault.connectUrl
        ? `"${upstream}" needs your account: ${fault.detail}. Ask the user to open ${fault.connectUrl} to connect it (the link works for 10 minutes), then call again`
        : `"${upstream}" needs an account: ${fault.detail}`;
  }
}

/** Every kind an `UpstreamFault` has (stored records name one: `KeptFailure`). */
export const UPSTREAM_FAULT_KINDS = [
  "unreachable",
  "http",
  "timeout",
  "rpc",
  "protocol",
  "config",
  "closed",
  "expired",
  "too_large",
  "unknown_outcome",
  "throttled",
  "auth_required",
] as const satisfies readonly UpstreamFault["kind"][];
// A kind added to the union and not to the list fails to compile here.
const everyFaultKind: Exclude<UpstreamFault["kind"], (typeof UPSTREAM_FAULT_KINDS)[number]> extends never ? true : never = true;
void everyFaultKind;

/**
 * A failure kept to be shown later (an eager upstream's record): its words, and as data its kind and, for an account
 * not connected, where the member connects it. Readers take the link and the kind from here, never from the words.
 */
export interface KeptFailure {
  reason: string;
  kind?: UpstreamFault["kind"] | undefined;
  connectUrl?: string | undefined;
}

/** A fault as an upstream's record keeps it. */
export function keptFailure(fault: UpstreamFault): KeptFailure {
  const connectUrl = fault.kind === "auth_required" ? fault.connectUrl : undefined;
  return { reason: shortReason(fault), kind: fault.kind, ...(connectUrl ? { connectUrl } : {}) };
}

/** A kept failure as a catalog line or a call's answer shows it: one short line, or an account instruction whole. */
export const reasonLine = (failure: Pick<KeptFailure, "reason" | "kind">, oneLine: (text: string) => string): string =>
  failure.kind === "auth_required" ? failure.reason.replace(/\s+/g, " ").trim() : oneLine(failure.reason);

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
    case "auth_required":
      // The whole instruction: the catalog line and a call's answer are how the agent learns what to ask of the user.
      return `needs an account: ${fault.detail}${fault.connectUrl ? `; the user connects it at ${fault.connectUrl} (valid 10 minutes; calling a tool of it again gives a new link)` : ""}`;
  }
}

