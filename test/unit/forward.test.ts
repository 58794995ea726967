// Pure forwarding logic: opaque paging, merged lists, ownership and the collision rule.
import { describe, expect, it } from "vitest";
import { mergePrompts, mergeResources, resourceOwner, templateOwner } from "../../src/forward/merge.ts";
import { paginate } from "../../src/forward/paging.ts";
import type { UpstreamCatalog } from "../../src/upstream/client.ts";
import type { ReadyUpstream } from "../../src/upstream/registry.ts";

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
