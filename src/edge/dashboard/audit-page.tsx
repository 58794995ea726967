// A team's audit trail as a page, `/dashboard/teams/<team>/audit`: the filters of the admin API's audit route as a GET
// form (time, principal, tool, outcome, page size), the page of entries newest first, a link to the next page, and the
// same read as NDJSON for export. The query is the admin API's own (src/team/audit-query.ts): a bad value is named
// beside the form, as the API names it. Never an argument: entries hold none.
import type { AuditEntry } from "../../lib/audit-types.ts";
import { AUDIT_LIMIT } from "../../team/audit-query.ts";
import { Layout } from "./layout.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";

/** The filters as the form shows them again (the raw text the operator typed, so a bad value can be corrected). */
export type AuditFilters = Partial<Record<"since" | "until" | "principal" | "tool" | "outcome" | "limit", string>>;

export const AUDIT_FILTER_KEYS = ["since", "until", "principal", "tool", "outcome", "limit"] as const;

export interface AuditPageProps {
  team: string;
  filters: AuditFilters;
  /** The page's entries, or the problems with the query (nothing was read). */
  read: { entries: AuditEntry[]; next?: string | undefined } | { problems: string[] };
  scope: TeamScope;
}

/** A query string of the filters that are set (and a cursor): the next page's link and the export's. */
export function filterQuery(filters: AuditFilters, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams();
  for (const key of AUDIT_FILTER_KEYS) if (filters[key]) query.set(key, filters[key]!);
  for (const [key, value] of Object.entries(extra)) query.set(key, value);
  const text = query.toString();
  return text ? `?${text}` : "";
}

const LABELS: Record<(typeof AUDIT_FILTER_KEYS)[number], { label: string; hint: string }> = {
  since: { label: "Since", hint: "2026-11-28 or 2026-11-28T16:00:00Z" },
  until: { label: "Until", hint: "a time or a UTC day, not included" },
  principal: { label: "Who", hint: "a token's label or id, a member's email or id" },
  tool: { label: "Tool", hint: "server/tool, server/*, or admin/<action>" },
  outcome: { label: "Outcome", hint: "ok, tool_error, denied, approval_refused, …" },
  limit: { label: "Entries a page", hint: `1–${AUDIT_LIMIT.max}, ${AUDIT_LIMIT.default} by default` },
};

function FilterForm({ action, filters }: { action: string; filters: AuditFilters }) {
  return (
    <form method="get" action={action} class="filters">
      {AUDIT_FILTER_KEYS.map((key) => (
        <label>
          {LABELS[key].label}
          <input type="text" name={key} value={filters[key] ?? ""} placeholder={LABELS[key].hint} />
        </label>
      ))}
      <button type="submit">Filter</button>
    </form>
  );
}

/** Who an entry names: a token's label, a member's email, else the id (or the admin API). */
const who = (entry: AuditEntry): string =>
  entry.principal.kind === "admin" ? "admin API" : (entry.principal.label ?? entry.principal.email ?? `${entry.principal.kind} ${entry.principal.id}`);

function Entries({ entries }: { entries: AuditEntry[] }) {
  if (entries.length === 0) return <p>No entries match.</p>;
  // A wide table scrolls in its own region, which the keyboard can reach (a narrow screen would otherwise hide columns).
  return (
    <div class="scroll" role="region" aria-label="Audit entries" tabindex={0}>
    <table class="audit">
      <thead>
        <tr>
          <th scope="col">When (UTC)</th>
          <th scope="col">Kind</th>
          <th scope="col">Who</th>
          <th scope="col">View · era</th>
          <th scope="col">Tool</th>
          <th scope="col">Outcome</th>
          <th scope="col">ms</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr data-entry={e.id}>
            <td>{e.at.replace("T", " ").replace(/\.\d+Z$/, "")}</td>
            <td>{e.kind}</td>
            <td>{who(e)}</td>
            <td>{[e.view, e.era].filter(Boolean).join(" · ") || "–"}</td>
            <td>{e.target ? `${e.tool} (${e.target})` : e.tool}</td>
            <td data-outcome={e.outcome}>{e.outcome}</td>
            <td>{e.ms}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

export function AuditPage({ team, filters, read, scope }: AuditPageProps) {
  const base = `${scope.base}/audit`;
  return (
    <Layout title={`${team}: audit trail`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="audit" />
      <FilterForm action={base} filters={filters} />
      {"problems" in read ? (
        <ul role="alert" class="problems">
          {read.problems.map((p) => (
            <li>{p}</li>
          ))}
        </ul>
      ) : (
        <>
          <p>
            <a href={`${base}.ndjson${filterQuery(filters)}`}>Export this page as NDJSON</a>
          </p>
          <Entries entries={read.entries} />
          {read.next ? (
            <p>
              <a rel="next" href={`${base}${filterQuery(filters, { cursor: read.next })}`}>
                Older entries
              </a>
            </p>
          ) : null}
        </>
      )}
    </Layout>
  );
}
