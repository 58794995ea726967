// `npm run team -- audit <team> [--since … --until … --principal … --tool … --outcome … --limit … --ndjson]`: a team's
// audit trail through a running Worker's admin API (the trail is its team index's), newest first, one line per entry
// (or the entries as NDJSON), following the cursor until `--limit` entries (default 100) were printed.
import { AuditParams } from "../../src/team/audit-query.ts";
import type { AuditEntry } from "../../src/views/audit-entry.ts";

/** The options the audit command takes, each with a value. */
export const AUDIT_FLAGS = ["since", "until", "principal", "tool", "outcome", "limit"] as const;
export type AuditFlags = Partial<Record<(typeof AUDIT_FLAGS)[number], string>>;

/** The most entries one page asks for; longer listings follow the cursor. */
const PAGE = 1000;

/** One entry as a line: when, who, what, how it ended, how long, through which view and era. */
export function auditLine(e: AuditEntry): string {
  const who = `${e.principal.kind}:${e.principal.label ?? e.principal.email ?? e.principal.id}`;
  const where = [e.view, e.era, e.client ? `${e.client.name}${e.client.version ? `/${e.client.version}` : ""}` : undefined].filter(Boolean).join(" ");
  return `${e.at}  ${who}  ${e.kind}  ${e.tool}${e.target ? ` ${e.target}` : ""}  ${e.outcome}  ${e.ms}ms${where ? `  ${where}` : ""}`;
}

/**
 * Prints the team's entries. The filters are checked here first (the admin API's own schema), so a typo is a clear
 * error without a round trip; `get` is the admin API (its failures end the command with the API's words).
 */
export async function printAudit(
  team: string,
  flags: AuditFlags,
  ndjson: boolean,
  get: (path: string) => Promise<Response>,
  out: (line: string) => void,
  fail: (message: string) => never,
): Promise<void> {
  const { limit: limitText, ...filters } = flags;
  const checked = AuditParams.safeParse({ ...filters, ...(limitText === undefined ? {} : { limit: limitText }) });
  if (!checked.success) fail(`bad audit options:\n${checked.error.issues.map((i) => `  - --${i.path.join(".")}: ${i.message}`).join("\n")}`);
  let left = checked.data.limit ?? 100;
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ ...filters, limit: String(Math.min(left, PAGE)), ...(cursor ? { cursor } : {}) });
    const page = (await (await get(`/admin/teams/${team}/audit?${query}`)).json()) as { entries: AuditEntry[]; next: string | null };
    for (const entry of page.entries) out(ndjson ? JSON.stringify(entry) : auditLine(entry));
    left -= page.entries.length;
    cursor = page.next ?? undefined;
  } while (cursor && left > 0);
}
