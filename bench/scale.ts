// `npm run bench:scale`: how the catalog grows with the team. Synthetic teams of 10, 100 and 1,000 upstreams (the
// 20 corpus catalogs repeated under new names): render time and token size of discover_tool's description, the name
// index and lookups, in-process; then one point through the running proxy at 100 upstreams (and 10 beside it).
// Reports medians over repeated runs and where the description alone outgrows a 200k-token context window.
// `--smoke`: 10 and 100 upstreams, few repetitions, nothing written.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TopLevelSpec } from "vega-lite";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { CATALOG_BUDGET } from "../src/config/schema.ts";
import type { CatalogGroup, CatalogView } from "../src/catalog/catalog.ts";
import { exposedName } from "../src/catalog/names.ts";
import { renderDiscoverDescription, renderToolDetails, renderUnknownTool } from "../src/catalog/render.ts";
import { connectClient, provisionTeam } from "../harness/clients.ts";
import { loadCorpus, startReplayServer, type CorpusServer } from "../harness/replay-server.ts";
import { table } from "./lib/markdown.ts";
import { isSmoke, median, percentiles, writeResult, type Percentiles } from "./lib/results.ts";
import { random } from "./lib/random.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { teardown } from "./lib/teardown.ts";
import { isMain, writeChart } from "./report.ts";
import { CORPUS_SERVERS, LOCAL_VARS, countTokens } from "./tokens.ts";

const WINDOW = 200_000;
/** A tenth of the window: a description this large already crowds out the conversation. */
const CROWDED = 20_000;

export interface Upstream {
  name: string;
  description: string;
  tools: Tool[];
  catalog: CorpusServer;
}

/** The corpus in alphabetical order of server name, so the first 10 upstreams are a mix of large and small. */
const BASES = [...CORPUS_SERVERS]
  .sort((a, b) => (a.name < b.name ? -1 : 1))
  .map((s) => ({ ...s, catalog: loadCorpus(s.file) }));

/** Upstream i is corpus server i mod 20, named `<server>-<copy>`. */
export function syntheticTeam(n: number): Upstream[] {
  return Array.from({ length: n }, (_, i) => {
    const base = BASES[i % BASES.length]!;
    return {
      name: `${base.name}-${Math.floor(i / BASES.length) + 1}`,
      description: base.description,
      tools: base.catalog.tools as Tool[],
      catalog: base.catalog,
    };
  });
}

const eagerView = (team: Upstream[]): CatalogView => ({
  mode: "multi",
  groups: team.map((u): CatalogGroup => ({ server: u.name, state: "ready", tools: u.tools })),
  lazy: [],
  dynamic: false,
});
const lazyView = (team: Upstream[]): CatalogView => ({
  mode: "multi",
  groups: [],
  lazy: team.map((u) => ({ name: u.name, description: u.description })),
  dynamic: true,
});

interface Exposed {
  exposedName: string;
  upstream: string;
  tool: Tool;
}

/** The name index exactly as UpstreamRegistry.tools() builds it in config-file mode. */
function buildIndex(team: Upstream[]): Map<string, Exposed> {
  const index = new Map<string, Exposed>();
  for (const u of team) {
    for (const tool of u.tools) {
      const name = exposedName("multi", u.name, tool.name);
      index.set(name, { exposedName: name, upstream: u.name, tool });
    }
  }
  return index;
}

/** discover_tool's work for a known name: the index lookup and the answer text (src/views/discover-answers.ts). */
function discoverAnswer(index: Map<string, Exposed>, name: string): string {
  const target = index.get(name);
  if (!target) return renderUnknownTool(name, [...index.keys()]);
  return renderToolDetails({ ...target.tool, name: target.exposedName });
}

/** Milliseconds of `fn`, `reps` times after one warm-up run. */
function timeIt(reps: number, fn: () => unknown): number[] {
  fn();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

interface SizeFigures {
  upstreams: number;
  tools: number;
  reps: number;
  renderMs: number;
  chars: number;
  tokens: number;
  tokensPerTool: number;
  lazyTokens: number;
  indexMs: number;
  lookupUs: number;
  discoverUs: number;
  unknownMs: number;
}

interface ProxyFigures {
  upstreams: number;
  tools: number;
  sessions: number;
  firstListMs: number;
  firstListAll: number[];
  laterListMs: number;
  discover: Percentiles;
  descriptionTokens: number;
  sameAsInProcess: boolean;
}

interface Crossing {
  limit: number;
  mode: "config-file" | "dynamic";
  /** The smallest team over the limit, its tools and its description's tokens. */
  upstreams: number;
  tools: number;
  tokens: number;
}

export interface Figures {
  sizes: SizeFigures[];
  crossings: Crossing[];
  proxy: ProxyFigures[];
  smoke: boolean;
}

function measureSize(n: number, smoke: boolean): SizeFigures {
  const team = syntheticTeam(n);
  const tools = team.reduce((k, u) => k + u.tools.length, 0);
  const reps = smoke ? 3 : n >= 1000 ? 11 : 31;
  const view = eagerView(team);
  const description = renderDiscoverDescription(view);
  const renderMs = median(timeIt(reps, () => renderDiscoverDescription(eagerView(team))));
  const indexMs = median(timeIt(reps, () => buildIndex(team)));
  const index = buildIndex(team);
  const names = [...index.keys()];
  const rnd = random(n);
  const sample = Array.from({ length: 2000 }, () => names[Math.floor(rnd() * names.length)]!);
  // Per-call figures from batches: a single Map.get is below the timer's resolution.
  // Per-call figures from batches (a single Map.get is below the timer's resolution); the sums keep the work observable.
  let sink = 0;
  const lookupUs =
    median(timeIt(reps, () => sample.forEach((name) => (sink += index.get(name) ? 1 : 0)))) * (1000 / sample.length);
  const discoverUs =
    median(timeIt(reps, () => sample.forEach((name) => (sink += discoverAnswer(index, name).length)))) * (1000 / sample.length);
  if (sink === 0) throw new Error("no lookup found anything");
  // A misspelt name: every known name is ranked by edit distance.
  const unknownMs = median(timeIt(Math.min(reps, smoke ? 2 : 7), () => discoverAnswer(index, "github-1/create_pull_requset")));
  const tokens = countTokens(description);
  return {
    upstreams: n,
    tools,
    reps,
    renderMs,
    chars: description.length,
    tokens,
    tokensPerTool: tokens / tools,
    lazyTokens: countTokens(renderDiscoverDescription(lazyView(team))),
    indexMs,
    lookupUs,
    discoverUs,
    unknownMs,
  };
}

/** The smallest team whose description alone has more than `limit` tokens (a bisection; tokens grow with n). */
function crossing(limit: number, mode: Crossing["mode"], guess: number): Crossing {
  const tokensAt = (n: number) => countTokens(renderDiscoverDescription(mode === "dynamic" ? lazyView(syntheticTeam(n)) : eagerView(syntheticTeam(n))));
  let lo = 1;
  let hi = Math.max(2, guess);
  while (tokensAt(hi) <= limit) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (tokensAt(mid) > limit) hi = mid;
    else lo = mid;
  }
  return { limit, mode, upstreams: hi, tools: syntheticTeam(hi).reduce((k, u) => k + u.tools.length, 0), tokens: tokensAt(hi) };
}

export async function throughProxy(sizes: number[], smoke: boolean): Promise<ProxyFigures[]> {
  const largest = syntheticTeam(Math.max(...sizes));
  const replay = await startReplayServer(Object.fromEntries(largest.map((u) => [u.name, { catalog: u.catalog }])));
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-scale-"));
  const state = join(dir, "state");
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    const tokens = Object.fromEntries(
      sizes.map((n) => [
        n,
        // The largest budget a config may set: this section shows the catalog as it grows unshortened (bench/budget.ts
        // measures the default budget at scale).
        provisionTeam(dir, state, `scale-${n}`, {
          catalog_budget: CATALOG_BUDGET.max,
          mcp: Object.fromEntries(syntheticTeam(n).map((u) => [u.name, { url: replay.url(u.name) }])),
        }),
      ]),
    );
    // A copy of src/ taken now: wrangler dev restarts on every edit of src/, which would drop the sessions mid-run.
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: state, vars: LOCAL_VARS, config: snapshot.config });
    // The sizes are interleaved (session by session, call by call), so drift in the machine's load hits them alike.
    const sessions = smoke ? 1 : 7;
    const calls = smoke ? 10 : 300;
    const url = (n: number) => `${proxy!.url}/t/scale-${n}/mcp`;
    const first = new Map<number, number[]>(sizes.map((n) => [n, []]));
    const later = new Map<number, number[]>(sizes.map((n) => [n, []]));
    const discover = new Map<number, number[]>(sizes.map((n) => [n, []]));
    const description = new Map<number, string>();
    for (let s = 0; s < sessions; s++) {
      for (const n of sizes) {
        const { client, transport } = await connectClient(url(n), tokens[n]!);
        try {
          let t = performance.now();
          const { tools } = await client.listTools();
          first.get(n)!.push(performance.now() - t);
          description.set(n, tools.find((x) => x.name === "discover_tool")?.description ?? "");
          for (let k = 0; k < 3; k++) {
            t = performance.now();
            await client.listTools();
            later.get(n)!.push(performance.now() - t);
          }
        } finally {
          await transport.terminateSession().catch(() => undefined);
          await client.close().catch(() => undefined);
        }
      }
    }
    const open = await Promise.all(sizes.map((n) => connectClient(url(n), tokens[n]!)));
    try {
      await Promise.all(open.map((o) => o.client.listTools()));
      const names = sizes.map((n) => syntheticTeam(n).flatMap((u) => u.tools.map((x) => exposedName("multi", u.name, x.name))));
      const rnd = random(sizes.length);
      for (let k = 0; k < calls; k++) {
        for (let i = 0; i < sizes.length; i++) {
          const name = names[i]![Math.floor(rnd() * names[i]!.length)]!;
          const t = performance.now();
          const r = await open[i]!.client.callTool({ name: "discover_tool", arguments: { tool_name: name } });
          discover.get(sizes[i]!)!.push(performance.now() - t);
          if (r.isError) {
            const why = (r.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");
            throw new Error(`discover_tool ${name} failed at ${sizes[i]} upstreams: ${why.slice(0, 500)}`);
          }
        }
      }
    } finally {
      for (const o of open) {
        await o.transport.terminateSession().catch(() => undefined);
        await o.client.close().catch(() => undefined);
      }
    }
    const out: ProxyFigures[] = [];
    for (const n of sizes) {
      const team = syntheticTeam(n);
      const text = description.get(n) ?? "";
      const fig: ProxyFigures = {
        upstreams: n,
        tools: team.reduce((k, u) => k + u.tools.length, 0),
        sessions,
        firstListMs: median(first.get(n)!),
        firstListAll: first.get(n)!.map((x) => Math.round(x)),
        laterListMs: median(later.get(n)!),
        discover: percentiles(discover.get(n)!),
        descriptionTokens: countTokens(text),
        sameAsInProcess: text === renderDiscoverDescription(eagerView(team)),
      };
      if (!fig.sameAsInProcess) console.warn(`WARNING: the proxy's description at ${n} upstreams differs from the in-process render`);
      console.log(
        `proxy, ${n} upstreams: first tools/list ${fig.firstListMs.toFixed(0)} ms (median of ${sessions}), later ${fig.laterListMs.toFixed(1)} ms; ` +
          `discover_tool p50 ${fig.discover.p50.toFixed(2)} ms, p95 ${fig.discover.p95.toFixed(2)} ms (${calls} calls); description ${fig.descriptionTokens} tokens`,
      );
      out.push(fig);
    }
    return out;
  } finally {
    await teardown({ proxy, snapshot, replay, dir });
  }
}

async function main(): Promise<void> {
  const smoke = isSmoke();
  const sizes = smoke ? [10, 100] : [10, 100, 1000];
  const figures: Figures = { sizes: [], crossings: [], proxy: [], smoke };
  for (const n of sizes) {
    const f = measureSize(n, smoke);
    figures.sizes.push(f);
    console.log(
      `in-process, ${n} upstreams (${f.tools} tools): render ${f.renderMs.toFixed(2)} ms; ${f.tokens} tokens (${f.tokensPerTool.toFixed(1)} per tool; dynamic mode ${f.lazyTokens}); ` +
        `index ${f.indexMs.toFixed(2)} ms; lookup ${f.lookupUs.toFixed(3)} µs; discover answer ${f.discoverUs.toFixed(1)} µs; unknown name ${f.unknownMs.toFixed(1)} ms`,
    );
  }
  const last = figures.sizes.at(-1)!;
  const perUpstream = last.tokens / last.upstreams;
  const perLazy = last.lazyTokens / last.upstreams;
  for (const limit of smoke ? [CROWDED] : [CROWDED, WINDOW]) {
    figures.crossings.push(crossing(limit, "config-file", Math.ceil(limit / perUpstream)));
    if (!smoke) figures.crossings.push(crossing(limit, "dynamic", Math.ceil(limit / perLazy)));
  }
  for (const c of figures.crossings) {
    console.log(`${c.mode} mode: the description alone passes ${c.limit} tokens at ${c.upstreams} upstreams (${c.tools} tools)`);
  }
  figures.proxy = await throughProxy(smoke ? [10] : [10, 100], smoke);
  await writeCharts(figures, smoke);
  writeResult("scale", figures, markdown(figures), smoke);
  if (!smoke) console.log("wrote bench/results/scale.json, bench/results/scale.md, bench/charts/scale.svg, bench/charts/scale-time.svg");
}

// ---------------------------------------------------------------------------------------------------------------
// Charts and the BENCHMARKS.md section.

export async function writeCharts(f: Figures, smoke: boolean): Promise<void> {
  const EAGER = "config-file mode (all eager)";
  const LAZY = "dynamic mode (all lazy)";
  // The measured sizes, and the teams found just over the 200k window, so each line shows where it crosses.
  const rows = [
    ...f.sizes.flatMap((s) => [
      { upstreams: s.upstreams, mode: EAGER, tokens: s.tokens },
      { upstreams: s.upstreams, mode: LAZY, tokens: s.lazyTokens },
    ]),
    ...f.crossings
      .filter((c) => c.limit === WINDOW)
      .map((c) => ({ upstreams: c.upstreams, mode: c.mode === "dynamic" ? LAZY : EAGER, tokens: c.tokens })),
  ].sort((a, b) => a.upstreams - b.upstreams);
  const tokens: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "discover_tool's description vs team size (o200k tokens, log–log)", anchor: "start" },
    width: 460,
    height: 260,
    layer: [
      {
        data: { values: rows },
        mark: { type: "line", point: true },
        encoding: {
          x: { field: "upstreams", type: "quantitative", scale: { type: "log" }, title: "upstream servers" },
          y: { field: "tokens", type: "quantitative", scale: { type: "log", domain: [100, 1_000_000] }, title: "tokens" },
          color: { field: "mode", type: "nominal", title: null, legend: { orient: "bottom", labelLimit: 300 } },
        },
      },
      {
        data: { values: [{ tokens: WINDOW, label: "200k-token context window" }] },
        layer: [
          { mark: { type: "rule", strokeDash: [4, 4], color: "#e45756" }, encoding: { y: { field: "tokens", type: "quantitative" } } },
          {
            mark: { type: "text", align: "left", dy: -6, x: 4, color: "#e45756" },
            encoding: { y: { field: "tokens", type: "quantitative" }, text: { field: "label" } },
          },
        ],
      },
    ],
  };
  await writeChart("scale", tokens, smoke);

  const timeRows = f.sizes.flatMap((s) => [
    { upstreams: s.upstreams, what: "render the description", ms: s.renderMs },
    { upstreams: s.upstreams, what: "build the name index", ms: s.indexMs },
    { upstreams: s.upstreams, what: "answer an unknown name", ms: s.unknownMs },
    { upstreams: s.upstreams, what: "answer a known name", ms: s.discoverUs / 1000 },
  ]);
  const times: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "In-process time vs team size (median ms, log–log)", anchor: "start" },
    width: 460,
    height: 260,
    data: { values: timeRows },
    mark: { type: "line", point: true },
    encoding: {
      x: { field: "upstreams", type: "quantitative", scale: { type: "log" }, title: "upstream servers" },
      y: { field: "ms", type: "quantitative", scale: { type: "log" }, title: "milliseconds" },
      color: { field: "what", type: "nominal", title: null, legend: { orient: "bottom", columns: 2, labelLimit: 300 } },
    },
  };
  await writeChart("scale-time", times, smoke);
}

const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n));
const x = (a: number, b: number) => `×${(a / b).toFixed(a / b >= 10 ? 0 : 1)}`;

export function markdown(f: Figures): string {
  const out: string[] = [];
  const [s10, s100, s1000] = f.sizes;
  out.push(
    "## Catalog scale",
    "",
    "Synthetic teams in config-file mode: upstream *i* serves corpus catalog *i* mod 20 (servers in alphabetical order) " +
      "under the name `<server>-<copy>`, so 10 upstreams are the first 10 catalogs, 100 and 1,000 are 5 and 50 copies of all 20. " +
      "In-process figures call `renderDiscoverDescription`, `renderToolDetails` and `renderUnknownTool` from `src/catalog/render.ts` " +
      "and build the name index the way `UpstreamRegistry.tools()` does; times are medians over repeated runs " +
      `(${f.sizes.map((s) => `${s.reps} at ${s.upstreams}`).join(", ")}) after a warm-up. "Dynamic mode" is the same team with every ` +
      "upstream lazy: its description lists one line per server instead of one per tool.",
    "",
    table(
      ["upstreams", "tools", "render (ms)", "description chars", "tokens", "tokens / tool", "dynamic mode tokens", "index build (ms)", "lookup (µs)", "known-name answer (µs)", "unknown-name answer (ms)"],
      f.sizes.map((s) => [
        s.upstreams,
        s.tools,
        s.renderMs.toFixed(2),
        s.chars,
        s.tokens,
        s.tokensPerTool.toFixed(1),
        s.lazyTokens,
        s.indexMs.toFixed(2),
        s.lookupUs.toFixed(3),
        s.discoverUs.toFixed(1),
        s.unknownMs.toFixed(1),
      ]),
      ["--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"],
    ),
    "",
    "![Description tokens vs team size](bench/charts/scale.svg)",
    "",
  );
  if (s10 && s100 && s1000) {
    const ratioRow = (a: SizeFigures, b: SizeFigures) =>
      [`${b.upstreams} → ${a.upstreams}`, x(a.tools, b.tools), x(a.renderMs, b.renderMs), x(a.tokens, b.tokens), x(a.indexMs, b.indexMs), x(a.lookupUs, b.lookupUs), x(a.discoverUs, b.discoverUs), x(a.unknownMs, b.unknownMs)];
    out.push(
      "How each grows, as ratios between sizes measured in this run:",
      "",
      table(
        ["upstreams", "tools", "render", "tokens", "index build", "lookup", "known-name answer", "unknown-name answer"],
        [ratioRow(s100, s10), ratioRow(s1000, s100)],
        ["---", "--:", "--:", "--:", "--:", "--:", "--:", "--:"],
      ),
      "",
      "Tokens, render time, index build and the unknown-name answer grow with the number of tools (linearly); a known-name lookup " +
        "is a `Map.get` and its answer only renders one tool, so both stay flat. The unknown-name answer looks at every known " +
        "name but keeps only the 50 closest, and stops measuring a name's edit distance once it cannot make that list, so it is " +
        `the one per-call cost that grows with the team, slowly: at ${s1000.upstreams} upstreams one misspelt name costs ` +
        `${s1000.unknownMs.toFixed(1)} ms of CPU in the session object (${s100.unknownMs.toFixed(1)} ms at ${s100.upstreams}), where a ` +
        "known one costs microseconds.",
      "",
      "![In-process time vs team size](bench/charts/scale-time.svg)",
      "",
    );
  }

  const at = (limit: number, mode: Crossing["mode"]) => f.crossings.find((c) => c.limit === limit && c.mode === mode);
  const win = at(WINDOW, "config-file");
  const crowd = at(CROWDED, "config-file");
  const dynWin = at(WINDOW, "dynamic");
  const dynCrowd = at(CROWDED, "dynamic");
  out.push(
    "### Where the present design stops being usable",
    "",
    win
      ? `With this mix of servers (about ${(win.tools / win.upstreams).toFixed(1)} tools each) **discover_tool's description alone outgrows a ` +
          `200k-token context window at ${win.upstreams} upstreams (${win.tools} tools)** in config-file mode, before the host has said a word. ` +
          (crowd ? `It already takes a tenth of that window (${k(CROWDED)} tokens) at ${crowd.upstreams} upstreams (${crowd.tools} tools). ` : "") +
          (dynWin
            ? `In dynamic mode (one line per server) the same happens at ${dynWin.upstreams} upstreams for the full window` +
              (dynCrowd ? ` and ${dynCrowd.upstreams} for a tenth of it` : "") +
              ". "
            : "") +
          `Past about ${crowd ? crowd.tools : "a thousand"} tools per session the catalog has to be searched rather than listed: ` +
          "a `discover_tool` that takes a query and answers the best matches, with the description holding only the servers, " +
          "is the next design step" +
          (dynWin ? `; dynamic mode's per-server lines give ${(dynWin.upstreams / win.upstreams).toFixed(0)} times the headroom until then.` : ".")
      : "Not measured in this run.",
    "",
  );

  if (f.proxy.length) {
    const p10 = f.proxy.find((p) => p.upstreams === 10);
    const p100 = f.proxy.find((p) => p.upstreams === 100);
    out.push(
      "### Through the running proxy",
      "",
      "The same synthetic teams through `wrangler dev`, every upstream a replay route on loopback, all eager, with the largest " +
        "`catalog_budget` a config may set (200,000), so the catalog is shown whole (the default budget at scale: \"Catalog " +
        "budget at scale\" below). A new session's " +
        "first `tools/list` waits for every upstream to connect and list (in parallel); later lists are served from the " +
        "session's memory. `discover_tool` is called with random known names, one open session per team. The teams are measured " +
        "interleaved, session by session and call by call, so a change in the machine's load hits them alike.",
      "",
      table(
        ["upstreams", "tools", "sessions", "first tools/list (ms, median)", "later tools/list (ms, median)", "discover_tool p50 (ms)", "p95 (ms)", "calls", "description tokens", "same text as in-process"],
        f.proxy.map((p) => [
          p.upstreams,
          p.tools,
          p.sessions,
          p.firstListMs.toFixed(0),
          p.laterListMs.toFixed(1),
          p.discover.p50.toFixed(2),
          p.discover.p95.toFixed(2),
          p.discover.n,
          p.descriptionTokens,
          p.sameAsInProcess ? "yes" : "**no**",
        ]),
        ["--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---"],
      ),
      "",
    );
    if (p10 && p100) {
      out.push(
        `From 10 to 100 upstreams (${x(p100.tools, p10.tools)} tools), the first \`tools/list\` grows ${x(p100.firstListMs, p10.firstListMs)}, ` +
          `a later one ${x(p100.laterListMs, p10.laterListMs)} (it re-renders and sends the whole catalog every time), and a ` +
          `\`discover_tool\` call ${x(p100.discover.p50, p10.discover.p50)} at the median.`,
        "",
      );
    }
  }
  return out.join("\n");
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
