// Pure forwarding logic: opaque paging, merged lists, ownership and the collision rule; the memory of resource links.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { mergePrompts, mergeResources, resourceOwner, templateOwner, unclaimedResourceOwner } from "../../src/relay/merge.ts";
import { paginate } from "../../src/relay/paging.ts";
import { MAX_LINKS, MAX_LINK_URI, ResourceLinks, linkedUris, type LinkStore, type StoredLink } from "../../src/relay/resource-links.ts";
import type { ReadyUpstream } from "../../src/catalog/catalog.ts";

const catalog = (over: Partial<UpstreamCatalog>): UpstreamCatalog => ({
  capabilities: {},
  tools: [],
  resources: [],
  resourceTemplates: [],
  prompts: [],
  notes: [],
  ...over,
});

const ready: ReadyUpstream[] = [
  { name: "a", catalog: catalog({ resources: [{ uri: "x://one", name: "one" }], resourceTemplates: [{ uriTemplate: "x://items/{id}", name: "item" }], prompts: [{ name: "p" }] }) },
  { name: "b", catalog: catalog({ resources: [{ uri: "x://one", name: "dup" }, { uri: "y://two", name: "two" }], resourceTemplates: [{ uriTemplate: "x://items/{id}", name: "dup" }, { uriTemplate: "y://{path}", name: "any" }], prompts: [{ name: "p" }] }) },
];

describe("paginate", () => {
  it("pages with opaque cursors and refuses a forged one", () => {
    const items = Array.from({ length: 250 }, (_, i) => i);
    const first = paginate(items, undefined);
    expect(first.page).toHaveLength(100);
    const second = paginate(items, first.nextCursor);
    expect(second.page[0]).toBe(100);
    const third = paginate(items, second.nextCursor);
    expect(third.page).toHaveLength(50);
    expect(third.nextCursor).toBeUndefined();
    expect(() => paginate(items, "nope")).toThrow(/Invalid cursor/);
    expect(() => paginate(items, btoa(JSON.stringify({ o: 999 })))).toThrow(/Invalid cursor/);
    expect(paginate([], undefined)).toEqual({ page: [] });
  });
});

describe("merge", () => {
  it("gives a URI or template claimed twice to the first upstream in config order", () => {
    expect(mergeResources(ready).map((r) => [r.owner, r.resource.name])).toEqual([["a", "one"], ["b", "two"]]);
    expect(resourceOwner(ready, "x://one")).toBe("a");
    expect(resourceOwner(ready, "x://items/7")).toBe("a");
    expect(resourceOwner(ready, "y://thing")).toBe("b");
    expect(resourceOwner(ready, "z://none")).toBeUndefined();
    expect(templateOwner(ready, "x://items/{id}")).toBe("a");
  });

  it("namespaces prompts in config-file mode and keeps them bare in single-MCP mode", () => {
    expect(mergePrompts(ready, "multi").map((p) => p.exposed.name)).toEqual(["a/p", "b/p"]);
    const single = mergePrompts(ready.slice(0, 1), "single");
    expect(single.map((p) => [p.exposed.name, p.original])).toEqual([["p", "p"]]);
  });
});

describe("URIs no list or template claims", () => {
  const serving = (name: string, resources = true): ReadyUpstream => ({ name, catalog: catalog(resources ? { capabilities: { resources: {} } } : {}) });

  it("go to the one upstream in single-MCP mode, if it offers resources", () => {
    expect(unclaimedResourceOwner([serving("only")], "single", undefined)).toBe("only");
    expect(unclaimedResourceOwner([serving("only", false)], "single", undefined)).toBeUndefined();
    expect(unclaimedResourceOwner([], "single", undefined)).toBeUndefined();
  });

  it("go to the linking upstream in config-file mode, else to the only one with resources, else nowhere", () => {
    const two = [serving("plain", false), serving("a"), serving("b")];
    expect(unclaimedResourceOwner(two, "multi", "b")).toBe("b");
    expect(unclaimedResourceOwner(two, "multi", undefined)).toBeUndefined();
    // A link from an upstream that is not loaded (or offers no resources) does not decide.
    expect(unclaimedResourceOwner(two, "multi", "gone")).toBeUndefined();
    expect(unclaimedResourceOwner(two, "multi", "plain")).toBeUndefined();
    expect(unclaimedResourceOwner([serving("plain", false), serving("a")], "multi", undefined)).toBe("a");
    expect(unclaimedResourceOwner([serving("plain", false), serving("a")], "multi", "plain")).toBe("a");
    expect(unclaimedResourceOwner([serving("plain", false)], "multi", undefined)).toBeUndefined();
  });
});

/** A LinkStore in memory that counts its writes. */
function memoryStore(initial: StoredLink[] = []) {
  const rows = new Map(initial.map((l) => [l.seq, l]));
  const store: LinkStore & { rows: Map<number, StoredLink>; writes: number } = {
    rows,
    writes: 0,
    links: async () => [...rows.values()],
    saveLinks: async (put, remove) => {
      store.writes++;
      for (const l of put) rows.set(l.seq, l);
      for (const seq of remove) rows.delete(seq);
    },
  };
  return store;
}

const links = (...uris: string[]): CallToolResult => ({ content: uris.map((uri) => ({ type: "resource_link" as const, uri, name: uri })) });

describe("resource links of tool results", () => {
  it("finds resource_link and embedded resource URIs, and nothing else", () => {
    const result = {
      content: [
        { type: "text", text: "see x://a" },
        { type: "resource_link", uri: "x://link", name: "l" },
        { type: "resource", resource: { uri: "x://embedded", text: "t" } },
        { type: "resource_link", uri: `x://${"y".repeat(MAX_LINK_URI)}`, name: "too long" },
        { type: "resource_link", name: "no uri" },
        null,
      ],
    } as unknown as CallToolResult;
    expect(linkedUris(result)).toEqual(["x://link", "x://embedded"]);
    expect(linkedUris({ content: "not a list" } as unknown as CallToolResult)).toEqual([]);
  });

  it("keeps at most the bound (MAX_LINKS by default), forgetting the oldest first, in memory and in the store", async () => {
    const store = memoryStore();
    const memory = new ResourceLinks(store, 3);
    await memory.remember("a", links("x://1", "x://2"));
    await memory.remember("b", links("x://3", "x://4"));
    expect(memory.size).toBe(3);
    expect(await memory.linkedBy("x://1")).toBeUndefined();
    expect(await memory.linkedBy("x://2")).toBe("a");
    expect(await memory.linkedBy("x://4")).toBe("b");
    expect([...store.rows.values()].map((l) => l.uri).sort()).toEqual(["x://2", "x://3", "x://4"]);
    // One result with more links than the bound keeps its last ones, and stores only those.
    await memory.remember("c", links("y://1", "y://2", "y://3", "y://4", "y://5"));
    expect([...store.rows.values()].map((l) => l.uri).sort()).toEqual(["y://3", "y://4", "y://5"]);
    expect(memory.size).toBe(3);

    const defaults = memoryStore();
    const bounded = new ResourceLinks(defaults);
    await bounded.remember("a", links(...Array.from({ length: MAX_LINKS + 5 }, (_, i) => `z://${i}`)));
    expect(bounded.size).toBe(MAX_LINKS);
    expect(defaults.rows.size).toBe(MAX_LINKS);
    expect(await bounded.linkedBy("z://4")).toBeUndefined();
    expect(await bounded.linkedBy("z://5")).toBe("a");
  });

  it("writes only when a result brings something new; a link from another upstream moves the URI", async () => {
    const store = memoryStore();
    const memory = new ResourceLinks(store, 10);
    await memory.remember("a", { content: [{ type: "text", text: "nothing linked" }] });
    expect(store.writes).toBe(0);
    await memory.remember("a", links("x://1", "x://1"));
    expect(store.writes).toBe(1);
    await memory.remember("a", links("x://1"));
    expect(store.writes).toBe(1);
    await memory.remember("b", links("x://1"));
    expect(store.writes).toBe(2);
    expect(await memory.linkedBy("x://1")).toBe("b");
    expect([...store.rows.values()]).toEqual([expect.objectContaining({ uri: "x://1", upstream: "b" })]);
  });

  it("comes back from the store in order after the object restarts, and goes on numbering after it", async () => {
    const store = memoryStore();
    const before = new ResourceLinks(store, 3);
    await before.remember("a", links("x://1", "x://2", "x://3"));
    const after = new ResourceLinks(store, 3);
    expect(await after.linkedBy("x://3")).toBe("a");
    await after.remember("b", links("x://4"));
    expect(await after.linkedBy("x://1")).toBeUndefined();
    expect(await after.linkedBy("x://4")).toBe("b");
    expect(new Set([...store.rows.keys()]).size).toBe(3);
    // A smaller bound than the stored links were kept under trims them on load.
    const smaller = new ResourceLinks(store, 1);
    expect(await smaller.linkedBy("x://4")).toBe("b");
    expect(smaller.size).toBe(1);
  });

  it("never fails the tool call when the store does", async () => {
    const broken: LinkStore = { links: async () => [], saveLinks: async () => Promise.reject(new Error("disk full")) };
    const memory = new ResourceLinks(broken, 3);
    await expect(memory.remember("a", links("x://1"))).resolves.toBeUndefined();
    expect(await memory.linkedBy("x://1")).toBe("a");
    const unreadable = new ResourceLinks({ links: async () => Promise.reject(new Error("gone")), saveLinks: async () => {} }, 3);
    await expect(unreadable.remember("a", links("x://1"))).resolves.toBeUndefined();
  });
});
