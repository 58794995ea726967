// `node bench/semantic.ts` (`npm run bench:semantic`): a steering measurement for a semantic search stage, on the DEV
// query set only (bench/selection/queries.json; the holdout is scored once, at the end, by whoever decides). Over the
// 421 corpus tools: hit@1, hit@5 and MRR of discover_tool's ranking as it is (BM25F), of the static embedder alone
// (src/catalog/embedder.ts: potion-base-4M int8, cosine of query and tool text), of reciprocal-rank fusion of the
// two, and of linear blends of their normalised scores at several weights; and the embedder's costs: the assets'
// sizes, raw and gzipped, the table's load time and memory, a query's encoding time. Nothing here changes the
// search's answer. Then the stage as the Worker runs it (bench/lib/semantic-path.ts): the production path's figures
// against BM25F alone, int8 against float32 rows, the sweep BLEND was chosen from, and the time it adds to a search at
// 421 and 20,041 tools. `--smoke`: 20 queries, fewer repetitions, a 2,000-tool team, nothing written.
import { collectGarbage } from "./lib/collect.ts";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { EMBEDDING_TABLE_PATH } from "../scripts/build-embedder.ts";
import { cosine, staticEmbedder, type StaticEmbedder } from "../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../src/catalog/embedding-table.ts";
import { rankTools, splitDescription } from "../src/catalog/search.ts";
import { table } from "./lib/markdown.ts";
import { pathCost, pathQuality, type PathCost, type PathRow } from "./lib/semantic-path.ts";
import { isRender, isSmoke, median, renderRecorded, writeResult } from "./lib/results.ts";
import { isMain } from "./report.ts";
import { QUERIES_FILE, buildAll, corpusUpstreams, loadQueries, rankOf, scores, type Query, type Scores } from "./selection.ts";

const ROOT = join(import.meta.dirname, "..");
/** Reciprocal-rank fusion's constant (the usual 60). */
const RRF_K = 60;
/** The BM25F share of a linear blend (the rest is the cosine's). */
const BLEND_WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8] as const;
/** Embedders loaded at once for the memory figure (its mean). */
const MEMORY_COPIES = 4;

const collect = collectGarbage;

interface Tool {
  name: string;
  /** What the embedder reads of a tool, by TOOL_TEXTS' key. */
  texts: Record<TextKind, string>;
}

/** `create_pull_request`, `getPullRequest`, `k8s-apply` as words. */
const nameWords = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_\-./:]+/g, " ");

/** The tool texts compared: a mean of rows dilutes a long description, so its first sentence alone is tried too. */
const TOOL_TEXTS = {
  "whole description": (server: string, tool: string, description: string) => `${server} ${nameWords(tool)}: ${description}`,
  "first sentence": (server: string, tool: string, description: string) => `${server} ${nameWords(tool)}: ${splitDescription(description)[0]}`,
} as const;
type TextKind = keyof typeof TOOL_TEXTS;
const TEXT_KINDS = Object.keys(TOOL_TEXTS) as TextKind[];

function corpusTools(): Tool[] {
  return corpusUpstreams().flatMap((u) =>
    u.tools.map((t) => ({
      name: `${u.name}/${t.name}`,
      texts: Object.fromEntries(TEXT_KINDS.map((k) => [k, TOOL_TEXTS[k](u.name, t.name, t.description ?? "")])) as Record<TextKind, string>,
    })),
  );
}

/** Names by score, best first, ties by name (as discover_tool orders). */
function ordered(scored: Map<string, number>): string[] {
  return [...scored].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0)).map(([name]) => name);
}

interface QueryScores {
  /** BM25F score of each tool that matches (the search returns no other). */
  lexical: Map<string, number>;
  /** Cosine of the query and each tool's text. */
  semantic: Map<string, number>;
}

/** The semantic rankings compared (BM25F's own is `lexical` ordered), each from one query's two score lists. */
function rankings(s: QueryScores, lexical: readonly string[]): Record<string, string[]> {
  const semantic = ordered(s.semantic);
  const rrf = new Map<string, number>();
  for (const list of [lexical, semantic]) list.forEach((name, i) => rrf.set(name, (rrf.get(name) ?? 0) + 1 / (RRF_K + i + 1)));
  const out: Record<string, string[]> = { "static model alone": semantic, [`RRF (k ${RRF_K})`]: ordered(rrf) };
  // Normalised: BM25F by the query's best (a tool it does not match: 0), the cosine min-max over all tools.
  const top = Math.max(0, ...s.lexical.values());
  const cosines = [...s.semantic.values()];
  const low = Math.min(...cosines);
  const span = Math.max(...cosines) - low || 1;
  for (const w of BLEND_WEIGHTS) {
    const blend = new Map<string, number>();
    for (const [name, c] of s.semantic) blend.set(name, w * (top > 0 ? (s.lexical.get(name) ?? 0) / top : 0) + (1 - w) * ((c - low) / span));
    out[`linear ${w.toFixed(1)} BM25F + ${(1 - w).toFixed(1)} cosine`] = ordered(blend);
  }
  return out;
}

interface Quality {
  ranking: string;
  /** Which tool text the model read (none for BM25F). */
  text: TextKind | "";
  scores: Scores;
}

function quality(queries: readonly Query[], tools: readonly Tool[], embedder: StaticEmbedder): Quality[] {
  const indexes = buildAll(corpusUpstreams());
  const vectors = TEXT_KINDS.map((k) => tools.map((t) => embedder.embedOne(t.texts[k])));
  const ranks = new Map<string, Array<number | undefined>>();
  const note = (key: string, ranked: readonly string[], q: Query) => ranks.set(key, [...(ranks.get(key) ?? []), rankOf(ranked, q)]);
  for (const q of queries) {
    const lexical = new Map(rankTools(indexes, q.q).map((h) => [h.name, h.score]));
    const lexicalOrder = ordered(lexical);
    note("\0BM25F (today)", lexicalOrder, q);
    const v = embedder.embedOne(q.q);
    TEXT_KINDS.forEach((kind, k) => {
      const semantic = new Map(tools.map((t, i) => [t.name, cosine(v, vectors[k]![i]!)]));
      for (const [name, ranked] of Object.entries(rankings({ lexical, semantic }, lexicalOrder))) note(`${kind}\0${name}`, ranked, q);
    });
  }
  return [...ranks].map(([key, r]) => {
    const [text, ranking] = key.split("\0") as [TextKind | "", string];
    return { ranking, text, scores: scores(r) };
  });
}

interface Asset {
  path: string;
  bytes: number;
  gzipBytes: number;
}

/** Every file under assets/ (what `wrangler deploy` uploads), raw and gzipped (level 9). */
function assetSizes(dir = join(ROOT, "assets")): Asset[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .sort()
    .map((path) => {
      const bytes = readFileSync(path);
      return { path: relative(ROOT, path), bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
    });
}

interface Costs {
  loadMs: number;
  /** Heap and array-buffer bytes the loaded embedder holds (undefined without a gc). */
  heapBytes: number | undefined;
  arrayBufferBytes: number | undefined;
  encodeMsP50: number;
  /** Encoding the query and its cosine with every corpus tool: the semantic stage's cost per search. */
  stageMsP50: number;
  corpusEmbedMs: number;
}

function costs(queries: readonly Query[], tools: readonly Tool[], reps: number): Costs {
  const loadOnce = () => staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  // What the Worker does with the bytes the binding gave: check the header, wrap the sections.
  const bytes = readFileSync(EMBEDDING_TABLE_PATH);
  const loads: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    staticEmbedder(readEmbeddingTable(bytes));
    loads.push(performance.now() - t);
  }
  // Memory: several loaded at once, each from its own read, held together, so one collection's noise is shared out.
  collect?.();
  const before = process.memoryUsage();
  const held = Array.from({ length: MEMORY_COPIES }, loadOnce);
  for (const copy of held) copy.embedOne("warm the lookup");
  collect?.();
  const after = process.memoryUsage();
  const embedder = held[0]!;
  const t = performance.now();
  const vectors = tools.map((tool) => embedder.embedOne(tool.texts["whole description"]));
  const corpusEmbedMs = performance.now() - t;
  const encode: number[] = [];
  const stage: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    const v = embedder.embedOne(q.q);
    const t1 = performance.now();
    for (const w of vectors) cosine(v, w);
    stage.push(performance.now() - t0);
    encode.push(t1 - t0);
  }
  const each = (key: "heapUsed" | "arrayBuffers") => (collect ? (after[key] - before[key]) / held.length : undefined);
  return {
    loadMs: median(loads),
    heapBytes: each("heapUsed"),
    arrayBufferBytes: each("arrayBuffers"),
    encodeMsP50: median(encode),
    stageMsP50: median(stage),
    corpusEmbedMs,
  };
}

interface Figures {
  queries: number;
  tools: number;
  quality: Quality[];
  assets: Asset[];
  costs: Costs;
  path: PathRow[];
  pathCosts: PathCost[];
}

const pct = (x: number) => (100 * x).toFixed(1);
const kib = (n: number) => (n / 1024).toFixed(1);
const mib = (n: number | undefined) => (n === undefined ? "n/a (no gc)" : (n / 2 ** 20).toFixed(2));

function markdown(f: Figures): string {
  const base = f.quality[0]!.scores;
  const delta = (x: number, b: number) => `${x >= b ? "+" : ""}${(100 * (x - b)).toFixed(1)}`;
  const qualityRows = f.quality.map(({ ranking, text, scores: s }) => [
    ranking,
    text || "n/a",
    `${pct(s.hit1)} (${delta(s.hit1, base.hit1)})`,
    `${pct(s.hit5)} (${delta(s.hit5, base.hit5)})`,
    s.mrr.toFixed(3),
  ]);
  const total = f.assets.reduce((k, a) => ({ bytes: k.bytes + a.bytes, gzipBytes: k.gzipBytes + a.gzipBytes }), { bytes: 0, gzipBytes: 0 });
  const assetRows = [...f.assets, { path: "all assets", ...total }].map((a) => [a.path, kib(a.bytes), kib(a.gzipBytes)]);
  const c = f.costs;
  return [
    "## Semantic stage (steering, dev set only)",
    "",
    `${f.queries} dev queries (bench/selection/queries.json) over the ${f.tools} corpus tools; the holdout is not scored here. ` +
      "Ranks past 25 count as misses. The static model reads a tool as its server, its name's words and its whole description, " +
      "or only the description's first sentence; " +
      "a blend normalises BM25F by the query's best score (0 where it does not match) and the cosine min-max over all tools.",
    "",
    table(["ranking", "tool text", "hit@1 % (vs BM25F)", "hit@5 % (vs BM25F)", "MRR"], qualityRows),
    "",
    table(["asset", "KiB", "gzip KiB"], assetRows),
    "",
    table(
      ["static embedder cost", "value"],
      [
        ["load from the bytes (check the header, wrap the sections), median", `${c.loadMs.toFixed(3)} ms`],
        ["memory held: JS heap / array buffers", `${mib(c.heapBytes)} / ${mib(c.arrayBufferBytes)} MiB`],
        ["encode one query, median", `${c.encodeMsP50.toFixed(3)} ms`],
        [`encode one query and score ${f.tools} tools, median`, `${c.stageMsP50.toFixed(3)} ms`],
        [`embed the ${f.tools} tools (whole descriptions)`, `${c.corpusEmbedMs.toFixed(1)} ms`],
      ],
    ),
  ].join("\n");
}

function pathMarkdown(f: Figures): string {
  const base = f.path[0]!.scores;
  const delta = (x: number, b: number) => `${x >= b ? "+" : ""}${(100 * (x - b)).toFixed(1)}`;
  const rows = f.path.map(({ ranking, scores: s }) => [ranking, `${pct(s.hit1)} (${delta(s.hit1, base.hit1)})`, `${pct(s.hit5)} (${delta(s.hit5, base.hit5)})`, s.mrr.toFixed(3)]);
  const ms = (x: number) => x.toFixed(3);
  const costRows = f.pathCosts.map((c) => [
    c.tools.toLocaleString("en"),
    ms(c.wordsP50),
    `${ms(c.blendedP50)} / ${ms(c.blendedP95)}`,
    ms(c.addedP50),
    `${c.vectorsMs.toFixed(0)} ms, ${kib(c.vectorBytes)} KiB`,
  ]);
  return [
    "### The stage as the Worker runs it (dev set only)",
    "",
    `searchTools with the query's meaning over each index's tool vectors (server, name's words, catalog line), ${f.queries} dev queries, ` +
      "ranks past 25 count as misses. The sweep blends BM25F's scores as a search answers them (rounded to 3 decimals).",
    "",
    table(["ranking", "hit@1 % (vs off)", "hit@5 % (vs off)", "MRR"], rows),
    "",
    table(["tools", "BM25F alone p50 ms", "with the stage p50 / p95 ms", "added p50 ms", "tool vectors (once per content)"], costRows),
    ...costGoal(f.pathCosts),
  ].join("\n");
}

/** The goal for the stage's cost, at the largest team measured: at most 2 ms p50 added to a search. */
function costGoal(costs: readonly PathCost[]): string[] {
  const largest = costs.reduce<PathCost | undefined>((a, c) => (a && a.tools >= c.tools ? a : c), undefined);
  if (!largest) return [];
  const met = largest.addedP50 <= 2 ? "met" : "**not met**";
  return ["", `Goal: the stage adds ≤ 2 ms p50 to a search: ${largest.addedP50.toFixed(2)} ms at ${largest.tools.toLocaleString("en")} tools, ${met} (the p50 of each query's difference, one run).`];
}

function main(): void {
  if (isRender()) return renderRecorded<Figures>("semantic", (f) => `${markdown(f)}\n\n${pathMarkdown(f)}`);
  const smoke = isSmoke();
  const tools = corpusTools();
  let queries = loadQueries(QUERIES_FILE, new Set(tools.map((t) => t.name)));
  if (smoke) queries = queries.slice(0, 20);
  const embedder = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  const figures: Figures = {
    queries: queries.length,
    tools: tools.length,
    quality: quality(queries, tools, embedder),
    assets: assetSizes(),
    costs: costs(queries, tools, smoke ? 3 : 15),
    path: pathQuality(queries, embedder),
    pathCosts: [pathCost(queries, embedder, undefined, smoke ? 1 : 5), pathCost(queries, embedder, smoke ? 2_000 : 20_000, 1)],
  };
  const text = `${markdown(figures)}\n\n${pathMarkdown(figures)}`;
  console.log(text);
  writeResult("semantic", figures, text, smoke);
}

if (isMain(import.meta.url)) main();
