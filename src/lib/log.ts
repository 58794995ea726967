// Structured JSON log lines (Workers observability indexes them). Never argument values, headers or secrets.
import type { AuditEntry } from "./audit-types.ts";

export type LogEvent =
  | { event: "admin"; action: string; team: string; target?: string; outcome: "ok" | "refused" }
  /**
   * A refused admin API request: no token or a wrong one (never any of its text), and the client address it came
   * from (`CF-Connecting-IP`, an IPv6 address by its /64: src/edge/common/address-limit.ts), which an operator can block.
   */
  | { event: "admin_auth"; outcome: "refused"; reason: "no token" | "wrong token"; address: string; route: string }
  /**
   * A client address went over a per-address limit (src/edge/common/address-limit.ts): failed authentications at the MCP
   * endpoint and the admin API, or requests of the OAuth and connect routes. Once per address as it goes over.
   */
  | { event: "throttled"; budget: "failed_auth" | "oauth"; address: string; route: string }
  /** `principal`: who the session acts for, `t:<token id>` or `u:<user id>` (src/session/state.ts principalOf). */
  | { event: "tool_call"; team: string; session: string; principal: string; upstream: string; tool: string; ms: number; outcome: "ok" | "tool_error" | "failed" }
  | { event: "load_mcp"; team: string; session: string; principal: string; upstream: string; ms: number; outcome: "ok" | "failed" | "evicted" }
  /** One code-mode program run: how long, how many tool calls, and how it ended (never its code, arguments or output). */
  | { event: "execute"; team: string; session: string; principal: string; ms: number; calls: number; outcome: string }
  /**
   * One entry of the team's audit trail, as the trail keeps it (its fields: src/views/audit-entry.ts, README "Audit
   * trail"), with its team: a tool call, a load, an approval or an admin action. `at` is when the call started.
   */
  | ({ event: "audit"; team: string } & AuditEntry)
  | { event: "pin_withheld"; team: string; upstream: string; tool: string }
  /**
   * A tool whose inputSchema is no JSON Schema the proxy can check arguments against (src/views/argument-check.ts): its
   * calls go through unchecked. Once per schema and isolate; the reason names the schema's faults, never an argument.
   */
  | { event: "schema_unchecked"; team: string; upstream: string; tool: string; reason: string }
  /**
   * The search's semantic stage could not answer as set (src/views/semantic-stage.ts): `workers-ai` with no AI binding
   * (the static model answers; once per isolate), or an embedder that failed (that search is BM25F alone). Never the
   * query or a tool's text.
   */
  | { event: "semantic_search"; stage: "static" | "workers-ai"; outcome: "static_instead" | "words_only"; reason: string }
  /**
   * A principal at MAX_SESSIONS_PER_PRINCIPAL started another session: its least recently used idle session ended for
   * it (`session`: that one's id prefix), or, every one in use, the new one was refused.
   */
  | { event: "session_limit"; team: string; principal: string; outcome: "ended_idle" | "refused"; session?: string }
  /**
   * The semantic search's durable vector cache (src/store/vector-cache.ts) could not be read or written: the vectors
   * are made again. Names the team, the model and what failed; never a text, a digest or a vector.
   */
  | { event: "vector_cache"; team: string; model: string; action: "read" | "write"; reason: string }
  | { event: "misconfigured"; reason: string }
  | { event: "unhandled"; error: string }
  | { event: "dashboard"; action: "sign_in" | "sign_out"; team?: string; user?: string }
  /** A refusal of a team's OAuth server: the library's stable category and reason only (never a token or client secret). */
  | { event: "oauth_error"; team: string; code: string; category: string; reason: string; status: number }
  /**
   * A code or refresh token of the team's OAuth server used a second time (src/edge/oauth/token-endpoint.ts): which kind,
   * how it was told (the refresh token a rotation replaced, a code already exchanged, two overlapping uses), and whose
   * grant was revoked for it (the pseudonymous user id; never the secret).
   */
  | { event: "oauth_reuse"; team: string; kind: "authorization_code" | "refresh_token"; reason: "superseded" | "exchanged" | "overlapping"; user: string; outcome: "grant_revoked" }
  /**
   * A member's sign-in through the team's identity provider: its outcome, the pseudonymous user id when known (never
   * an email, a code or a token), the OAuth client, and the reason of a refusal.
   */
  | { event: "sign_in"; team: string; outcome: "ok" | "refused" | "failed"; user?: string; client?: string; reason?: string; groups_dropped?: number }
  /** A member's grant refreshed against the team's provider and rules (src/edge/oauth/grant-refresh.ts): only refusals and failures are logged. */
  | { event: "grant_refresh"; team: string; user: string; outcome: "refused" | "failed"; reason: string }
  /** An OAuth upstream's connect or token refresh: its outcome and reason (never a token, code or secret). */
  | { event: "upstream_oauth"; team: string; upstream: string; action: "connect" | "refresh" | "disconnect"; outcome: "ok" | "refused" | "failed"; account?: string; reason?: string };

/**
 * The per-call lines of a session (one per `use_tool` and per `load_mcp`) are written just after the answer they
 * describe has gone on its way rather than before: writing a console line is not free (under `wrangler dev` each
 * one also crosses to the inspector and wrangler's terminal, milliseconds per line), and it need not hold up the
 * answer. They are built (and timed) when logged, written in order on the next turn of the event loop, and any
 * other line first writes those still waiting, so the order of lines is the order of events.
 */
const AFTER_THE_ANSWER = new Set<LogEvent["event"]>(["tool_call", "load_mcp", "execute", "audit"]);
const waiting: string[] = [];
let scheduled = false;

function writeWaiting(): void {
  scheduled = false;
  for (const line of waiting.splice(0)) console.log(line);
}

/** One line per event; a misconfiguration or an unhandled error is logged at the error level. */
export function log(entry: LogEvent): void {
  const line = JSON.stringify({ at: new Date().toISOString(), ...entry });
  if (AFTER_THE_ANSWER.has(entry.event)) {
    waiting.push(line);
    if (!scheduled) {
      scheduled = true;
      setTimeout(writeWaiting, 0);
    }
    return;
  }
  writeWaiting();
  if (entry.event === "misconfigured" || entry.event === "unhandled") console.error(line);
  else console.log(line);
}
