// discover_tool's search: one index per upstream catalog, built the first time it is searched and kept for as long
// as that catalog is the one the session shows (a refreshed catalog is a new object, so it gets a new index), and
// every loaded upstream's index searched together (src/catalog/search.ts ranks).
import type { ReadyUpstream, UpstreamCatalog } from "../catalog/catalog.ts";
import type { ConfigMode } from "../config/validate.ts";
import { exposedName } from "../catalog/names.ts";
import { indexTools, searchTools, type SearchHit, type ToolIndex } from "../catalog/search.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";

const indexes = new WeakMap<UpstreamCatalog, ToolIndex>();

function indexOf(mode: ConfigMode, upstream: string, catalog: UpstreamCatalog, serverDescription: string | undefined): ToolIndex {
  let index = indexes.get(catalog);
  if (!index) {
    index = indexTools(
      catalog.tools.map((tool) => ({
        name: exposedName(mode, upstream, tool.name),
        server: upstream,
        serverDescription,
        tool: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
      })),
    );
    indexes.set(catalog, index);
  }
  return index;
}

/** The loaded upstreams' tools that best match `query`, best first (lazy servers join once loaded). */
export function searchCatalog(registry: UpstreamRegistry, query: string, options: { limit?: number | undefined; server?: string | undefined }): SearchHit[] {
  const ready = registry.ready().filter((u) => options.server === undefined || u.name === options.server);
  return searchUpstreams(registry.mode, ready, (name) => registry.description(name), query, options.limit);
}

/** The given upstreams' tools that best match `query`, best first: discover_tool's ranking over any set of catalogs. */
export function searchUpstreams(
  mode: ConfigMode,
  ready: readonly ReadyUpstream[],
  description: (server: string) => string | undefined,
  query: string,
  limit?: number | undefined,
): SearchHit[] {
  const all = ready.map((u) => indexOf(mode, u.name, u.catalog, description(u.name)));
  return searchTools(all, query, { ...(limit === undefined ? {} : { limit }) });
}
