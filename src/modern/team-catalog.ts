// A team's catalog as a 2026 tools/list shows it, read outside any object (the dashboard's tools page): each eager
// server's latest catalog from the team's catalog cache (the reading the 2026 era's objects share, taken with the
// capabilities that era declares), the config's promoted tools whole beside the meta-tools, through the team's tool filters and pins, fitted to the team's budget with the
// era's own meta-tool definitions and wording (tool-list.ts). Without a subject it is the team's catalog before any
// caller's policies; with one (the dashboard's "view as"), that caller's, filtered as their own objects filter it
// (src/upstream/caller-catalog.ts). A server with no reading in the cache is left out, as a list leaves out one not tried
// yet, and named. The same catalogs serve discover_tool's search (views/tool-search.ts).
import type { Tool } from "@modelcontextprotocol/server";
import type { FittedCatalog } from "../catalog/budget.ts";
import type { CatalogGroup, CatalogView, ReadyUpstream, UpstreamCatalog } from "../catalog/catalog.ts";
import { LIST_WORDING } from "../catalog/render.ts";
import type { SearchHit } from "../catalog/search.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import type { Subject } from "../config/subject.ts";
import { toolAccess } from "../config/tool-access.ts";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { modernHost } from "../relay/bridge.ts";
import { bindingKv } from "../store/binding-kv.ts";
import { kvCatalogCache } from "../store/catalog-cache.ts";
import type { KvLike } from "../store/kv.ts";
import { checkPins } from "../store/pins.ts";
import { relayedCapabilities } from "../upstream/client.ts";
import { callerCatalog } from "../upstream/caller-catalog.ts";
import { applyToolPolicy } from "../upstream/policy.ts";
import { handOnDigests } from "../catalog/catalog-digest.ts";
import { isLazy } from "../upstream/records.ts";
import { exposedName } from "../catalog/names.ts";
import { META_NAMES, modernDefinitions } from "../views/definitions.ts";
import { fitBesidePromoted } from "../views/tool-list.ts";
import type { SearchEmbedder } from "../views/semantic-stage.ts";
import { searchUpstreamsBy } from "../views/tool-search.ts";

/** One eager server's reading: its catalog as the team shows it and when the team last read it, or none yet. */
export type ServerReading = { server: string; catalog: UpstreamCatalog; checkedAt: number } | { server: string; catalog: undefined };

export interface TeamCatalog {
  config: ResolvedConfig;
  readings: ServerReading[];
  /** The catalog view a 2026 tools/list of the team renders. */
  view: CatalogView;
  fitted: FittedCatalog;
  budget: number;
  /** The promoted tools the list carries whole, by the names hosts call them (those it had room for). */
  promoted: Tool[];
}

/** The config's promoted tools the readings offer, whole, under the names hosts call them (as a session's registry finds them). */
function promotedOf(config: ResolvedConfig, readings: readonly ServerReading[]): Tool[] {
  const offered = new Map(readings.flatMap((r) => (r.catalog?.tools ?? []).map((t) => [exposedName(config.mode, r.server, t.name), t] as const)));
  return (config.promote ?? []).flatMap((name) => {
    const found = META_NAMES.has(name) ? undefined : offered.get(name);
    return found ? [{ ...found, name }] : [];
  });
}

/** The team's filters and (when it pins) its pinned definitions only, as a session's policy keeps a catalog. */
async function teamShown(kv: KvLike, team: string, config: ResolvedConfig, spec: UpstreamSpec, catalog: UpstreamCatalog): Promise<UpstreamCatalog> {
  const visible = applyToolPolicy(spec, catalog);
  if (!config.pinTools) return visible;
  return { ...visible, tools: (await checkPins(kv, team, spec.name, visible.tools)).allowed };
}

/**
 * Each eager server's latest reading in the team's catalog cache, in config order; with a subject, as that caller
 * sees it (a server it may not see at all is left out).
 */
export async function teamReadings(kvNamespace: KVNamespace, team: string, config: ResolvedConfig, subject?: Subject): Promise<ServerReading[]> {
  const kv = bindingKv(kvNamespace);
  const cache = kvCatalogCache(kv, team, { capabilities: () => relayedCapabilities(modernHost().capabilities()), searchMode: config.mode });
  const eager = config.upstreams.filter((spec) => !isLazy(spec));
  const access = subject && toolAccess(config, subject);
  const readings = await Promise.all(
    eager.map(async (spec): Promise<ServerReading> => {
      const reading = await cache.latest(spec);
      if (!reading.newer) return { server: spec.name, catalog: undefined };
      const shown = await teamShown(kv, team, config, spec, reading.newer);
      const catalog = handOnDigests(reading.newer, access ? callerCatalog(access, config.mode, spec.name, shown) : shown);
      return { server: spec.name, catalog, checkedAt: reading.checkedAt ?? 0 };
    }),
  );
  return readings.filter((r) => r.catalog?.hiddenFromCaller !== true);
}

/** The catalog view of the readings: the ready servers in config order, the lazy ones as loadable. */
function viewOf(config: ResolvedConfig, readings: readonly ServerReading[], subject?: Subject): CatalogView {
  const groups: CatalogGroup[] = readings.flatMap((r) => {
    if (!r.catalog) return [];
    const description = config.upstreams.find((u) => u.name === r.server)?.description;
    return [{ server: r.server, state: "ready" as const, tools: r.catalog.tools, description }];
  });
  for (const entry of config.invalid ?? []) groups.push({ server: entry.name, state: "unavailable", reason: `invalid config entry: ${entry.reason}` });
  const access = subject && toolAccess(config, subject);
  const lazy = config.upstreams
    .filter((spec) => isLazy(spec) && !access?.serverHidden(spec.name, []))
    .map((spec) => ({ name: spec.name, description: spec.description ?? "" }));
  return { mode: config.mode, groups, lazy, dynamic: lazy.length > 0 };
}

/** The team's 2026 tools/list: discover_tool's description at the team's budget, and what the whole list costs. */
export async function teamCatalog(
  kv: KVNamespace,
  team: string,
  config: ResolvedConfig,
  counter: TokenCounter,
  handleLifetimeSeconds: number,
  subject?: Subject,
): Promise<TeamCatalog> {
  const readings = await teamReadings(kv, team, config, subject);
  const view = viewOf(config, readings, subject);
  const { discover, rest } = modernDefinitions(handleLifetimeSeconds);
  const { tools, fitted } = fitBesidePromoted(view, config.catalogBudget, discover, rest, promotedOf(config, readings), counter, LIST_WORDING);
  return { config, readings, view, fitted, budget: config.catalogBudget, promoted: tools.slice(1 + rest.length) };
}

/** discover_tool's search over the team's catalog: the same ranking (with the team's semantic stage), the same catalogs. */
export function searchTeamCatalog(catalog: TeamCatalog, query: string, semantic: SearchEmbedder | undefined, limit?: number): Promise<SearchHit[]> {
  const ready: ReadyUpstream[] = catalog.readings.flatMap((r) => (r.catalog ? [{ name: r.server, catalog: r.catalog }] : []));
  const description = (server: string) => catalog.config.upstreams.find((u) => u.name === server)?.description;
  return searchUpstreamsBy(catalog.config.mode, ready, description, query, limit, semantic);
}
