// A catalog's search index stored in its catalog cache entry (src/store/stored-index.ts): written with the catalog,
// taken by an isolate that has no index of it (no build at its first search), and never trusted: a stored index of
// another version, of a broken shape, of another key or of other tools is refused and the search builds the index.
import { beforeEach, describe, expect, it } from "vitest";
import { loadCorpus } from "../../harness/replay-server.ts";
import type { ReadyUpstream, UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { handOnDigests } from "../../src/catalog/catalog-digest.ts";
import { clearSharedIndexes, sharedIndexBuilds, sharedIndexLoads } from "../../src/catalog/shared-indexes.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { base64url, fromBase64url } from "../../src/lib/bytes.ts";
import { kvCatalogCache } from "../../src/store/catalog-cache.ts";
import type { KvLike } from "../../src/store/kv.ts";
import { applyToolPolicy } from "../../src/upstream/policy.ts";
import { searchUpstreams } from "../../src/views/tool-search.ts";

const SERVERS: Array<[string, string]> = [
  ["gitlab", "zereight__mcp-gitlab"],
  ["kubernetes", "mcp-server-kubernetes"],
  ["azure", "azure-devops__mcp"],
];
const spec = (name: string) => ({ name, description: `The ${name} server.`, transport: "streamable-http", url: `https://${name}.example/mcp`, headers: {}, timeout: 5_000 }) as UpstreamSpec;
const QUERY = "list merge requests";

function memoryKv(): KvLike & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return { values, get: async (k) => values.get(k) ?? null, put: async (k, v) => void values.set(k, v), delete: async (k) => void values.delete(k), list: async () => [] };
}

/** The team's catalogs written by an object whose config names tools in multi mode. */
async function written(): Promise<KvLike & { values: Map<string, string> }> {
  const kv = memoryKv();
  const cache = kvCatalogCache(kv, "t", { searchMode: "multi" });
  for (const [name, file] of SERVERS) {
    const catalog: UpstreamCatalog = { capabilities: {}, tools: structuredClone(loadCorpus(file).tools) as UpstreamCatalog["tools"], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    await cache.put(spec(name), catalog, Date.now());
  }
  return kv;
}

/** A new session's catalogs as it reads them from the team's cache (the registry's policy: filters and safe text). */
async function session(kv: KvLike): Promise<ReadyUpstream[]> {
  const cache = kvCatalogCache(kv, "t", { searchMode: "multi" });
  return Promise.all(
    SERVERS.map(async ([name]) => {
      const cached = (await cache.get(spec(name)))!;
      return { name, catalog: handOnDigests(cached, applyToolPolicy(spec(name), cached)) };
    }),
  );
}

const search = (ready: readonly ReadyUpstream[]) => searchUpstreams("multi", ready, (s) => spec(s).description, QUERY, 8);

/** Rewrites the stored index of `server`'s entry. */
function tamper(kv: KvLike & { values: Map<string, string> }, server: string, change: (index: { key: string; bytes: string }) => { key: string; bytes: string }): void {
  const key = [...kv.values.keys()].find((k) => k.endsWith(`/catalog/${server}`))!;
  const entry = JSON.parse(kv.values.get(key)!) as { index: { key: string; bytes: string } };
  kv.values.set(key, JSON.stringify({ ...entry, index: change(entry.index) }));
}

/** What a session's first search does in an isolate with no kept index: how many it loads, how many it builds. */
async function coldSearch(kv: KvLike): Promise<{ loads: number; builds: number; answer: ReturnType<typeof search> }> {
  clearSharedIndexes();
  const [loads, builds] = [sharedIndexLoads(), sharedIndexBuilds()];
  const ready = await session(kv);
  const answer = search(ready);
  return { loads: sharedIndexLoads() - loads, builds: sharedIndexBuilds() - builds, answer };
}

let built: ReturnType<typeof search>;

beforeEach(async () => {
  clearSharedIndexes();
  // The answer from indexes built in this isolate (the writer builds them), for comparison.
  built = search(await session(await written()));
});

describe("a catalog's search index stored with it", () => {
  it("is taken by an isolate with none: nothing built at the first search, the same answer", async () => {
    const kv = await written();
    const cold = await coldSearch(kv);
    expect(cold).toEqual({ loads: SERVERS.length, builds: 0, answer: built });
    expect(cold.answer.length).toBeGreaterThan(0);
  });

  it("is not read again by an isolate that keeps the index", async () => {
    const kv = await written();
    await coldSearch(kv);
    const loads = sharedIndexLoads();
    search(await session(kv));
    expect(sharedIndexLoads()).toBe(loads);
  });

  const broken: Array<[string, (index: { key: string; bytes: string }) => { key: string; bytes: string }]> = [
    ["of another version", (i) => ({ ...i, bytes: base64url(withVersion(fromBase64url(i.bytes), 99)) })],
    ["cut short", (i) => ({ ...i, bytes: i.bytes.slice(0, i.bytes.length - 40) })],
    ["not base64", (i) => ({ ...i, bytes: "%%%" })],
    ["of other content (a stale key)", (i) => ({ ...i, key: `${i.key}x` })],
  ];
  for (const [what, change] of broken) {
    it(`is refused when ${what}, and the search builds the index`, async () => {
      const kv = await written();
      tamper(kv, "gitlab", change);
      expect(await coldSearch(kv)).toEqual({ loads: SERVERS.length - 1, builds: 1, answer: built });
    });
  }

  it("is refused when it shows another catalog's tools under this catalog's key", async () => {
    const kv = await written();
    const other = (JSON.parse(kv.values.get([...kv.values.keys()].find((k) => k.endsWith("/catalog/kubernetes"))!)!) as { index: { bytes: string } }).index.bytes;
    tamper(kv, "gitlab", (i) => ({ ...i, bytes: other }));
    expect(await coldSearch(kv)).toEqual({ loads: SERVERS.length - 1, builds: 1, answer: built });
  });
});

function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const out = bytes.slice();
  new DataView(out.buffer).setUint32(0, version, true);
  return out;
}
