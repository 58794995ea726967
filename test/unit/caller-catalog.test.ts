// A catalog as one caller may see it (src/upstream/caller-catalog.ts): hidden tools taken out, a server hidden whole
// emptied and marked, and with no rule for the caller the very same catalog object (no policies: nothing changes).
import { describe, expect, it } from "vitest";
import type { UpstreamCatalog } from "../../src/catalog/catalog.ts";
import type { Subject } from "../../src/config/subject.ts";
import { toolAccess, type AccessConfig } from "../../src/config/tool-access.ts";
import { callerCatalog } from "../../src/upstream/caller-catalog.ts";

const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
const catalog = (...names: string[]): UpstreamCatalog => ({
  capabilities: { tools: {}, resources: {}, prompts: {} },
  tools: names.map(tool),
  resources: [{ uri: "memo://a", name: "a" }],
  resourceTemplates: [],
  prompts: [{ name: "p" }],
  notes: ["a note"],
});
const config: AccessConfig = {
  mode: "multi",
  policies: [
    { who: ["*"], deny: ["*/delete_*", "vault/*"] },
    { who: ["token:reader"], allow: ["mem/read_*"] },
  ],
};
const reader: Subject = { kind: "token", id: "t1", label: "reader" };
const writer: Subject = { kind: "token", id: "t2", label: "writer" };

describe("a catalog as one caller sees it", () => {
  it("takes out the tools the caller's rules hide, keeping the rest of the catalog and the names taken out (for the audit trail)", () => {
    const seen = callerCatalog(toolAccess(config, writer), "multi", "mem", catalog("read_graph", "delete_all", "create"));
    expect(seen.tools.map((t) => t.name)).toEqual(["read_graph", "create"]);
    expect(seen.hiddenTools).toEqual(["delete_all"]);
    expect(seen.resources).toHaveLength(1);
    expect(seen.hiddenFromCaller).toBeUndefined();
    const narrowed = callerCatalog(toolAccess(config, reader), "multi", "mem", catalog("read_graph", "create"));
    expect(narrowed.tools.map((t) => t.name)).toEqual(["read_graph"]);
    expect(narrowed.hiddenTools).toEqual(["create"]);
  });

  it("empties and marks a server hidden whole: every tool hidden, or none and the server denied or never allowed", () => {
    const hidden = { capabilities: {}, tools: [], resources: [], resourceTemplates: [], prompts: [], notes: [], hiddenFromCaller: true };
    expect(callerCatalog(toolAccess(config, reader), "multi", "other", catalog("create"))).toEqual(hidden);
    expect(callerCatalog(toolAccess(config, writer), "multi", "vault", catalog())).toEqual(hidden);
    expect(callerCatalog(toolAccess(config, reader), "multi", "docs", catalog())).toEqual(hidden);
    expect(callerCatalog(toolAccess(config, writer), "multi", "docs", catalog()).resources).toHaveLength(1);
  });

  it("hands back the same catalog when no rule applies to the caller, or none hides anything of it", () => {
    const open: AccessConfig = { mode: "multi", policies: [{ who: ["token:someone"], deny: ["**"] }] };
    const same = catalog("delete_all");
    expect(callerCatalog(toolAccess(open, writer), "multi", "mem", same)).toBe(same);
    const kept = catalog("read_graph");
    expect(callerCatalog(toolAccess(config, writer), "multi", "mem", kept)).toBe(kept);
  });
});
