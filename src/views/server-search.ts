// discover_tool's search over the servers not loaded yet (dynamic mode): each lazy server is one entry, its name and
// description ranked as a tool's would be (src/catalog/search.ts). A budget that leaves lazy servers out of the
// catalog says to search: this is where they are found.
import { indexTools, searchTools, type ToolIndex } from "../catalog/search.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";

/** A lazy server that matches a query. */
export interface ServerHit {
  name: string;
  description: string;
  score: number;
}

/** The index of the lazy servers as they were last searched; a load changes the set, so the key is their names. */
const indexes = new WeakMap<UpstreamRegistry, { key: string; index: ToolIndex }>();

/** The lazy servers that best match `query`, best first, at most `limit`; none when the session has none. */
export function searchLazyServers(registry: UpstreamRegistry, query: string, limit: number): ServerHit[] {
  const lazy = registry.loadable();
  if (lazy.length === 0) return [];
  const key = lazy.map((s) => s.name).join("\n");
  let cached = indexes.get(registry);
  if (cached?.key !== key) {
    const index = indexTools(
      lazy.map((spec) => ({ name: spec.name, server: spec.name, serverDescription: spec.description, tool: spec.name, description: spec.description })),
    );
    cached = { key, index };
    indexes.set(registry, cached);
  }
  return searchTools(cached.index, query, { limit })
    .filter((hit) => hit.score > 0)
    .map((hit) => ({ name: hit.name, description: hit.description, score: hit.score }));
}
