// `node bench/mixed.ts` (`npm run bench:mixed`): does the search hold when the corpus is hidden among ~20,000 tools,
// with the semantic stage as the Worker runs it (static embedder, int8 tool vectors, BLEND) beside BM25F alone? The
// teams are bench/selection.ts's: the 421 corpus tools; _copies_ (renamed copies of the corpus servers, a copy of the
// right tool is the right tool, folded); _mixed_ (synthetic servers whose tools each take a corpus tool's name, a
// second's description and a third's schema, under a corpus server's description: each real name has ~47 namesakes
// whose other fields do not agree with it). DEV queries only by default; `--holdout` adds the holdout's rows (the lead
// runs it once, at the end). `--misses` prints what ranks above the right tool on the mixed team's missed dev queries.
// `--smoke`: 20 queries, a 2,000-tool team, nothing written.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { EMBEDDING_TABLE_PATH } from "../scripts/build-embedder.ts";
import { staticEmbedder, type StaticEmbedder } from "../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../src/catalog/embedding-table.ts";
import { rankTools, type ToolIndex } from "../src/catalog/search.ts";
import { BLEND } from "../src/catalog/semantic-blend.ts";
import type { ToolVectors } from "../src/catalog/semantic-vectors.ts";
import { missKinds, type MissKinds } from "./lib/mixed-misses.ts";
import { vectorsOf } from "./lib/semantic-path.ts";
import { table } from "./lib/markdown.ts";
import { isRender, isSmoke, renderRecorded, writeResult } from "./lib/results.ts";
import { isMain } from "./report.ts";
import {
  HOLDOUT_FILE,
  QUERIES_FILE,
  buildAll,
  corpusUpstreams,
  loadQueries,
  rankOf,
  scores,
  syntheticCopies,
  syntheticMixed,
  type Query,
  type Scores,
} from "./selection.ts";

/** The synthetic teams' size, and the mixed team's seed (bench/selection.ts's). */
const SCALE_TOOLS = 20_000;
const MIXED_SEED = 14;
/** Ranks past this count as not found, as discover_tool answers 25 at most. */
const DEPTH = 25;

type Team = "corpus" | "copies" | "mixed";
const TEAMS: readonly Team[] = ["corpus", "copies", "mixed"];

interface Row {
  team: Team;
  tools: number;
  set: "dev" | "holdout";
  stage: "off" | "static";
  scores: Scores;
}

/** A copy `gitlab-3/x` is the tool `gitlab/x`; other names are themselves. */
const sameTool = (name: string): string => name.replace(/^([^/]*?)-\d+\//, "$1/");


/** Names best first, copies of one tool folded into the first, the first DEPTH. */
function folded(names: readonly string[], fold: boolean): string[] {
  if (!fold) return names.slice(0, DEPTH);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const name of names) {
    const base = sameTool(name);
    if (seen.has(base)) continue;
    seen.add(base);
    out.push(base);
    if (out.length >= DEPTH) break;
  }
  return out;
}

/** Every query's ranked names (folded for copies) with the stage off and on. */
function ranked(indexes: readonly ToolIndex[], vectors: readonly ToolVectors[], queries: readonly Query[], embedder: StaticEmbedder, fold: boolean) {
  return {
    off: queries.map((q) => folded(rankTools(indexes, q.q).map((h) => h.name), fold)),
    static: queries.map((q) =>
      folded(rankTools(indexes, q.q, { meaning: { vector: embedder.embedOne(q.q), vectors } }).map((h) => h.name), fold),
    ),
  };
}

interface Figures {
  /** The 1-minute load average when the run started. */
  load: number;
  blend: typeof BLEND;
  rows: Row[];
  misses?: MissKinds | undefined;
  /** How many dev queries the run scored (absent in results recorded before it was kept). */
  devQueries?: number | undefined;
}

function measure(dev: readonly Query[], holdout: readonly Query[] | undefined, embedder: StaticEmbedder, smoke: boolean, misses: boolean): Figures {
  const load = loadavg()[0]!;
  const corpus = corpusUpstreams();
  const total = smoke ? 2_000 : SCALE_TOOLS;
  const rows: Row[] = [];
  let kinds: MissKinds | undefined;
  for (const team of TEAMS) {
    const upstreams =
      team === "corpus" ? corpus : [...corpus, ...(team === "copies" ? syntheticCopies(corpus, total) : syntheticMixed(corpus, total, MIXED_SEED))];
    const indexes = buildAll(upstreams);
    const vectors = vectorsOf(indexes, embedder);
    const tools = indexes.reduce((k, i) => k + i.tools.length, 0);
    const sets: Array<["dev" | "holdout", readonly Query[]]> = [["dev", dev], ...(holdout ? [["holdout", holdout] as ["holdout", readonly Query[]]] : [])];
    for (const [set, queries] of sets) {
      const r = ranked(indexes, vectors, queries, embedder, team === "copies");
      for (const stage of ["off", "static"] as const) rows.push({ team, tools, set, stage, scores: scores(queries.map((q, i) => rankOf(r[stage][i]!, q))) });
      if (misses && team === "mixed" && set === "dev") kinds = missKinds(upstreams, queries, r);
    }
  }
  return { load, blend: BLEND, rows, misses: kinds, devQueries: dev.length };
}

const pct = (x: number): string => (100 * x).toFixed(1);

function markdown(f: Figures, devQueries: number): string {
  const at = (team: Team, set: string, stage: string) => f.rows.find((r) => r.team === team && r.set === set && r.stage === stage);
  const fall = (r: Row): string => {
    const base = at("corpus", r.set, r.stage);
    return r.team === "corpus" || !base ? "—" : `${pct(base.scores.hit5 - r.scores.hit5)}`;
  };
  const b = f.blend;
  return [
    "## Tool selection among 20,000 tools, with the semantic stage",
    "",
    `\`npm run bench:mixed\`: the corpus alone and hidden among ~20,000 synthetic tools (_copies_ and _mixed_, as above), ` +
      `BM25F alone (\`search.semantic\` off) and with the static stage as the Worker runs it (int8 tool vectors, ` +
      `${b.lexical} BM25F / ${(1 - b.lexical).toFixed(1)} cosine, BM25F's best ${b.pool} or ${b.poolShare * 100}% of the tools if more, and the ${b.nearest} nearest), ` +
      `${devQueries} dev queries; holdout rows only in a run with \`--holdout\` (run once, at the end of a change to the ranking). Ranks past ${DEPTH} are misses; ` +
      "copies of one tool are folded into the first. The fall is hit@5 points below the same stage over the 421 corpus tools (goal ≤ 10 among mixed). " +
      `Load average (1 min) at the start: ${f.load.toFixed(1)} on the machine's cores.`,
    "",
    table(
      ["team", "tools", "set", "stage", "hit@1 %", "hit@5 %", "MRR", "hit@5 fall (points)"],
      f.rows.map((r) => [r.team, r.tools.toLocaleString("en-US"), r.set, r.stage, pct(r.scores.hit1), pct(r.scores.hit5), r.scores.mrr.toFixed(3), fall(r)]),
      ["---", "--:", "---", "---", "--:", "--:", "--:", "--:"],
    ),
    ...goals(f),
    ...(f.misses ? ["", ...missTable(f.misses)] : []),
  ].join("\n");
}

/** The goals on the holdout's rows, when this run has them (the run that scores the holdout once). */
function goals(f: Figures): string[] {
  const at = (team: Team, stage: string) => f.rows.find((r) => r.team === team && r.set === "holdout" && r.stage === stage)?.scores;
  const [off, on, mixed] = [at("corpus", "off"), at("corpus", "static"), at("mixed", "static")];
  if (!off || !on || !mixed) return [];
  const met = (ok: boolean) => (ok ? "met" : "**not met**");
  const signed = (x: number) => `${x >= 0 ? "+" : "−"}${pct(Math.abs(x))}`;
  const lifts = on.hit1 - off.hit1 >= 0.02 && on.hit5 >= off.hit5;
  return [
    "",
    `Goals on the holdout, with the best configuration that runs offline (the static stage; the holdout scored with the ` +
      `stage once, by this run): hit@5 ≥ 80%: ${pct(on.hit5)}, ${met(on.hit5 >= 0.8)}; hit@1 ≥ 55%: ${pct(on.hit1)}, ` +
      `${met(on.hit1 >= 0.55)}. The stage is on by default only if it lifts hit@1 by ≥ 2 points without lowering hit@5: ` +
      `${signed(on.hit1 - off.hit1)} and ${signed(on.hit5 - off.hit5)} points, ${met(lifts)} (its cost, ≤ 2 ms p50 a search: ` +
      `"The stage as the Worker runs it"). Among 20,030 mixed tools hit@5 falls by ≤ 10 points: ${pct(on.hit5 - mixed.hit5)}, ` +
      `${met(on.hit5 - mixed.hit5 <= 0.1)}.`,
  ];
}

/** With `--misses`: what ranks above the right tool among the first five on the mixed team's missed dev queries. */
function missTable(m: MissKinds): string[] {
  const stages = Object.keys(m.stages);
  const kinds = [...new Set(stages.flatMap((s) => Object.keys(m.stages[s]!.above)))];
  const count = (s: string, k: string) => m.stages[s]!.above[k] ?? 0;
  kinds.sort((a, b) => count(stages[0]!, b) - count(stages[0]!, a));
  return [
    `What ranks above the right tool, among the first five, on the mixed team's missed dev queries (` +
      stages.map((s) => `${m.stages[s]!.misses} missed with the stage ${s}`).join(", ") + "): a corpus tool, or a synthetic one by its name (the right tool's, a sibling's of its server, other), its description and its server's description.",
    "",
    table(["tool ranked above", ...stages.map((s) => `stage ${s}`)], kinds.map((k) => [k, ...stages.map((s) => String(count(s, k)))]), ["---", ...stages.map(() => "--:")]),
  ];
}

function main(): void {
  if (isRender()) return renderRecorded<Figures>("mixed", (f) => markdown(f, f.devQueries ?? 280));
  const smoke = isSmoke();
  const known = new Set(corpusUpstreams().flatMap((u) => u.tools.map((t) => `${u.name}/${t.name}`)));
  const cut = (qs: Query[]) => (smoke ? qs.slice(0, 20) : qs);
  const dev = cut(loadQueries(QUERIES_FILE, known));
  const holdout = process.argv.includes("--holdout") ? cut(loadQueries(HOLDOUT_FILE, known)) : undefined;
  const embedder = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  const figures = measure(dev, holdout, embedder, smoke, process.argv.includes("--misses"));
  const text = markdown(figures, dev.length);
  console.log(text);
  if (figures.misses) console.log(JSON.stringify(figures.misses, null, 1));
  writeResult("mixed", figures, text, smoke);
}

if (isMain(import.meta.url)) main();
