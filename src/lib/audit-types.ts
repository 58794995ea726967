// The audit trail's shapes as the team index's RPC types them (src/lib/env.ts): plain types, importing nothing, so
// that the CLI and the Worker share them. Their zod schemas, checked against these at compile time:
// src/views/audit-entry.ts (the entry) and src/team/audit-query.ts (the query and its cursor).

/**
 * One entry of a team's audit trail: who called what, through which view and era, how it ended, how long it took and
 * how many bytes passed (the zod schema and what each field means: src/views/audit-entry.ts, README "Audit trail").
 * Never arguments, results or secrets: at most a SHA-256 of the arguments, when the team asked for it.
 */
export interface AuditEntry {
  id: string;
  at: string;
  kind: "tool_call" | "load" | "approval" | "admin";
  principal: { kind: "token" | "member" | "admin"; id: string; label?: string | undefined; email?: string | undefined };
  client?: { name: string; version?: string | undefined } | undefined;
  view?: "meta" | "direct" | "code" | undefined;
  era?: "2025" | "2026" | undefined;
  tool: string;
  target?: string | undefined;
  outcome: string;
  ms: number;
  request_bytes: number;
  answer_bytes: number;
  traceparent?: string | undefined;
  arguments_sha256?: string | undefined;
}

/** A read of a team's audit trail: newest first, filtered, one page (src/team/audit-query.ts). */
export interface AuditQuery {
  since?: number | undefined;
  until?: number | undefined;
  principal?: string | undefined;
  tool?: string | undefined;
  outcome?: string | undefined;
  limit: number;
  cursor?: { at: number; id: string } | undefined;
}

/** One page of a team's audit trail, and where the next begins (absent: no more). */
export interface AuditPage {
  entries: AuditEntry[];
  next?: string | undefined;
}

/**
 * The tool calls of a team's audit trail since a time, counted (src/team/audit-trail.ts `summary`): per UTC day, and
 * the tools called most. `errors`: calls that ended in neither `ok` nor a refusal by policy, approval or the host.
 */
export interface AuditSummary {
  days: Array<{ day: string; calls: number; errors: number }>;
  tools: Array<{ tool: string; calls: number; errors: number }>;
}

/**
 * The tool calls of a team's audit trail since a time, per server (the part of the tool's name before its first `/`;
 * src/team/audit-trail.ts `servers`): how many, how they ended, their durations' p50 and p95 (nearest rank, ms), and
 * the last one that failed.
 */
export interface AuditServerFigures {
  server: string;
  calls: number;
  outcomes: Record<string, number>;
  p50: number;
  p95: number;
  lastError?: { outcome: string; at: number } | undefined;
}
