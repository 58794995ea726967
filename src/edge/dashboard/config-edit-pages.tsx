// The tools and policies pages as their routes render them (config-edit-routes.tsx), each from the config as stored
// now and its version (which the page's edit forms carry), after a GET or after an edit with what it did.
import { loadTokenCounter } from "../../catalog/tokenizer.ts";
import { parseConfig, parseStoredConfig, type ConfigIssue } from "../../config/validate.ts";
import { settings } from "../../lib/settings.ts";
import { searchTeamCatalog, teamCatalog } from "../../modern/team-catalog.ts";
import { teamSearchEmbedder } from "../../views/semantic-stage.ts";
import { SearchQuery } from "../../views/schemas.ts";
import { storedConfig } from "../admin/config-write.ts";
import { store } from "../admin/route-context.ts";
import { message, page, type Status } from "./page-answers.tsx";
import { PoliciesPage, type ViewAs } from "./policies-page.tsx";
import { callerView } from "./policy-view.ts";
import type { TeamPagesContext } from "./team-scope.ts";
import { ToolsPage, type EditOutcome } from "./tools-page.tsx";

/** A team whose config key holds no JSON object (its routes checked that it has one). */
const unreadable = (c: TeamPagesContext) =>
  say(c, 200, `Team ${c.var.scope.team}`, "The team's stored config is not a JSON object: store a valid one (`npm run team -- put`, or the admin API) to see or edit it here.");

/** A page that only says something, in the scope's frame. */
const say = (c: TeamPagesContext, status: Status, title: string, text: string) => message(c, status, title, text, c.var.scope.csrf, c.var.scope.home);

/** The stored config's promoted names, as the page lists them (a stored list that is not one lists none). */
const promotedNames = (raw: Record<string, unknown>): string[] =>
  Array.isArray(raw["promote"]) ? raw["promote"].filter((t): t is string => typeof t === "string") : [];

export async function toolsPage(c: TeamPagesContext, status: Status, outcome?: EditOutcome): Promise<Response> {
  const { scope } = c.var;
  const { team } = scope;
  const stored = await storedConfig(c.env, team);
  if (!stored) return unreadable(c);
  const loaded = parseStoredConfig(stored.raw);
  if (!loaded.ok) return say(c, 200, `Team ${team}: tools`, "The team's stored config no longer validates: it has no catalog to show.");
  // An empty box is no search (the page as first opened), not a search that finds nothing.
  const asked = c.req.method === "GET" ? c.req.query("q") : undefined;
  const query = asked === undefined || asked.trim() === "" ? undefined : SearchQuery.safeParse(asked);
  if (query && !query.success) return say(c, 400, "Search too long", "A search is at most 1,000 characters, as discover_tool takes it.");
  const catalog = await teamCatalog(c.env.TEAMS, team, loaded.config, await loadTokenCounter(c.env.ASSETS), settings(c.env).sessionTtlSeconds);
  const hits = query ? await searchTeamCatalog(catalog, query.data, teamSearchEmbedder(c.env, loaded.config.semantic, { team, defer: (work) => c.executionCtx.waitUntil(work) })) : [];
  const waiting = (await store(c).listPins(team)).filter((pin) => pin.pending !== undefined);
  const edits = { version: stored.version, promoted: promotedNames(stored.raw), pinTools: loaded.config.pinTools === true, waiting, csrf: scope.csrf, base: scope.base };
  return page(c, status, <ToolsPage team={team} catalog={catalog} query={query?.data} hits={hits} edits={edits} outcome={outcome} scope={scope} />);
}

/** What a policies page shows besides the stored config: the text as typed and why it was refused, or that it was saved. */
export type PolicyOutcome = { text: string; issues: ConfigIssue[] } | { saved: true };

export async function policiesPage(c: TeamPagesContext, status: Status, outcome?: PolicyOutcome): Promise<Response> {
  const { team } = c.var.scope;
  // One read of the stored config serves the check, the text shown and the catalog viewed.
  const stored = await storedConfig(c.env, team);
  if (!stored) return unreadable(c);
  // The admin API's own validation, its problems with the policies kept.
  const checked = parseConfig(stored.raw);
  const issues = checked.ok ? [] : checked.issues.filter((i) => i.path.startsWith("policies"));
  const policies = stored.raw["policies"];
  const text = (key: string) => (c.req.method === "GET" ? (c.req.query(key) ?? "").trim().slice(0, 320) : "") || undefined;
  const viewAs: ViewAs = { label: text("label"), email: text("email"), groups: text("groups") };
  const labels = [...new Set((await store(c).listTokens(team)).flatMap((t) => (t.label ? [t.label] : [])))].sort();
  const resolved = parseStoredConfig(stored.raw);
  const view = resolved.ok ? await callerView(c.env, team, resolved.config, viewAs) : undefined;
  const written = policies === undefined ? "" : JSON.stringify(policies, null, 2);
  const typed = outcome && "text" in outcome ? outcome : undefined;
  return page(
    c,
    status,
    <PoliciesPage
      team={team}
      written={typed ? typed.text : written}
      version={stored.version}
      issues={typed ? typed.issues : issues}
      refused={typed !== undefined}
      saved={outcome !== undefined && "saved" in outcome}
      labels={labels}
      viewAs={viewAs}
      view={view}
      scope={c.var.scope}
    />,
  );
}
