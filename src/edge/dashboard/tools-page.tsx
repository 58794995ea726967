// A team's tools, `/dashboard/teams/<team>/tools`: the team's catalog as a 2026 tools/list renders it at the team's
// budget (discover_tool's description, and what the whole list costs in tokens: src/modern/team-catalog.ts), and a
// search box that runs discover_tool's own search over the same catalogs and shows the ranked hits with their scores.
// Each tool of the catalog and each hit can be promoted (or unpromoted); pinning turned on or off, and a pinned tool's
// changed definition approved (tool-edit-forms.tsx; the routes: config-edit-routes.tsx).
import { exposedName } from "../../catalog/names.ts";
import type { SearchHit } from "../../catalog/search.ts";
import type { TeamCatalog } from "../../modern/team-catalog.ts";
import { Layout } from "./layout.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";
import { PinSection, PromoteButton, PromotedList, type ToolEdits } from "./tool-edit-forms.tsx";

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

function SearchResults({ team, query, hits, edits }: { team: string; query: string; hits: SearchHit[]; edits: ToolEdits }) {
  if (hits.length === 0) return <p data-hits="0">{`No tool matches "${query}".`}</p>;
  return (
    <ol class="hits" data-hits={hits.length}>
      {hits.map((hit) => (
        <li data-tool={hit.name}>
          <code>{hit.name}</code> <span class="score" data-score={hit.score}>{`score ${hit.score.toFixed(3)}`}</span>
          {hit.description ? <span class="hint">{` — ${hit.description}`}</span> : null} <PromoteButton team={team} tool={hit.name} edits={edits} />
        </li>
      ))}
    </ol>
  );
}

/** Every tool of the catalog by the name hosts call it, with its server and whether the list carries it whole. */
const catalogTools = (catalog: TeamCatalog) =>
  catalog.readings.flatMap((r) => (r.catalog?.tools ?? []).map((t) => ({ server: r.server, name: exposedName(catalog.config.mode, r.server, t.name) })));

function CatalogRows({ team, catalog, edits }: { team: string; catalog: TeamCatalog; edits: ToolEdits }) {
  const tools = catalogTools(catalog);
  const whole = new Set(catalog.promoted.map((t) => t.name));
  if (tools.length === 0) return <p>No tool in the catalog yet.</p>;
  return (
    <div class="scroll" role="region" aria-label="The catalog's tools" tabindex={0}>
      <table class="audit">
        <caption>Each tool of the catalog: promote the few an agent uses all the time</caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Server</th>
            <th scope="col">In tools/list</th>
            <th scope="col">Promote</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr data-row={t.name}>
              <td>
                <code>{t.name}</code>
              </td>
              <td>{t.server}</td>
              <td data-whole={String(whole.has(t.name))}>{whole.has(t.name) ? "whole (promoted)" : "in discover_tool's catalog"}</td>
              <td>
                <PromoteButton team={team} tool={t.name} edits={edits} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the request just did, or why it did nothing. */
export type EditOutcome = { notice: string } | { problem: string };

export interface ToolsPageProps {
  team: string;
  catalog: TeamCatalog;
  query: string | undefined;
  hits: SearchHit[];
  edits: ToolEdits;
  outcome?: EditOutcome | undefined;
  scope: TeamScope;
}

export function ToolsPage({ team, catalog, query, hits, edits, outcome, scope }: ToolsPageProps) {
  const unread = catalog.readings.filter((r) => !r.catalog).map((r) => r.server);
  return (
    <Layout title={`Team ${team}: tools`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="tools" />
      {outcome === undefined ? null : "problem" in outcome ? (
        <p role="alert" class="error" data-outcome="problem">
          {outcome.problem}
        </p>
      ) : (
        <p role="status" class="notice" data-outcome="notice">
          {outcome.notice}
        </p>
      )}
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
          <SearchResults team={team} query={query} hits={hits} edits={edits} />
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
        {catalog.promoted.length === 0 ? null : (
          <>
            <p class="hint">And beside the meta-tools, the promoted tools whole, as tools/list carries them:</p>
            <pre class="catalog" data-promoted-tools="">
              {JSON.stringify(catalog.promoted, null, 2)}
            </pre>
          </>
        )}
        <CatalogRows team={team} catalog={catalog} edits={edits} />
      </section>
      <PromotedList team={team} offered={new Set(catalogTools(catalog).map((t) => t.name))} edits={edits} />
      <PinSection team={team} edits={edits} />
    </Layout>
  );
}
