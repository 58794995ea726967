// `npm run bench:tokenizer`: the Worker's o200k_base counter (src/catalog/tokenizer.ts over the table that
// scripts/build-tokenizer.ts writes) against js-tiktoken, which the benchmarks count with: the table's size, the time
// from its bytes to a ready counter, and the time to count the 20-server catalog text (discover_tool's description
// with every corpus server loaded) and the same servers' tool lists as JSON. Cold figures come from fresh processes
// (a new isolate pays them once: compiling the pre-tokenizer's regular expression, warming the code); warm ones are
// medians in one process. Both counters must agree on every text. `--smoke`: few repetitions, nothing written.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const TABLE = join(import.meta.dirname, "..", "assets", "tokenizer", "o200k_base.bin");

interface Cold {
  /** Importing the counter's module (ours: src/catalog/tokenizer.ts; js-tiktoken: its lite build and the ranks). */
  importMs: number;
  /** From what the module holds (ours: the table's bytes; js-tiktoken: its ranks) to a counter. */
  loadMs: number;
  /** The first count of the text, then the second. */
  firstCountMs: number;
  secondCountMs: number;
  tokens: number;
}

/** One cold run in this (fresh) process: `--cold ours|js-tiktoken <text file>`; prints its figures as JSON. */
async function coldRun(which: string, textFile: string): Promise<Cold> {
  const text = readFileSync(textFile, "utf8");
  const bytes = which === "ours" ? readFileSync(TABLE) : undefined;
  const t0 = performance.now();
  let count: (s: string) => number;
  let t1: number;
  let t2: number;
  if (bytes) {
    const { tokenCounterFromTable } = await import("../src/catalog/tokenizer.ts");
    t1 = performance.now();
    const counter = tokenCounterFromTable(bytes);
    t2 = performance.now();
    count = (s) => counter.count(s);
  } else {
    const [{ Tiktoken }, ranks] = await Promise.all([import("js-tiktoken/lite"), import("js-tiktoken/ranks/o200k_base")]);
    t1 = performance.now();
    const encoder = new Tiktoken(ranks.default);
    t2 = performance.now();
    count = (s) => encoder.encode(s, [], []).length;
  }
  const tokens = count(text);
  const t3 = performance.now();
  count(text);
  const t4 = performance.now();
  return { importMs: t1 - t0, loadMs: t2 - t1, firstCountMs: t3 - t2, secondCountMs: t4 - t3, tokens };
}

async function main(): Promise<void> {
  const [{ getEncoding }, { tokenCounterFromTable }, { renderDiscoverDescription }, { loadCorpus }, { CORPUS_SERVERS }, results, { table }] =
    await Promise.all([
      import("js-tiktoken"),
      import("../src/catalog/tokenizer.ts"),
      import("../src/catalog/render.ts"),
      import("../harness/replay-server.ts"),
      import("./tokens.ts"),
      import("./lib/results.ts"),
      import("./lib/markdown.ts"),
    ]);
  const { isSmoke, median, writeResult } = results;
  const smoke = isSmoke();
  const reps = smoke ? { cold: 1, load: 3, count: 3, build: 1 } : { cold: 7, load: 50, count: 50, build: 3 };

  const servers = CORPUS_SERVERS.map((s) => ({ name: s.name, tools: loadCorpus(s.file).tools }));
  const catalog = renderDiscoverDescription({
    mode: "multi",
    groups: servers.map((s) => ({ server: s.name, state: "ready" as const, tools: s.tools })),
    lazy: [],
    dynamic: false,
  });
  const toolsJson = JSON.stringify(servers.flatMap((s) => s.tools.map((t) => ({ name: `${s.name}/${t.name}`, description: t.description, input_schema: t.inputSchema }))));

  // Cold: each run a fresh Node process, so each pays what a new isolate pays.
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-tokenizer-"));
  const textFile = join(dir, "catalog.txt");
  writeFileSync(textFile, catalog);
  const cold = (which: string): Cold[] =>
    Array.from({ length: reps.cold }, () => {
      const run = spawnSync(process.execPath, [import.meta.filename, "--cold", which, textFile], { encoding: "utf8" });
      if (run.status !== 0) throw new Error(`cold run of ${which} failed:\n${run.stderr}`);
      return JSON.parse(run.stdout) as Cold;
    });
  let coldOurs: Cold[];
  let coldTiktoken: Cold[];
  try {
    coldOurs = cold("ours");
    coldTiktoken = cold("js-tiktoken");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const coldMedian = (runs: Cold[]) => ({
    importMs: median(runs.map((r) => r.importMs)),
    loadMs: median(runs.map((r) => r.loadMs)),
    firstCountMs: median(runs.map((r) => r.firstCountMs)),
    secondCountMs: median(runs.map((r) => r.secondCountMs)),
  });

  // Warm: in this process, after the code has run many times.
  const bytes = new Uint8Array(readFileSync(TABLE));
  const timeIt = (n: number, f: () => unknown): number[] =>
    Array.from({ length: n }, () => {
      const t = performance.now();
      f();
      return performance.now() - t;
    });
  const ours = tokenCounterFromTable(bytes);
  const reference = getEncoding("o200k_base");
  const theirs = (s: string) => reference.encode(s, [], []).length;
  const texts = { catalog, toolsJson };
  const agree = Object.entries(texts).map(([name, text]) => ({ name, chars: text.length, ours: ours.count(text), theirs: theirs(text) }));
  const differ = agree.filter((a) => a.ours !== a.theirs);
  if (differ.length) throw new Error(`counts differ: ${JSON.stringify(differ)}`);
  timeIt(reps.load, () => tokenCounterFromTable(bytes));
  const loadMs = median(timeIt(reps.load, () => tokenCounterFromTable(bytes)));
  const { Tiktoken } = await import("js-tiktoken/lite");
  const { default: o200k } = await import("js-tiktoken/ranks/o200k_base");
  const buildMs = median(timeIt(reps.build, () => new Tiktoken(o200k)));
  const warm = (text: string) => {
    timeIt(reps.count, () => ours.count(text));
    timeIt(reps.count, () => theirs(text));
    return {
      ours: median(timeIt(reps.count, () => ours.count(text))),
      // A new counter each time: the code is warm, its piece cache empty.
      oursEmptyCache: median(timeIt(reps.count, () => tokenCounterFromTable(bytes).count(text))),
      jsTiktoken: median(timeIt(reps.count, () => theirs(text))),
    };
  };
  const countMs = { catalog: warm(catalog), toolsJson: warm(toolsJson) };
  const size = { bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  const figures = { size, texts: agree, cold: { ours: coldMedian(coldOurs), jsTiktoken: coldMedian(coldTiktoken), runs: reps.cold }, warm: { loadMs, jsTiktokenBuildMs: buildMs, countMs } };

  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n >= 1 ? n.toFixed(2) : n.toFixed(3));
  const kib = (n: number) => (n / 1024).toFixed(0);
  const c = figures.cold;
  const [cat, json] = agree as [(typeof agree)[number], (typeof agree)[number]];
  const markdown = `## Token counting in the Worker

\`discover_tool\`'s catalog is kept within a token budget counted as these benchmarks count (o200k_base, special-token text as ordinary text). The Worker counts with \`src/catalog/tokenizer.ts\` over a table that \`scripts/build-tokenizer.ts\` precomputes from js-tiktoken's ranks (token bytes in rank order, offsets, an open-addressing hash table), served through the static-assets binding: ${kib(size.bytes)} KiB (gzip ${kib(size.gzipBytes)} KiB), outside the Worker's bundle. Loading it wraps its bytes in typed arrays. Counted here: the 20-server catalog text (discover_tool's description with every corpus server loaded, ${cat.chars.toLocaleString("en")} characters, ${cat.ours.toLocaleString("en")} tokens) and those servers' tools as a host would get them directly (${json.chars.toLocaleString("en")} characters, ${json.ours.toLocaleString("en")} tokens). Both counters give the same counts; \`test/unit/tokenizer.test.ts\` checks that on the corpus, every token of the vocabulary, hard strings and a seeded fuzz.

Cold, medians of ${c.runs} fresh Node processes (what a new isolate pays once; ms; importing ours includes Node stripping its types, which a bundled Worker does not pay):

${table(
    ["", "import the module", "bytes or ranks → counter", "first count of the catalog", "second count"],
    [
      ["this table", f(c.ours.importMs), f(c.ours.loadMs), f(c.ours.firstCountMs), f(c.ours.secondCountMs)],
      ["js-tiktoken (lite + o200k ranks)", f(c.jsTiktoken.importMs), f(c.jsTiktoken.loadMs), f(c.jsTiktoken.firstCountMs), f(c.jsTiktoken.secondCountMs)],
    ],
    ["---", "--:", "--:", "--:", "--:"],
  )}

Warm, medians of ${reps.count} runs in one process (ms):

${table(
    ["", "load (bytes → counter)", "count the catalog", "count the tools JSON"],
    [
      ["this table", f(loadMs), `${f(countMs.catalog.ours)} (empty piece cache: ${f(countMs.catalog.oursEmptyCache)})`, `${f(countMs.toolsJson.ours)} (empty piece cache: ${f(countMs.toolsJson.oursEmptyCache)})`],
      ["js-tiktoken", f(buildMs), f(countMs.catalog.jsTiktoken), f(countMs.toolsJson.jsTiktoken)],
    ],
    ["---", "--:", "--:", "--:"],
  )}

Most of a cold first count is V8 compiling o200k's pre-tokenizer pattern (Unicode property classes) at its first use and running the counter's code before it is optimized; warm, the pattern's matching is most of the time left. The table's import is the asset fetch in the Worker, not measured here.`;
  console.log(markdown);
  console.log(`FIGURES ${JSON.stringify(figures)}`);
  writeResult("tokenizer", figures, markdown, smoke);
}

if (process.argv[2] === "--cold") {
  process.stdout.write(JSON.stringify(await coldRun(process.argv[3]!, process.argv[4]!)));
} else if (import.meta.main) {
  await main();
}
