// discover_tool's search: one index per upstream catalog content, shared by every object of the isolate that shows
// that catalog (src/catalog/shared-indexes.ts), built the first time any of them searches it; every loaded upstream's
// index searched together (src/catalog/search.ts ranks). A catalog's index is found by its tools' digests, made where
// the catalog came in (src/catalog/catalog-digest.ts), so a new session's first search reads no tool's text. A tools
// list remembers only its index's key, so an index the isolate pushed out is built again rather than held by one
// session beside the shared copy. With a semantic stage (semantic-stage.ts), the query's meaning is blended in; its
// tool vectors are kept with the shared index.
import type { ReadyUpstream, UpstreamCatalog } from "../catalog/catalog.ts";
import { catalogIndexKey, catalogInputs, shownParts, showsCatalog, type ShownAs } from "../catalog/catalog-index.ts";
import type { ConfigMode } from "../config/validate.ts";
import { judgedSearch, searchTools, type SearchHit, type ToolIndex, type Usefulness } from "../catalog/search.ts";
import { keptIndex, sharedIndex } from "../catalog/shared-indexes.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { queryMeaning, type SearchEmbedder } from "./semantic-stage.ts";

/** Per tools list, its index's key and what it was made under (the same catalog may show under another name). */
const keys = new WeakMap<UpstreamCatalog["tools"], { key: string; made: string; id: number }>();

function indexOf(as: ShownAs, catalog: UpstreamCatalog): ToolIndex {
  const made = JSON.stringify(shownParts(as));
  const known = keys.get(catalog.tools);
  const kept = known?.made === made ? keptIndex(known.key, known.id) : undefined;
  if (kept) return kept.index;
  const key = catalogIndexKey(as, catalog.tools);
  const entry = sharedIndex(key, () => catalogInputs(as, catalog.tools), (index) => showsCatalog(index, as, catalog.tools));
  keys.set(catalog.tools, { key, made, id: entry.id });
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
  return ready.map((u) => indexOf({ mode, server: u.name, description: description(u.name) }, u.catalog));
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
