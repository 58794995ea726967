// The isolate's search indexes (src/catalog/shared-indexes.ts) as discover_tool's search uses them
// (src/views/tool-search.ts): every session of a team shows its catalogs as objects of its own, read from KV or from
// the upstream, and all of them search ONE index per catalog content, built once; the kept indexes are bounded.
import { beforeEach, describe, expect, it } from "vitest";
import { loadCorpus } from "../../harness/replay-server.ts";
import type { ReadyUpstream, UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { indexTools, type SearchInput } from "../../src/catalog/search-index.ts";
import { clearSharedIndexes, indexKey, sharedIndex, sharedIndexBuilds, sharedIndexUse } from "../../src/catalog/shared-indexes.ts";
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
    const tool = (description: string, type: string): SearchInput[] => [
      { name: "a/get", server: "a", tool: "get", description: "Get it.", inputSchema: { type: "object", properties: { id: { type, description } } } },
    ];
    expect(indexKey(tool("The id.", "string"))).toBe(indexKey(tool("The id.", "string")));
    expect(indexKey(tool("The id.", "string"))).not.toBe(indexKey(tool("The key.", "string")));
    // A schema's type is no part of any field: the same index.
    expect(indexKey(tool("The id.", "string"))).toBe(indexKey(tool("The id.", "number")));
    expect(indexKey([{ name: "a/b", server: "a", tool: "b" }])).not.toBe(indexKey([{ name: "a/b", server: "a", tool: "b", description: "" }]));
    expect(indexKey([{ name: "ab", server: "c", tool: "d" }])).not.toBe(indexKey([{ name: "a", server: "bc", tool: "d" }]));
  });

  it("never serves a kept index to a catalog whose tools it does not show, whatever the key", () => {
    const a: SearchInput[] = [{ name: "a/read", server: "a", tool: "read", description: "Read a file." }];
    const b: SearchInput[] = [{ name: "b/secret", server: "b", tool: "secret", description: "Another team's tool." }];
    const key = indexKey(a);
    expect(sharedIndex(key, a).index.tools[0]!.name).toBe("a/read");
    // Another content under the same key (a digest collision): its own index, and the kept one stays.
    expect(sharedIndex(key, b).index.tools[0]!.name).toBe("b/secret");
    expect(sharedIndex(key, a).index.tools[0]!.name).toBe("a/read");
    expect(indexKey(a)).not.toBe(indexKey(b));
    expect(indexTools(a).terms).toEqual(sharedIndex(key, a).index.terms);
  });
});
