// A team's audit trail, in its index object's SQLite storage: one row per entry (the entry as JSON, beside the columns
// the filters read), idempotent by the entry's id so that a batch a session sends again adds nothing twice. Entries
// older than the team's `audit.days` are deleted as new ones come, a bounded number per batch. Read newest first,
// filtered, a page at a time (src/team/audit-query.ts).
import { logUnreadable } from "../config/keys.ts";
import type { AuditPage, AuditQuery, AuditServerFigures, AuditSummary } from "../lib/env.ts";
import { readAuditEntry } from "../views/audit-entry.ts";
import { encodeAuditCursor, toolFilter } from "./audit-query.ts";

/** Expired entries deleted per batch written: the work of one write stays bounded whatever the backlog. */
const EXPIRED_PER_PASS = 500;
const DAY_MS = 86_400_000;
/**
 * The outcomes a summary does not count as errors: the call succeeded, or it was not made because a policy, a person
 * (approval) or the host said no. Every other outcome (`tool_error`, an upstream's fault, the proxy's) is an error.
 */
const NOT_ERROR_OUTCOMES = new Set(["ok", "denied", "refused", "cancelled"]);
const NOT_ERRORS = `(${[...NOT_ERROR_OUTCOMES].map((o) => `'${o}'`).join(", ")})`;
/** The tool calls at or after a time; the kind is read from the entry (the table has no column for it). */
const CALLS_SINCE = "FROM audit_entries WHERE at >= ? AND json_extract(entry, '$.kind') = 'tool_call'";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_entries (
  id TEXT PRIMARY KEY,
  at INTEGER NOT NULL,
  principal_id TEXT NOT NULL,
  principal_label TEXT,
  principal_email TEXT,
  tool TEXT NOT NULL,
  outcome TEXT NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit_entries (at, id);
CREATE INDEX IF NOT EXISTS audit_by_principal ON audit_entries (principal_id, at);
CREATE INDEX IF NOT EXISTS audit_by_label ON audit_entries (principal_label, at);
CREATE INDEX IF NOT EXISTS audit_by_email ON audit_entries (principal_email, at);
CREATE INDEX IF NOT EXISTS audit_by_tool ON audit_entries (tool, at);
CREATE INDEX IF NOT EXISTS audit_by_outcome ON audit_entries (outcome, at);
`;

type SqlValue = string | number | null;

export class AuditTrail {
  readonly #storage: DurableObjectStorage;
  #ready = false;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  get #sql(): SqlStorage {
    if (!this.#ready) {
      this.#storage.sql.exec(SCHEMA);
      this.#ready = true;
    }
    return this.#storage.sql;
  }

  /**
   * Adds the entries that parse and are new (by id); then, when `days` is given, deletes some of those past it (an
   * admin action, which does not read the team's config, deletes none). Answers how many were new.
   */
  append(entries: readonly unknown[], days: number | undefined, now = Date.now()): number {
    const sql = this.#sql;
    let added = 0;
    this.#storage.transactionSync(() => {
      for (const value of entries) {
        const entry = readAuditEntry(value);
        // A session sends entries it wrote through the same schema: one that does not parse is a bug, logged once.
        if (!entry) {
          logUnreadable("audit entry", "(sent by a session)");
          continue;
        }
        const { id, principal, tool, outcome } = entry;
        const row = [id, Date.parse(entry.at), principal.id, principal.label ?? null, principal.email ?? null, tool, outcome, JSON.stringify(entry)];
        added += sql.exec("INSERT OR IGNORE INTO audit_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", ...row).toArray().length;
      }
      if (days === undefined) return;
      const cutoff = now - Math.max(1, days) * DAY_MS;
      sql.exec(
        "DELETE FROM audit_entries WHERE id IN (SELECT id FROM audit_entries WHERE at < ? ORDER BY at LIMIT ?)",
        cutoff,
        EXPIRED_PER_PASS,
      );
    });
    return added;
  }

  /** One page, newest first, and the cursor of the next when there may be more. */
  read(query: AuditQuery): AuditPage {
    const where: string[] = [];
    const values: SqlValue[] = [];
    const add = (clause: string, ...bound: SqlValue[]) => {
      where.push(clause);
      values.push(...bound);
    };
    if (query.since !== undefined) add("at >= ?", query.since);
    if (query.until !== undefined) add("at < ?", query.until);
    if (query.principal !== undefined) add("(principal_id = ? OR principal_label = ? OR principal_email = ?)", query.principal, query.principal, query.principal);
    if (query.tool !== undefined) {
      const tool = toolFilter(query.tool);
      // `server/*`: the server's loads (tool = server) and its tools (between `server/` and `server0`, '0' following '/').
      if ("exact" in tool) add("tool = ?", tool.exact);
      else add("(tool = ? OR (tool >= ? AND tool < ?))", tool.server, `${tool.server}/`, `${tool.server}0`);
    }
    if (query.outcome !== undefined) add("outcome = ?", query.outcome);
    if (query.cursor) add("(at < ? OR (at = ? AND id < ?))", query.cursor.at, query.cursor.at, query.cursor.id);
    const text = `SELECT id, at, entry FROM audit_entries ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY at DESC, id DESC LIMIT ?`;
    const rows = this.#sql.exec<{ id: string; at: number; entry: string }>(text, ...values, query.limit + 1).toArray();
    const page = rows.slice(0, query.limit);
    const entries = page.flatMap((row) => {
      const entry = readAuditEntry(JSON.parse(row.entry));
      if (!entry) logUnreadable("audit entry", row.id);
      return entry ? [entry] : [];
    });
    const last = page.at(-1);
    return { entries, ...(rows.length > query.limit && last ? { next: encodeAuditCursor({ at: last.at, id: last.id }) } : {}) };
  }

  /** The tool calls at or after `since` counted per UTC day (oldest first) and by tool (the `top` most called). */
  summary(since: number, top: number): AuditSummary {
    const sql = this.#sql;
    const counts = `COUNT(*) AS calls, SUM(outcome NOT IN ${NOT_ERRORS}) AS errors`;
    const days = sql
      .exec<{ day: string; calls: number; errors: number }>(`SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day, ${counts} ${CALLS_SINCE} GROUP BY day ORDER BY day`, since)
      .toArray();
    const tools = sql
      .exec<{ tool: string; calls: number; errors: number }>(`SELECT tool, ${counts} ${CALLS_SINCE} GROUP BY tool ORDER BY calls DESC, tool LIMIT ?`, since, top)
      .toArray();
    return { days, tools };
  }

  /**
   * The tool calls at or after `since` per server, by name. The durations are read sorted, one column per call: an
   * index object's window of calls, bounded by the trail's retention.
   */
  servers(since: number): AuditServerFigures[] {
    const server = "CASE WHEN instr(tool, '/') > 0 THEN substr(tool, 1, instr(tool, '/') - 1) ELSE tool END";
    const rows = this.#sql
      .exec<{ server: string; outcome: string; at: number; ms: number }>(
        `SELECT ${server} AS server, outcome, at, CAST(json_extract(entry, '$.ms') AS INTEGER) AS ms ${CALLS_SINCE} ORDER BY server, ms`,
        since,
      )
      .toArray();
    const figures = new Map<string, { outcomes: Record<string, number>; ms: number[]; lastError?: { outcome: string; at: number } }>();
    for (const row of rows) {
      const one = figures.get(row.server) ?? { outcomes: {}, ms: [] };
      one.outcomes[row.outcome] = (one.outcomes[row.outcome] ?? 0) + 1;
      one.ms.push(row.ms);
      if (!NOT_ERROR_OUTCOMES.has(row.outcome) && (!one.lastError || row.at > one.lastError.at)) one.lastError = { outcome: row.outcome, at: row.at };
      figures.set(row.server, one);
    }
    return [...figures].map(([name, f]) => ({ server: name, calls: f.ms.length, outcomes: f.outcomes, p50: nearestRank(f.ms, 0.5), p95: nearestRank(f.ms, 0.95), lastError: f.lastError }));
  }
}

/** The nearest-rank percentile of sorted values (0 for none). */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
