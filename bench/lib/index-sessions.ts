// The search index as sessions meet it (bench/selection.ts's size table): discover_tool's own path
// (src/views/tool-search.ts) over a team's upstreams, each session with catalog objects of its own as it reads them,
// and the isolate's shared indexes (src/catalog/shared-indexes.ts) between them. Also: how long the indexes take to
// read back from their stored bytes, what a store beside the catalog cache would cost a cold isolate instead of a build.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ReadyUpstream, UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { readToolIndex, toolIndexBytes, type ToolIndex } from "../../src/catalog/search.ts";
import { clearSharedIndexes } from "../../src/catalog/shared-indexes.ts";
import { searchUpstreams } from "../../src/views/tool-search.ts";
import { median } from "./results.ts";

export interface SessionTimes {
  /** The first session's first search: every upstream's index built (ms). */
  firstBuildMs: number;
  /** A new session's first search, the team's indexes built by an earlier one (median ms). */
  newSessionMs: number;
  /** A session's later searches (median ms). */
  warmMs: number;
  /** Every upstream's index read back from its stored bytes, checked (ms; median of runs). */
  loadMs: number;
}

/** One session's upstreams: catalogs as fresh objects (copied outside the timing). */
function session(team: ReadonlyArray<{ name: string; tools: Tool[] }>): ReadyUpstream[] {
  return team.map((u) => {
    const catalog: UpstreamCatalog = { capabilities: {}, tools: structuredClone(u.tools) as unknown as UpstreamCatalog["tools"], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    return { name: u.name, catalog };
  });
}

function timed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** The figures for one team over `queries` (the first `sessions` queries open a session each). */
export function sessionTimes(team: ReadonlyArray<{ name: string; description: string | undefined; tools: Tool[] }>, queries: readonly string[], indexes: readonly ToolIndex[], sessions = 5): SessionTimes {
  const describe = new Map(team.map((u) => [u.name, u.description]));
  const search = (ready: readonly ReadyUpstream[], q: string) => searchUpstreams("multi", ready, (s) => describe.get(s), q, 8);
  clearSharedIndexes(Number.MAX_SAFE_INTEGER);
  const first = session(team);
  const firstBuildMs = timed(() => search(first, queries[0] ?? "list"));
  const fresh = Array.from({ length: sessions }, () => session(team));
  const newSessionMs = median(fresh.map((s, k) => timed(() => search(s, queries[k % queries.length] ?? "list"))));
  const warmMs = median(queries.map((q) => timed(() => search(first, q))));
  const stored = indexes.map(toolIndexBytes);
  const loadMs = median([0, 1, 2].map(() => timed(() => stored.forEach((b) => readToolIndex(b)))));
  clearSharedIndexes();
  return { firstBuildMs, newSessionMs, warmMs, loadMs };
}
