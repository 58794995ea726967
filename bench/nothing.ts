// `node bench/nothing.ts` (`npm run bench:nothing`): when a search should say that nothing loaded is useful, on the DEV
// queries only (bench/selection/queries.json; the holdout is never loaded). Positives: each dev query over the 421
// corpus tools (its right tool is there). Negatives: the same query with its right tools' servers taken out, and the
// queries of bench/selection/nothing.json (things no corpus server does) over the whole corpus. Each signal alone
// (coverage, cosine, score gap) and the rule's pairs of thresholds are scored by their false alarms on positives and
// their detections on negatives, stage on (static) and off; the rule shipped (USEFULNESS) is the sweep's best with at
// most 5% false alarms. Then the answer's o200k tokens on the negatives, the nothing-useful text against today's.
// `--smoke`: 20 dev queries, nothing written.
import { readFileSync } from "node:fs";
import { EMBEDDING_TABLE_PATH } from "../scripts/build-embedder.ts";
import { staticEmbedder } from "../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../src/catalog/embedding-table.ts";
import { renderSearchHits } from "../src/catalog/render.ts";
import { closestServers, renderNothingUseful } from "../src/catalog/render-nothing-useful.ts";
import { USEFULNESS, usefulBy, type UsefulnessRule } from "../src/catalog/search-usefulness.ts";
import { table } from "./lib/markdown.ts";
import { gather, loadNothingQueries, type Signals } from "./lib/nothing-signals.ts";
import { isSmoke, median, writeResult } from "./lib/results.ts";
import { vectorsOf } from "./lib/semantic-path.ts";
import { isMain } from "./report.ts";
import { judgedSearch, searchTools } from "../src/catalog/search.ts";
import { QUERIES_FILE, buildAll, corpusUpstreams, loadQueries, syntheticCopies, type Query } from "./selection.ts";
import { countTokens } from "./tokens.ts";

/** The false-alarm rate on positives a rule may have. */
const MAX_FALSE_ALARMS = 0.05;

interface Rates {
  falseAlarms: number;
  /** Detections among dev queries whose right servers were taken out, and among nothing.json's. */
  negatives: number;
  absent: number;
}

interface Row {
  setting: string;
  rule: string;
  rates: Rates;
}

const rate = (xs: readonly Signals[], flag: (s: Signals) => boolean): number => xs.filter(flag).length / Math.max(1, xs.length);

function ratesOf(signals: readonly Signals[], flag: (s: Signals) => boolean): Rates {
  const of = (kind: Signals["kind"]) => signals.filter((s) => s.kind === kind);
  return { falseAlarms: rate(of("positive"), flag), negatives: rate(of("negative"), flag), absent: rate(of("absent"), flag) };
}

/** One signal alone: flagged below the threshold that flags at most MAX_FALSE_ALARMS of positives. */
function alone(signals: readonly Signals[], value: (s: Signals) => number): { threshold: number; rates: Rates } {
  const positives = signals.filter((s) => s.kind === "positive").map(value).sort((a, b) => a - b);
  // Flag strictly below the value at the allowed share (ties at it are not flagged).
  const threshold = positives[Math.floor(MAX_FALSE_ALARMS * positives.length)] ?? 0;
  return { threshold, rates: ratesOf(signals, (s) => value(s) < threshold) };
}

const steps = (from: number, to: number, step: number): number[] => Array.from({ length: Math.round((to - from) / step) + 1 }, (_, k) => Math.round((from + k * step) * 1000) / 1000);

/** The best rule of the sweep: most detections (negatives and nothing.json's alike) within the false alarms allowed. */
function sweep(on: readonly Signals[], off: readonly Signals[]): UsefulnessRule {
  const better = (a: Rates, b: Rates | undefined) => !b || a.negatives + a.absent > b.negatives + b.absent || (a.negatives + a.absent === b.negatives + b.absent && a.falseAlarms < b.falseAlarms);
  let coverageAlone = 0;
  let bestOff: Rates | undefined;
  for (const c of steps(0, 1, 0.01)) {
    const r = ratesOf(off, (s) => !usefulBy({ ...USEFULNESS, coverageAlone: c }, s.coverage, undefined));
    if (r.falseAlarms <= MAX_FALSE_ALARMS && better(r, bestOff)) [coverageAlone, bestOff] = [c, r];
  }
  let rule: UsefulnessRule = { ...USEFULNESS, coverageAlone };
  let bestOn: Rates | undefined;
  for (const coverage of steps(0, 1, 0.01)) {
    for (const cosine of steps(0.2, 1, 0.005)) {
      const candidate = { ...USEFULNESS, coverage, cosine, coverageAlone };
      const r = ratesOf(on, (s) => !usefulBy(candidate, s.coverage, s.cosine));
      if (r.falseAlarms <= MAX_FALSE_ALARMS && better(r, bestOn)) [rule, bestOn] = [candidate, r];
    }
  }
  return rule;
}

interface Tokens {
  setting: string;
  /** Negatives the rule flags, and the median o200k tokens of their answer's text today and with the nothing-useful text. */
  flagged: number;
  todayP50: number;
  nowP50: number;
}

const WORDING = { thing: "tool", shown: (s: string) => s, openLoaded: `discover_tool {"server": "<name>"}`, openLazy: `load_mcp {"mcp_name": "<name>"}` };

/** The answer's tokens on the flagged negatives: renderSearchHits' text (today's) and renderNothingUseful's. */
function tokens(setting: string, signals: readonly Signals[], describe: (server: string) => string | undefined): Tokens {
  const flagged = signals.filter((s) => s.kind !== "positive" && !usefulBy(USEFULNESS, s.coverage, s.cosine));
  const today = flagged.map((s) => countTokens(renderSearchHits(s.query, s.hits)));
  const now = flagged.map((s) => countTokens(renderNothingUseful(s.query, closestServers(s.hits, [], describe), s.hits, WORDING)));
  return { setting, flagged: flagged.length, todayP50: median(today), nowP50: median(now) };
}

interface Cost {
  tools: number;
  /** searchTools alone and judgedSearch (the same search and its judgement), p50 ms over the dev queries, words only. */
  searchP50: number;
  judgedP50: number;
}

/** What the judgement adds to a search at the scale bench's size (the corpus among renamed copies). */
function cost(dev: readonly Query[], total: number): Cost {
  const corpus = corpusUpstreams();
  const indexes = buildAll([...corpus, ...syntheticCopies(corpus, total)]);
  const plain: number[] = [];
  const judged: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const q of dev) {
      const t0 = performance.now();
      searchTools(indexes, q.q);
      const t1 = performance.now();
      judgedSearch(indexes, q.q);
      plain.push(t1 - t0);
      judged.push(performance.now() - t1);
    }
  }
  return { tools: indexes.reduce((k, i) => k + i.tools.length, 0), searchP50: median(plain), judgedP50: median(judged) };
}

interface Figures {
  queries: number;
  absentQueries: number;
  tools: number;
  /** Negatives whose best hit has a right tool's own name on another server. */
  twins: Record<string, number>;
  chosen: UsefulnessRule;
  shipped: UsefulnessRule;
  rows: Row[];
  tokens: Tokens[];
  cost: Cost;
}

const pct = (x: number) => (100 * x).toFixed(1);

function markdown(f: Figures): string {
  const same = JSON.stringify(f.chosen) === JSON.stringify(f.shipped);
  return [
    `## Nothing useful (search's judgement of its hits)`,
    `When a search says that nothing loaded does what the query asks (\`npm run bench:nothing\`, ` +
      `src/catalog/search-usefulness.ts), on the ${f.queries} DEV queries only (the holdout is never loaded) over the ` +
      `${f.tools} corpus tools. A false alarm: a dev query whose right tool is there, judged not useful. A detection: ` +
      `the same query with its right tools' servers taken out (a near twin on another server may remain: the best hit ` +
      `had a right tool's own name on another server ${f.twins["off"]} times off, ${f.twins["static"]} on), or one of ` +
      `${f.absentQueries} queries for things no corpus server does (\`bench/selection/nothing.json\`), judged not useful. ` +
      `Each signal alone is flagged below the value that keeps false alarms at ${pct(MAX_FALSE_ALARMS)}%; the rule's ` +
      `thresholds are the sweep's best within that.`,
    table(
      ["Stage", "Rule", "False alarms (positives)", "Detected: right servers out", "Detected: nothing.json"],
      f.rows.map((r) => [r.setting, r.rule, `${pct(r.rates.falseAlarms)}%`, `${pct(r.rates.negatives)}%`, `${pct(r.rates.absent)}%`]),
    ),
    `Shipped \`USEFULNESS\`: ${JSON.stringify(f.shipped)}${same ? " (the sweep's choice)" : `; the sweep now chooses ${JSON.stringify(f.chosen)}`}.`,
    `The answer's text on the flagged negatives (o200k, median): today's list of hits against the nothing-useful ` +
      `answer (its first line, up to 3 closest servers with their lines, up to 3 weak hits).`,
    table(
      ["Stage", "Flagged", "Today p50", "Nothing-useful p50"],
      f.tokens.map((t) => [t.setting, String(t.flagged), String(t.todayP50), String(t.nowP50)]),
    ),
    `The judgement's cost at ${f.cost.tools.toLocaleString("en-US")} tools (words only, p50 over the dev queries, twice): ` +
      `a search ${f.cost.searchP50.toFixed(2)} ms, the same search judged ${f.cost.judgedP50.toFixed(2)} ms.`,
  ].join("\n\n");
}

function main(): void {
  const smoke = isSmoke();
  const upstreams = corpusUpstreams();
  const indexes = buildAll(upstreams);
  let dev = loadQueries(QUERIES_FILE, new Set(indexes.flatMap((i) => i.tools.list().map((t) => t.name))));
  if (smoke) dev = dev.slice(0, 20);
  const absent = loadNothingQueries();
  const embedder = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  const off = gather(indexes, undefined, embedder, dev, absent);
  const on = gather(indexes, vectorsOf(indexes, embedder), embedder, dev, absent);
  const chosen = sweep(on, off);
  const rows: Row[] = [];
  for (const [setting, signals] of [["off", off], ["static", on]] as const) {
    const signalRows: Array<[string, (s: Signals) => number]> = [["coverage", (s) => s.coverage], ["score gap", (s) => s.gap]];
    if (setting === "static") signalRows.push(["best cosine", (s) => s.cosine ?? 0]);
    for (const [name, value] of signalRows) {
      const { threshold, rates } = alone(signals, value);
      rows.push({ setting, rule: `${name} alone < ${threshold.toFixed(3)}`, rates });
    }
    const rule = setting === "off" ? `coverage < ${USEFULNESS.coverageAlone}` : `coverage < ${USEFULNESS.coverage} and cosine < ${USEFULNESS.cosine}`;
    rows.push({ setting, rule: `USEFULNESS: ${rule}`, rates: ratesOf(signals, (s) => !usefulBy(USEFULNESS, s.coverage, s.cosine)) });
  }
  const descriptions = new Map(upstreams.map((u) => [u.name, u.description]));
  const figures: Figures = {
    queries: dev.length,
    absentQueries: absent.length,
    tools: indexes.reduce((k, i) => k + i.tools.length, 0),
    twins: { off: off.filter((s) => s.twin).length, static: on.filter((s) => s.twin).length },
    chosen,
    shipped: USEFULNESS,
    rows,
    tokens: [tokens("off", off, (s) => descriptions.get(s)), tokens("static", on, (s) => descriptions.get(s))],
    cost: cost(dev, smoke ? 2_000 : 20_000),
  };
  const text = markdown(figures);
  console.log(text);
  writeResult("nothing", figures, text, smoke);
}

if (isMain(import.meta.url)) main();
