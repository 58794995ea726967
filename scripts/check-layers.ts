// `node scripts/check-layers.ts` (part of `npm test`): every import inside src/ goes down the layer order or
// stays in its layer, and no imports form a cycle. The order and its reasons are in docs/architecture.md.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** One layer: its name, and its members (a folder ends with `/`, anything else is a file), relative to src/. */
export interface Layer {
  name: string;
  members: readonly string[];
}

/**
 * src/'s layers, bottom first, one folder each (the entry file apart): a file may import from its own folder and the
 * folders below, never from above, so folders form no cycle either. The order reads as a request's path, from the
 * edge down to the catalog, with the libraries under all of it (docs/architecture.md, "Layers").
 */
export const LAYERS: readonly Layer[] = [
  { name: "lib", members: ["lib/"] },
  { name: "config", members: ["config/"] },
  { name: "auth", members: ["auth/"] },
  { name: "catalog", members: ["catalog/"] },
  { name: "upstream", members: ["upstream/"] },
  { name: "store", members: ["store/"] },
  { name: "relay", members: ["relay/"] },
  { name: "views", members: ["views/"] },
  { name: "code view", members: ["views/code/"] },
  { name: "modern era", members: ["modern/"] },
  { name: "session", members: ["session/"] },
  { name: "team", members: ["team/"] },
  { name: "edge common", members: ["edge/common/"] },
  { name: "oauth", members: ["edge/oauth/"] },
  { name: "admin", members: ["edge/admin/"] },
  { name: "dashboard", members: ["edge/dashboard/"] },
  { name: "mcp route", members: ["edge/mcp/"] },
  { name: "router", members: ["edge/"] },
  { name: "entry", members: ["index.ts"] },
];

/** Packages src/ must not import (the Worker bundle), and why. */
export const FORBIDDEN_PACKAGES: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  {
    pattern: /^@modelcontextprotocol\/sdk(\/|$)/,
    why: "the Worker carries one MCP SDK, v2 (@modelcontextprotocol/server and /client); v1 is for tests, benchmarks and fixtures",
  },
  { pattern: /^agents(\/|$)/, why: "it brings a second MCP SDK into the bundle; the session transport is src/session/transport.ts" },
];

/** Pure: one line per import of a forbidden package in the given sources (file relative to src/ → its text). */
export function forbiddenImports(sources: ReadonlyMap<string, string>, forbidden = FORBIDDEN_PACKAGES): string[] {
  const lines: string[] = [];
  for (const [file, source] of [...sources].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const specifier of importsOf(source, file)) {
      const rule = forbidden.find((f) => f.pattern.test(specifier));
      if (rule) lines.push(`forbidden import: src/${file} imports ${specifier}: ${rule.why}`);
    }
  }
  return lines;
}

/** The import graph: file (relative to src/, `/`-separated) → the src/ files it imports. */
export type Graph = ReadonlyMap<string, readonly string[]>;

export interface Edge {
  from: string;
  to: string;
}

export interface LayerReport {
  /** Each import cycle once, as a path that ends where it starts. */
  cycles: string[][];
  /** Imports from a lower layer into a higher one. */
  upward: Array<Edge & { fromLayer: string; toLayer: string }>;
  /** Files that belong to no layer. */
  unplaced: string[];
  /** Folders placed only through a parent folder's layer: each folder is a layer of its own. */
  folders: string[];
}

/** The index of a file's layer in `layers` (the most specific member wins), or undefined. */
export function layerOf(file: string, layers: readonly Layer[]): number | undefined {
  let best: { index: number; length: number } | undefined;
  layers.forEach((layer, index) => {
    for (const member of layer.members) {
      const hit = member.endsWith("/") ? file.startsWith(member) : file === member;
      if (hit && (!best || member.length > best.length)) best = { index, length: member.length };
    }
  });
  return best?.index;
}

/** Pure: the cycles, upward imports and unplaced files of a graph under a layer order. */
export function checkLayers(graph: Graph, layers: readonly Layer[]): LayerReport {
  const files = [...graph.keys()].sort();
  const unplaced = files.filter((file) => layerOf(file, layers) === undefined);
  const upward: LayerReport["upward"] = [];
  for (const from of files) {
    const fromLayer = layerOf(from, layers);
    for (const to of graph.get(from) ?? []) {
      const toLayer = layerOf(to, layers);
      if (fromLayer !== undefined && toLayer !== undefined && toLayer > fromLayer) {
        upward.push({ from, to, fromLayer: layers[fromLayer]!.name, toLayer: layers[toLayer]!.name });
      }
    }
  }
  const folders = new Set<string>();
  for (const file of files) {
    const folder = posix.dirname(file);
    const layer = layerOf(file, layers);
    if (folder !== "." && layer !== undefined && !layers[layer]!.members.includes(`${folder}/`)) folders.add(`${folder}/`);
  }
  return { cycles: stronglyConnected(graph).map((group) => cycleIn(graph, group)), upward, unplaced, folders: [...folders].sort() };
}

/** Tarjan's algorithm: the groups of files that reach each other (a self-import counts), each sorted. */
function stronglyConnected(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** A shortest cycle through the group's first file, staying inside the group. */
function cycleIn(graph: Graph, group: readonly string[]): string[] {
  const start = group[0]!;
  const members = new Set(group);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const node = queue[at]!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...group, start];
}

/** The module specifiers of a file's static imports and re-exports (`import type` included). */
export function importsOf(source: string, fileName = "file.ts"): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, scriptKind(fileName));
  const out: string[] = [];
  for (const statement of file.statements) {
    const specifier = ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (specifier && ts.isStringLiteral(specifier)) out.push(specifier.text);
  }
  return out;
}

/** How TypeScript reads a file: a `.tsx` file holds JSX (the dashboard's pages). */
export const scriptKind = (fileName: string): ts.ScriptKind => (fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);

/** Every .ts and .tsx file under `dir`, relative to it, `/`-separated, sorted. */
function tsFiles(dir: string): string[] {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** The file a relative specifier names, the way the bundler resolves it (`x.ts`, `x.js` for `x.ts`, `x`, `x/index.ts`). */
function resolveIn(known: ReadonlySet<string>, path: string): string | undefined {
  const candidates = [path, path.replace(/\.js$/, ".ts"), `${path}.ts`, `${path}/index.ts`];
  return candidates.find((candidate) => known.has(candidate));
}

/** The .ts and .tsx files under `srcDir` (relative, `/`-separated) with their text. */
export function readSources(srcDir: string): Map<string, string> {
  return new Map(tsFiles(srcDir).map((file) => [file, readFileSync(join(srcDir, file), "utf8")]));
}

/** The import graph of the given sources (only imports of other files among them count). */
export function readGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const known = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const targets = importsOf(source, file)
      .filter((s) => s.startsWith("./") || s.startsWith("../"))
      .map((s) => resolveIn(known, posix.normalize(posix.join(posix.dirname(file), s))))
      .filter((target) => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The report as lines to print; empty when all is well. */
export function describeReport(report: LayerReport): string[] {
  return [
    ...report.unplaced.map((file) => `no layer: src/${file} (add it to LAYERS in scripts/check-layers.ts)`),
    ...report.folders.map((folder) => `no layer of its own: src/${folder} (each folder is one layer: add it to LAYERS)`),
    ...report.upward.map((e) => `upward import: src/${e.from} (${e.fromLayer}) → src/${e.to} (${e.toLayer})`),
    ...report.cycles.map((cycle) => `import cycle: ${cycle.map((f) => `src/${f}`).join(" → ")}`),
  ];
}

export const SRC_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "src");

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sources = readSources(SRC_DIR);
  const graph = readGraph(sources);
  const problems = [...describeReport(checkLayers(graph, LAYERS)), ...forbiddenImports(sources)];
  if (problems.length > 0) {
    for (const line of problems) console.error(line);
    process.exit(1);
  }
  const edges = [...graph.values()].reduce((n, targets) => n + targets.length, 0);
  console.log(`layers: ${graph.size} files, ${edges} imports, one layer per folder, no cycle, none upward, no forbidden package (${LAYERS.map((l) => l.name).join(" < ")})`);
}
