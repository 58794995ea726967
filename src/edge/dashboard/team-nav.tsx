// The links between a team's pages: the overview, its upstreams, tools, policies, audit trail, members and tokens (each page
// marks itself current), under the scope's base (the operator's /dashboard/teams/<team> or the team's own
// /t/<team>/dashboard); "All teams" only for the operator.
import type { TeamScope } from "./team-scope.ts";

export type TeamPage = "overview" | "upstreams" | "tools" | "policies" | "audit" | "members";

const PAGES: Array<{ page: TeamPage; label: string; suffix: string }> = [
  { page: "overview", label: "Overview", suffix: "" },
  { page: "upstreams", label: "Upstreams", suffix: "/upstreams" },
  { page: "tools", label: "Tools", suffix: "/tools" },
  { page: "policies", label: "Policies", suffix: "/policies" },
  { page: "audit", label: "Audit trail", suffix: "/audit" },
  { page: "members", label: "Members and tokens", suffix: "/members" },
];

export function TeamNav({ scope, current }: { scope: TeamScope; current: TeamPage }) {
  return (
    <nav aria-label={`Team ${scope.team}`} class="team-nav">
      {scope.viewer === "operator" ? <a href="/dashboard">All teams</a> : null}
      {PAGES.map((p) => (
        <a href={`${scope.base}${p.suffix}`} aria-current={p.page === current ? "page" : undefined}>
          {p.label}
        </a>
      ))}
    </nav>
  );
}
