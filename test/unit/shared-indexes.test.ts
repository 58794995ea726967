// The isolate's search indexes (src/catalog/shared-indexes.ts) as discover_tool's search uses them
// (src/views/tool-search.ts): every session of a team shows its catalogs as objects of its own, read from KV or from
// the upstream, and all of them search ONE index per catalog content, built once; the kept indexes are bounded.
import { beforeEach, describe, expect, it } from "vitest";
import { loadCorpus } from "../../harness/replay-server.ts";
import type { ReadyUpstream, UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { indexTools, termsOf, type SearchInput } from "../../src/catalog/search-index.ts";
import { handOnDigests, toolDigest, toolDigests, toolDigestsMade } from "../../src/catalog/catalog-digest.ts";
import { clearSharedIndexes, indexKey, sharedIndex, sharedIndexBuilds, sharedIndexUse, showsTools } from "../../src/catalog/shared-indexes.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { kvCatalogCache } from "../../src/store/catalog-cache.ts";
import type { KvLike } from "../../src/store/kv.ts";
import { applyToolPolicy } from "../../src/upstream/policy.ts";
import { searchUpstreams } from "../../src/views/tool-search.ts";

const SERVERS = ["zereight__mcp-gitlab", "mcp-server-kubernetes", "azure-devops__mcp"];
const NAMES = ["gitlab", "kubernetes", "azure"];

/** One session's loaded upstreams: each catalog a fresh object, as a session reads it (a deep copy of the corpus). */
function session(names: readonly string[] = NAMES): ReadyUpstream[] {
  return SERVERS.map((file, i) => {
    const catalog = structuredClone(loadCorpus(file)) as unknown as UpstreamCatalog;
    return { name: names[i]!, catalog };
  });
}

const search = (ready: readonly ReadyUpstream[], query: string) => searchUpstreams("multi", ready, (s) => `The ${s} server.`, query, 8);

beforeEach(() => clearSharedIndexes());

describe("one index per catalog content in an isolate", () => {
  it("builds each catalog's index once for every session of the team, and holds one copy", () => {
    const first = session();
    const before = sharedIndexBuilds();
    const answer = search(first, "list merge requests");
    expect(sharedIndexBuilds() - before).toBe(SERVERS.length);
    const held = sharedIndexUse();
    expect(held.indexes).toBe(SERVERS.length);
    // Nine more sessions of the team, each with its own catalog objects: no build, nothing more held.
    for (let n = 0; n < 9; n++) expect(search(session(), "list merge requests")).toEqual(answer);
    expect(sharedIndexBuilds() - before).toBe(SERVERS.length);
    expect(sharedIndexUse()).toEqual(held);
    // And the first session's later searches build nothing either.
    search(first, "delete a pod");
    expect(sharedIndexBuilds() - before).toBe(SERVERS.length);
  });

  it("builds anew for other content: another name the tools show under, another tool list", () => {
    search(session(), "pods");
    const before = sharedIndexBuilds();
    search(session(["gitlab-2", "kubernetes", "azure"]), "pods");
    expect(sharedIndexBuilds() - before).toBe(1);
    const changed = session();
    changed[1]!.catalog.tools = changed[1]!.catalog.tools.slice(1);
    search(changed, "pods");
    expect(sharedIndexBuilds() - before).toBe(2);
  });

  it("keeps at most its bound, least recently used out, and builds a pushed-out index again when searched", () => {
    const one = session();
    for (const u of one) search([u], "list");
    const all = sharedIndexUse().bytes;
    clearSharedIndexes(Math.ceil(all / 2));
    const before = sharedIndexBuilds();
    for (const u of one) search([u], "list");
    expect(sharedIndexUse().indexes).toBeLessThan(SERVERS.length);
    // The first was pushed out by the later ones: searching it builds it again.
    search([one[0]!], "list");
    expect(sharedIndexBuilds() - before).toBe(SERVERS.length + 1);
  });

  it("keys an index by every text it is made of, and nothing else", () => {
    const tool = (description: string, type: string) => [
      { name: "get", description: "Get it.", inputSchema: { type: "object", properties: { id: { type, description } } } },
    ];
    const key = (tools: ReturnType<typeof tool>, shownAs = ["multi", "a", "The a server."]) => indexKey(shownAs, toolDigests(tools));
    expect(key(tool("The id.", "string"))).toBe(key(tool("The id.", "string")));
    expect(key(tool("The id.", "string"))).not.toBe(key(tool("The key.", "string")));
    // A schema's type is no part of any field: the same index.
    expect(key(tool("The id.", "string"))).toBe(key(tool("The id.", "number")));
    expect(key(tool("The id.", "string"), ["multi", "b", "The a server."])).not.toBe(key(tool("The id.", "string")));
    expect(indexKey(["multi", "a"], toolDigests([{ name: "b" }]))).not.toBe(indexKey(["multi", "a"], toolDigests([{ name: "b", description: "" }])));
    expect(indexKey(["multi", "ab"], toolDigests([{ name: "c" }]))).not.toBe(indexKey(["multi", "a"], toolDigests([{ name: "bc" }])));
  });

  it("never serves a kept index to a catalog whose tools it does not show, whatever the key", () => {
    const a: SearchInput[] = [{ name: "a/read", server: "a", tool: "read", description: "Read a file." }];
    const b: SearchInput[] = [{ name: "b/secret", server: "b", tool: "secret", description: "Another team's tool." }];
    const key = indexKey(["multi", "a"], toolDigests([{ name: "read", description: "Read a file." }]));
    const shared = (inputs: SearchInput[]) => sharedIndex(key, () => inputs, (index) => showsTools(index, inputs[0]!.server, inputs.map((t) => t.name)));
    expect(shared(a).index.tools.name(0)).toBe("a/read");
    // Another content under the same key (a digest collision): its own index, and the kept one stays.
    expect(shared(b).index.tools.name(0)).toBe("b/secret");
    expect(shared(a).index.tools.name(0)).toBe("a/read");
    expect(termsOf(indexTools(a))).toEqual(termsOf(shared(a).index));
  });
});

describe("a new session keys its catalogs by the digests they came with", () => {
  const spec = (name: string) => ({ name, transport: "streamable-http", url: `https://${name}.example/mcp`, headers: {}, timeout: 5_000 }) as UpstreamSpec;
  const memoryKv = (): KvLike => {
    const values = new Map<string, string>();
    return { get: async (k) => values.get(k) ?? null, put: async (k, v) => void values.set(k, v), delete: async (k) => void values.delete(k), list: async () => [] };
  };
  /** A session's catalogs as it shows them: read from the team's cache, then the team's filters and safe text (the registry's policy). */
  async function cachedSession(kv: KvLike): Promise<ReadyUpstream[]> {
    const cache = kvCatalogCache(kv, "t");
    return Promise.all(
      NAMES.map(async (name) => {
        const cached = (await cache.get(spec(name)))!;
        return { name, catalog: handOnDigests(cached, applyToolPolicy(spec(name), cached)) };
      }),
    );
  }

  it("hashes no tool's text at a new session's first search, and builds nothing", async () => {
    const kv = memoryKv();
    const writer = kvCatalogCache(kv, "t");
    for (const [i, u] of session().entries()) {
      const catalog: UpstreamCatalog = { capabilities: {}, tools: u.catalog.tools, resources: [], resourceTemplates: [], prompts: [], notes: [] };
      await writer.put(spec(NAMES[i]!), catalog, Date.now());
    }
    const answer = search(await cachedSession(kv), "list merge requests");
    const builds = sharedIndexBuilds();
    const made = toolDigestsMade();
    const later = await cachedSession(kv);
    expect(search(later, "list merge requests")).toEqual(answer);
    expect(toolDigestsMade() - made).toBe(0);
    expect(sharedIndexBuilds() - builds).toBe(0);
  });

  it("makes a tool's digest from its text when a view changed it, and keeps the others'", () => {
    const from = session()[0]!.catalog;
    const known = toolDigests(from.tools);
    const changed = { ...from.tools[1]!, description: "Something else entirely." };
    const to = { ...from, tools: [from.tools[0]!, changed, ...from.tools.slice(3).map((t) => ({ ...t }))] };
    const digests = toolDigests(handOnDigests(from, to).tools);
    expect(digests[0]).toBe(known[0]);
    expect(digests[1]).toBe(toolDigest(changed));
    expect(digests[1]).not.toBe(known[1]);
    expect(digests.slice(2)).toEqual(known.slice(3));
  });
});
