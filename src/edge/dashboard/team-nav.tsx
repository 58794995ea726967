// The links between a team's pages: the overview, its upstreams, tools, policies, audit trail, members and tokens (each page
// marks itself current).
import { teamPath } from "./team-list-page.tsx";

export type TeamPage = "overview" | "upstreams" | "tools" | "policies" | "audit" | "members";

const PAGES: Array<{ page: TeamPage; label: string; suffix: string }> = [
  { page: "overview", label: "Overview", suffix: "" },
  { page: "upstreams", label: "Upstreams", suffix: "/upstreams" },
  { page: "tools", label: "Tools", suffix: "/tools" },
  { page: "policies", label: "Policies", suffix: "/policies" },
  { page: "audit", label: "Audit trail", suffix: "/audit" },
  { page: "members", label: "Members and tokens", suffix: "/members" },
];

export function TeamNav({ team, current }: { team: string; current: TeamPage }) {
  return (
    <nav aria-label={`Team ${team}`} class="team-nav">
      <a href="/dashboard">All teams</a>
      {PAGES.map((p) => (
        <a href={`${teamPath(team)}${p.suffix}`} aria-current={p.page === current ? "page" : undefined}>
          {p.label}
        </a>
      ))}
    </nav>
  );
}
