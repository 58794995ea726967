// discover_tool's search: one index per upstream catalog content, shared by every object of the isolate that shows
// that catalog (src/catalog/shared-indexes.ts), built the first time any of them searches it; every loaded upstream's
// index searched together (src/catalog/search.ts ranks). A catalog object remembers only its index's key, so an index
// the isolate pushed out is built again rather than held by one session beside the shared copy. With a semantic stage
// (semantic-stage.ts), the query's meaning is blended in; its tool vectors are kept with the shared index.
import type { ReadyUpstream, UpstreamCatalog } from "../catalog/catalog.ts";
import type { ConfigMode } from "../config/validate.ts";
import { exposedName } from "../catalog/names.ts";
import { judgedSearch, searchTools, type SearchHit, type SearchInput, type ToolIndex, type Usefulness } from "../catalog/search.ts";
import { indexKey, keptIndex, sharedIndex } from "../catalog/shared-indexes.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { queryMeaning, type SearchEmbedder } from "./semantic-stage.ts";

/** Per catalog object, its index's key and what it was made under (the same catalog may show under another name). */
const keys = new WeakMap<UpstreamCatalog, { key: string; made: string; id: number }>();

function searchInputs(mode: ConfigMode, upstream: string, catalog: UpstreamCatalog, serverDescription: string | undefined): SearchInput[] {
  return catalog.tools.map((tool) => ({
    name: exposedName(mode, upstream, tool.name),
    server: upstream,
    serverDescription,
    tool: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
}

function indexOf(mode: ConfigMode, upstream: string, catalog: UpstreamCatalog, serverDescription: string | undefined): ToolIndex {
  const made = JSON.stringify([mode, upstream, serverDescription ?? null]);
  const known = keys.get(catalog);
  const same = known?.made === made;
  const kept = same ? keptIndex(known.key, known.id) : undefined;
  if (kept) return kept.index;
  const inputs = searchInputs(mode, upstream, catalog, serverDescription);
  const key = same ? known.key : indexKey(inputs);
  const entry = sharedIndex(key, inputs);
  keys.set(catalog, { key, made, id: entry.id });
  return entry.index;
}

/**
 * The loaded upstreams' tools that best match `query`, best first (lazy servers join once loaded); by words and, with
 * an `embedder` (the team's semantic stage), by meaning; and whether they are worth calling (search-usefulness.ts).
 */
export async function searchCatalog(
  registry: UpstreamRegistry,
  query: string,
  options: { limit?: number | undefined; server?: string | undefined },
  embedder?: SearchEmbedder | undefined,
): Promise<{ hits: SearchHit[]; judged: Usefulness }> {
  const ready = registry.ready().filter((u) => options.server === undefined || u.name === options.server);
  const all = upstreamIndexes(registry.mode, ready, (name) => registry.description(name));
  const meaning = embedder ? await queryMeaning(all, query, embedder) : undefined;
  return judgedSearch(all, query, { ...(options.limit === undefined ? {} : { limit: options.limit }), meaning });
}

/**
 * The given upstreams' tools that best match `query` as a session of the team ranks them (with its semantic stage):
 * the dashboard's search box, the same hits, order and scores as discover_tool's.
 */
export async function searchUpstreamsBy(
  mode: ConfigMode,
  ready: readonly ReadyUpstream[],
  description: (server: string) => string | undefined,
  query: string,
  limit: number | undefined,
  embedder: SearchEmbedder | undefined,
): Promise<SearchHit[]> {
  const all = upstreamIndexes(mode, ready, description);
  const meaning = embedder ? await queryMeaning(all, query, embedder) : undefined;
  return searchTools(all, query, { ...(limit === undefined ? {} : { limit }), meaning });
}

/** The shared index of each given upstream's catalog, in order. */
function upstreamIndexes(mode: ConfigMode, ready: readonly ReadyUpstream[], description: (server: string) => string | undefined): ToolIndex[] {
  return ready.map((u) => indexOf(mode, u.name, u.catalog, description(u.name)));
}

/** The given upstreams' tools that best match `query` by words alone (BM25F), best first, over any set of catalogs. */
export function searchUpstreams(
  mode: ConfigMode,
  ready: readonly ReadyUpstream[],
  description: (server: string) => string | undefined,
  query: string,
  limit?: number | undefined,
): SearchHit[] {
  return searchTools(upstreamIndexes(mode, ready, description), query, { ...(limit === undefined ? {} : { limit }) });
}
