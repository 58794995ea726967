// The search index as sessions meet it (bench/selection.ts's size table): discover_tool's own path
// (src/views/tool-search.ts) over a team's upstreams, each session with catalog objects of its own as it reads them
// from the team's catalog cache (src/store/catalog-cache.ts, over an in-memory KV), and the isolate's shared indexes
// (src/catalog/shared-indexes.ts) between them. Also: how long the indexes take to
// read back from their stored bytes, what a store beside the catalog cache would cost a cold isolate instead of a build.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ReadyUpstream, UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { readToolIndex, toolIndexBytes, type ToolIndex } from "../../src/catalog/search.ts";
import { clearSharedIndexes } from "../../src/catalog/shared-indexes.ts";
import { handOnDigests } from "../../src/catalog/catalog-digest.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { kvCatalogCache } from "../../src/store/catalog-cache.ts";
import type { KvLike } from "../../src/store/kv.ts";
import { applyToolPolicy } from "../../src/upstream/policy.ts";
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
  /**
   * An isolate with no index, its catalogs' entries carrying their stored indexes: reading every entry with its index
   * taken (ms), then the first search (ms, nothing built).
   */
  stored: { readMs: number; firstSearchMs: number };
}

type TeamUpstream = { name: string; description: string | undefined; tools: Tool[] };

/** The upstream's config entry: its description is the one the search shows it with, as a session's registry does. */
const specOf = (u: TeamUpstream) =>
  ({ name: u.name, description: u.description, transport: "streamable-http", url: `https://${u.name}.example/mcp`, headers: {}, timeout: 5_000 }) as UpstreamSpec;

/** The team's catalogs written to its catalog cache (in an in-memory KV), as the first object to read them does. */
async function storedTeam(team: readonly TeamUpstream[]): Promise<KvLike> {
  const values = new Map<string, string>();
  const kv: KvLike = { get: async (k) => values.get(k) ?? null, put: async (k, v) => void values.set(k, v), delete: async (k) => void values.delete(k), list: async () => [] };
  const cache = kvCatalogCache(kv, "bench", { searchMode: "multi" });
  for (const u of team) {
    const catalog: UpstreamCatalog = { capabilities: {}, tools: structuredClone(u.tools) as unknown as UpstreamCatalog["tools"], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    await cache.put(specOf(u), catalog, Date.now());
  }
  return kv;
}

/**
 * One session's upstreams as a session shows them: each catalog read from the team's catalog cache (fresh objects,
 * with the digests the entry carries), then the team's filters and safe text, as the registry's policy does
 * (outside the timing).
 */
async function session(kv: KvLike, team: readonly TeamUpstream[], searchMode?: "multi"): Promise<ReadyUpstream[]> {
  const cache = kvCatalogCache(kv, "bench", searchMode ? { searchMode } : {});
  return Promise.all(
    team.map(async (u) => {
      const cached = (await cache.get(specOf(u)))!;
      return { name: u.name, catalog: handOnDigests(cached, applyToolPolicy(specOf(u), cached)) };
    }),
  );
}

function timed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** The figures for one team over `queries` (the first `sessions` queries open a session each). */
export async function sessionTimes(team: readonly TeamUpstream[], queries: readonly string[], indexes: readonly ToolIndex[], sessions = 5): Promise<SessionTimes> {
  const describe = new Map(team.map((u) => [u.name, u.description]));
  const search = (ready: readonly ReadyUpstream[], q: string) => searchUpstreams("multi", ready, (s) => describe.get(s), q, 8);
  const kv = await storedTeam(team);
  // The writer built every index to store it: the first session's first search starts from none.
  clearSharedIndexes(Number.MAX_SAFE_INTEGER);
  const first = await session(kv, team);
  const firstBuildMs = timed(() => search(first, queries[0] ?? "list"));
  const fresh: ReadyUpstream[][] = [];
  for (let k = 0; k < sessions; k++) fresh.push(await session(kv, team));
  const newSessionMs = median(fresh.map((s, k) => timed(() => search(s, queries[k % queries.length] ?? "list"))));
  const warmMs = median(queries.map((q) => timed(() => search(first, q))));
  const stored = indexes.map(toolIndexBytes);
  const loadMs = median([0, 1, 2].map(() => timed(() => stored.forEach((b) => readToolIndex(b)))));
  clearSharedIndexes(Number.MAX_SAFE_INTEGER);
  const start = performance.now();
  const cold = await session(kv, team, "multi");
  const readMs = performance.now() - start;
  const firstSearchMs = timed(() => search(cold, queries[0] ?? "list"));
  clearSharedIndexes();
  return { firstBuildMs, newSessionMs, warmMs, loadMs, stored: { readMs, firstSearchMs } };
}
