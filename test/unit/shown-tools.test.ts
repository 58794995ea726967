// What an index's hits show, held compactly (src/catalog/shown-tools.ts): the same names, servers and lines as given,
// with or without the server's prefix, and a name compared without making one.
import { describe, expect, it } from "vitest";
import { ShownTools, type ShownTool } from "../../src/catalog/shown-tools.ts";

const PREFIXED: ShownTool[] = [
  { name: "git/status", server: "git", line: "Show the working tree status" },
  { name: "git/log", server: "git", line: "" },
  { name: "gitlab/log", server: "gitlab", line: "Show a project's log, ✓ in UTF-16" },
];
const BARE: ShownTool[] = [
  { name: "status", server: "git", line: "Show the status" },
  { name: "git/log", server: "git", line: "A name with a slash in single mode" },
];

describe("what an index's hits show", () => {
  for (const [what, tools] of [["namespaced names", PREFIXED], ["bare names", BARE]] as const) {
    it(`gives back every tool as given (${what})`, () => {
      const shown = new ShownTools(tools);
      expect(shown.length).toBe(tools.length);
      expect(shown.list()).toEqual(tools);
      tools.forEach((t, i) => {
        expect(shown.nameIs(i, t.name)).toBe(true);
        expect(shown.nameIs(i, `${t.name}x`)).toBe(false);
        expect(shown.nameIs(i, t.name.slice(0, -1))).toBe(false);
      });
    });
  }

  it("compares a name given as its server's prefix and the tool's own name, held either way", () => {
    const prefixed = new ShownTools(PREFIXED);
    expect(prefixed.nameIsIn(0, "git", "status")).toBe(true);
    expect(prefixed.nameIsIn(0, "gitlab", "status")).toBe(false);
    expect(prefixed.nameIsIn(0, "git", "statu")).toBe(false);
    expect(prefixed.nameIsIn(0, undefined, "status")).toBe(false);
    const bare = new ShownTools(BARE);
    expect(bare.nameIsIn(0, undefined, "status")).toBe(true);
    expect(bare.nameIsIn(0, "git", "status")).toBe(false);
    expect(bare.nameIsIn(1, "git", "log")).toBe(true);
    expect(bare.nameIsIn(1, "gi", "t/log")).toBe(false);
    expect(bare.nameIsIn(1, "git", "lo")).toBe(false);
    expect(bare.nameIsIn(1, "gitx", "log")).toBe(false);
  });

  it("tells a name of another server or with another separator from its own", () => {
    const shown = new ShownTools(PREFIXED);
    expect(shown.nameIs(1, "gitlab/log")).toBe(false);
    expect(shown.nameIs(1, "git_log")).toBe(false);
    expect(shown.nameIs(2, "gitlab/log")).toBe(true);
    expect(new ShownTools([]).list()).toEqual([]);
  });
});
