// A team's tools, `/dashboard/teams/<team>/tools`: the team's catalog as a 2026 tools/list renders it at the team's
// budget (discover_tool's description, and what the whole list costs in tokens: src/modern/team-catalog.ts), and a
// search box that runs discover_tool's own search over the same catalogs and shows the ranked hits with their scores.
// Read-only: promoting and pinning tools from here are not built yet (docs/dashboard.md, "Not yet").
import type { SearchHit } from "../../catalog/search.ts";
import type { TeamCatalog } from "../../modern/team-catalog.ts";
import { Layout } from "./layout.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";

const number = (n: number) => n.toLocaleString("en-US");

function Totals({ catalog }: { catalog: TeamCatalog }) {
  const ready = catalog.readings.filter((r) => r.catalog);
  const tools = ready.reduce((sum, r) => sum + (r.catalog?.tools.length ?? 0), 0);
  const item = (name: string, label: string, value: string) => (
    <div class="total">
      <dt>{label}</dt>
      <dd data-total={name}>{value}</dd>
    </div>
  );
  return (
    <dl class="totals">
      {item("tokens", "Tokens of the whole tools/list", number(catalog.fitted.tokens))}
      {item("budget", "The team's budget", number(catalog.budget))}
      {item("level", "Steps down from the whole catalog", String(catalog.fitted.level))}
      {item("servers", "Servers in the catalog", String(ready.length))}
      {item("tools", "Tools in the catalog", number(tools))}
    </dl>
  );
}

function SearchResults({ query, hits }: { query: string; hits: SearchHit[] }) {
  if (hits.length === 0) return <p data-hits="0">{`No tool matches "${query}".`}</p>;
  return (
    <ol class="hits" data-hits={hits.length}>
      {hits.map((hit) => (
        <li data-tool={hit.name}>
          <code>{hit.name}</code> <span class="score" data-score={hit.score}>{`score ${hit.score.toFixed(3)}`}</span>
          {hit.description ? <span class="hint">{` — ${hit.description}`}</span> : null}
        </li>
      ))}
    </ol>
  );
}

export interface ToolsPageProps {
  team: string;
  catalog: TeamCatalog;
  query: string | undefined;
  hits: SearchHit[];
  scope: TeamScope;
}

export function ToolsPage({ team, catalog, query, hits, scope }: ToolsPageProps) {
  const unread = catalog.readings.filter((r) => !r.catalog).map((r) => r.server);
  return (
    <Layout title={`Team ${team}: tools`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="tools" />
      <section aria-labelledby="search-heading">
        <h2 id="search-heading">Search as the agent does</h2>
        <form method="get" action={`${scope.base}/tools`} class="search" role="search">
          <label for="q">What the agent would look for</label>
          <input type="search" id="q" name="q" value={query ?? ""} maxlength={1000} />
          <button type="submit">Search</button>
        </form>
        {query === undefined ? (
          <p class="hint">The ranking is discover_tool's own, over the same catalogs, with its scores.</p>
        ) : (
          <SearchResults query={query} hits={hits} />
        )}
      </section>
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">The catalog as tools/list shows it</h2>
        <Totals catalog={catalog} />
        {unread.length === 0 ? null : (
          <p class="hint">{`Not in the catalog, the team's cache holding no reading of theirs (not read yet, or failing: see Upstreams): ${unread.join(", ")}.`}</p>
        )}
        <p class="hint">
          discover_tool's description, as a 2026 session's tools/list sends it to a host (before any member's policies):
        </p>
        <pre class="catalog" data-catalog="">
          {catalog.fitted.description}
        </pre>
      </section>
    </Layout>
  );
}
