// The layering check (scripts/check-layers.ts): cycles and upward imports found on made-up graphs, none in src/.
import { describe, expect, it } from "vitest";
import { LAYERS, SRC_DIR, checkLayers, describeReport, forbiddenImports, importsOf, layerOf, readGraph, readSources, type Layer } from "../../scripts/check-layers.ts";

const layers: Layer[] = [
  { name: "low", members: ["a.ts", "lib/"] },
  { name: "mid", members: ["mid/"] },
  { name: "high", members: ["top.ts", "mid/top.ts"] },
];
const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe("checkLayers", () => {
  it("passes a graph whose imports go down or stay in their layer", () => {
    const report = checkLayers(graph({ "top.ts": ["mid/x.ts", "a.ts"], "mid/x.ts": ["mid/y.ts", "lib/z.ts"], "mid/y.ts": ["a.ts"], "a.ts": [], "lib/z.ts": ["a.ts"] }), layers);
    expect(report).toEqual({ cycles: [], upward: [], unplaced: [], folders: [] });
    expect(describeReport(report)).toEqual([]);
  });

  it("finds a cycle inside one layer, as a path back to its start", () => {
    const report = checkLayers(graph({ "mid/x.ts": ["mid/y.ts"], "mid/y.ts": ["mid/z.ts"], "mid/z.ts": ["mid/x.ts", "a.ts"], "a.ts": [] }), layers);
    expect(report.cycles).toEqual([["mid/x.ts", "mid/y.ts", "mid/z.ts", "mid/x.ts"]]);
    expect(report.upward).toEqual([]);
    expect(describeReport(report)).toEqual(["import cycle: src/mid/x.ts → src/mid/y.ts → src/mid/z.ts → src/mid/x.ts"]);
  });

  it("finds a file that imports itself, and each of two separate cycles once", () => {
    const report = checkLayers(graph({ "a.ts": ["a.ts"], "lib/p.ts": ["lib/q.ts"], "lib/q.ts": ["lib/p.ts"], "mid/x.ts": ["lib/p.ts"] }), layers);
    expect(report.cycles).toEqual([["a.ts", "a.ts"], ["lib/p.ts", "lib/q.ts", "lib/p.ts"]]);
  });

  it("finds an import from a lower layer into a higher one, and the cycle it closes", () => {
    const report = checkLayers(graph({ "a.ts": ["mid/x.ts"], "mid/x.ts": ["a.ts"], "lib/z.ts": ["top.ts"], "top.ts": [] }), layers);
    expect(report.upward).toEqual([
      { from: "a.ts", to: "mid/x.ts", fromLayer: "low", toLayer: "mid" },
      { from: "lib/z.ts", to: "top.ts", fromLayer: "low", toLayer: "high" },
    ]);
    expect(report.cycles).toEqual([["a.ts", "mid/x.ts", "a.ts"]]);
    expect(describeReport(report)).toContain("upward import: src/lib/z.ts (low) → src/top.ts (high)");
  });

  it("places a file by its most specific member, and names files that have no layer", () => {
    expect(layerOf("mid/top.ts", layers)).toBe(2);
    expect(layerOf("mid/other.ts", layers)).toBe(1);
    const report = checkLayers(graph({ "mid/x.ts": ["mid/top.ts"], "mid/top.ts": [], "stray.ts": [] }), layers);
    expect(report.upward).toEqual([{ from: "mid/x.ts", to: "mid/top.ts", fromLayer: "mid", toLayer: "high" }]);
    expect(report.unplaced).toEqual(["stray.ts"]);
  });
});

describe("one layer per folder", () => {
  it("names a folder placed only through its parent's layer, and passes it once it has its own", () => {
    const nested: Layer[] = [
      { name: "low", members: ["lib/"] },
      { name: "mid", members: ["mid/"] },
    ];
    const edges = graph({ "mid/x.ts": ["lib/z.ts"], "mid/deep/y.ts": ["lib/z.ts"], "lib/z.ts": [] });
    const report = checkLayers(edges, nested);
    expect(report.folders).toEqual(["mid/deep/"]);
    expect(describeReport(report)).toEqual(["no layer of its own: src/mid/deep/ (each folder is one layer: add it to LAYERS)"]);
    expect(checkLayers(edges, [...nested, { name: "deep", members: ["mid/deep/"] }]).folders).toEqual([]);
  });

  it("gives every folder of src/ a layer of its own", () => {
    expect(LAYERS.every((layer) => layer.members.length === 1)).toBe(true);
    expect(checkLayers(readGraph(readSources(SRC_DIR)), LAYERS).folders).toEqual([]);
  });
});

describe("importsOf", () => {
  it("reads static imports and re-exports, type-only ones included, over several lines", () => {
    const source = [
      'import { a,',
      '  b } from "./a.ts";',
      'import type { T } from "../t.ts";',
      'import "./side.ts";',
      'export { c } from "./c.ts";',
      'export type { U } from "./u.ts";',
      'export * from "./all.ts";',
      'const s = "import x from \'./not.ts\'";',
      'const d = () => import("./dynamic.ts");',
      '// import { e } from "./comment.ts";',
    ].join("\n");
    expect(importsOf(source)).toEqual(["./a.ts", "../t.ts", "./side.ts", "./c.ts", "./u.ts", "./all.ts"]);
  });

  it("reads a .tsx file as JSX: read as .ts, an apostrophe in its text opens a string that hides the next import", () => {
    const source = ['export const P = () => <a href="/x">text with \'quote</a>;', 'import { b } from "./b.ts";'].join("\n");
    expect(importsOf(source, "page.tsx")).toEqual(["./b.ts"]);
  });
});

describe("forbiddenImports", () => {
  it("names each import of the v1 SDK or agents, type-only ones too, and lets the v2 packages through", () => {
    const sources = new Map([
      ["a.ts", 'import { Server } from "@modelcontextprotocol/server";\nimport type { Tool } from "@modelcontextprotocol/sdk/types.js";'],
      ["b/c.ts", 'export { WorkerTransport } from "agents/mcp";\nimport { Client } from "@modelcontextprotocol/client";'],
      ["d.ts", 'import x from "agentsmith";\nimport y from "@modelcontextprotocol/sdk";'],
    ]);
    const lines = forbiddenImports(sources);
    expect(lines.map((l) => l.split(":")[0] + ":" + l.split(":")[1])).toEqual([
      "forbidden import: src/a.ts imports @modelcontextprotocol/sdk/types.js",
      "forbidden import: src/b/c.ts imports agents/mcp",
      "forbidden import: src/d.ts imports @modelcontextprotocol/sdk",
    ]);
  });
});

describe("src/", () => {
  it("has every file in a layer, no import cycle, no upward import and no forbidden package", () => {
    const sources = readSources(SRC_DIR);
    expect(forbiddenImports(sources)).toEqual([]);
    const real = readGraph(sources);
    expect(real.size).toBeGreaterThan(40);
    expect(real.get("index.ts")).toContain("edge/app.ts");
    expect(describeReport(checkLayers(real, LAYERS))).toEqual([]);
  });
});
