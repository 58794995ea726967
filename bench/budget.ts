// `npm run bench:budget`: the catalog budget at scale. Synthetic teams of 50, 500, 5,000 and 20,000 tools (the scale
// bench's upstreams: the 20 corpus catalogs repeated under new names, the last one cut to the size), all eager
// (config-file mode) or all lazy (dynamic mode): what a session's whole tools/list costs with the default budget,
// counted independently with js-tiktoken, against the whole catalog; which form the description takes; the time to
// fit it with the Worker's own counter. Then the same teams through `wrangler dev` with the SDK client: the first
// tools/list of a new session, its tokens and time. `--smoke`: the two smaller sizes, few repetitions, nothing written.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { connectClient, provisionTeam } from "../harness/clients.ts";
import { startReplayServer } from "../harness/replay-server.ts";
import { fitCatalog, type ListedTool } from "../src/catalog/budget.ts";
import type { CatalogGroup, CatalogView } from "../src/catalog/catalog.ts";
import { renderDiscoverDescription } from "../src/catalog/render.ts";
import { tokenCounterFromTable } from "../src/catalog/tokenizer.ts";
import { CATALOG_BUDGET } from "../src/config/schema.ts";
import { metaDefinitions } from "../src/views/definitions.ts";
import { table } from "./lib/markdown.ts";
import { isSmoke, median, writeResult } from "./lib/results.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { teardown } from "./lib/teardown.ts";
import { isMain } from "./report.ts";
import { syntheticTeam, type Upstream } from "./scale.ts";
import { LOCAL_VARS, countTokens, hostTokens } from "./tokens.ts";

const SIZES = [50, 500, 5000, 20_000];
const BUDGET = CATALOG_BUDGET.default;

/** Upstreams of the scale bench until `tools` tools, the last one cut so the total is exact. */
function teamOf(tools: number): Upstream[] {
  const out: Upstream[] = [];
  let left = tools;
  for (const u of syntheticTeam(Math.ceil(tools / 5))) {
    if (left <= 0) break;
    const kept = u.tools.slice(0, left);
    out.push({ ...u, tools: kept, catalog: { ...u.catalog, tools: kept } });
    left -= kept.length;
  }
  if (left > 0) throw new Error(`not enough synthetic upstreams for ${tools} tools`);
  return out;
}

type Mode = "config-file" | "dynamic";

function viewOf(team: Upstream[], mode: Mode): CatalogView {
  if (mode === "dynamic") return { mode: "multi", groups: [], lazy: team.map((u) => ({ name: u.name, description: u.description })), dynamic: true };
  return { mode: "multi", groups: team.map((u): CatalogGroup => ({ server: u.name, state: "ready", tools: u.tools })), lazy: [], dynamic: false };
}

/** The session's tools/list with a given description, as src/views/tool-list.ts composes it. */
const listFor = (mode: Mode) => {
  const meta = metaDefinitions(mode === "dynamic");
  return (description: string): ListedTool[] => [{ ...meta.discover, description }, ...meta.rest];
};

interface InProcess {
  tools: number;
  upstreams: number;
  mode: Mode;
  /** The whole tools/list with the whole catalog (what a team without a budget would pay). */
  wholeTokens: number;
  /** With the default budget, counted with js-tiktoken. */
  tokens: number;
  /** The Worker's counter's figure for the same list (must equal `tokens`). */
  workerTokens: number;
  within: boolean;
  level: number;
  forms: { whole: number; names: number; summary: number; hidden: number; lazyShown: number; lazyHidden: number };
  fitMs: number;
  reps: number;
}

function inProcess(tools: number, mode: Mode, smoke: boolean): InProcess {
  const counter = tokenCounterFromTable(readFileSync(join(import.meta.dirname, "..", "assets", "tokenizer", "o200k_base.bin")));
  const team = teamOf(tools);
  const view = viewOf(team, mode);
  const list = listFor(mode);
  const fitted = fitCatalog(view, BUDGET, list, counter);
  const reps = smoke ? 2 : tools >= 5000 ? 5 : 15;
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    // A fresh view of fresh catalog objects each time, as a session sees its first list: nothing remembered
    // between fits (server summaries are remembered per catalog object).
    const again = viewOf(team.map((u) => ({ ...u, tools: [...u.tools] })), mode);
    const t = performance.now();
    fitCatalog(again, BUDGET, list, counter);
    times.push(performance.now() - t);
  }
  const tokens = countTokens(JSON.stringify(list(fitted.description).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))));
  // A server left out may have been shortened first: only the servers shown count by their form.
  const detail = [...fitted.shape.detail].filter(([server]) => !fitted.shape.hidden.has(server)).map(([, form]) => form);
  const hidden = fitted.shape.hidden.size;
  const names = detail.filter((d) => d === "names").length;
  const summary = detail.filter((d) => d === "summary").length;
  return {
    tools,
    upstreams: team.length,
    mode,
    wholeTokens: hostTokens(list(renderDiscoverDescription(view))),
    tokens,
    workerTokens: fitted.tokens,
    within: tokens <= BUDGET,
    level: fitted.level,
    forms: {
      whole: mode === "dynamic" ? 0 : team.length - hidden - names - summary,
      names,
      summary,
      hidden,
      lazyShown: mode === "dynamic" ? team.length - fitted.shape.lazyHidden.size : 0,
      lazyHidden: fitted.shape.lazyHidden.size,
    },
    fitMs: median(times),
    reps,
  };
}

interface ThroughProxy {
  tools: number;
  mode: Mode;
  upstreams: number;
  sessions: number;
  tokens: number;
  within: boolean;
  sameAsInProcess: boolean;
  /** Servers the proxy's first list showed as connecting or unavailable (a reason its text can differ). */
  idle: number;
  firstListMs: number;
}

async function throughProxy(sizes: number[], smoke: boolean): Promise<ThroughProxy[]> {
  const largest = teamOf(Math.max(...sizes));
  const replay = await startReplayServer(Object.fromEntries(syntheticTeam(largest.length).map((u) => [u.name, { catalog: u.catalog }])));
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-budget-"));
  const state = join(dir, "state");
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  // Eager teams past 5,000 tools would connect hundreds of upstreams per session on this 2-core machine; the
  // budget's text for them is the in-process one (the dynamic rows check that the proxy says the same).
  const cases = sizes.flatMap((n) => (["config-file", "dynamic"] as const).filter((m) => m === "dynamic" || n <= 5000).map((m) => ({ n, mode: m })));
  try {
    const tokens = new Map<string, string>();
    for (const { n, mode } of cases) {
      // The replay routes serve whole corpus catalogs; a cut last upstream is served whole, so filter it to the cut.
      const team = teamOf(n);
      const mcp = Object.fromEntries(
        team.map((u) => {
          const entry: Record<string, unknown> = { url: replay.url(u.name) };
          if (mode === "dynamic") entry.description = u.description;
          const full = syntheticTeam(largest.length).find((x) => x.name === u.name)!;
          if (u.tools.length < full.tools.length) entry.tools = { allow: u.tools.map((t) => t.name) };
          return [u.name, entry];
        }),
      );
      tokens.set(`${mode}-${n}`, provisionTeam(dir, state, `budget-${mode}-${n}`, { mcp }));
    }
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: state, vars: LOCAL_VARS, config: snapshot.config });
    const sessions = smoke ? 1 : 3;
    const out: ThroughProxy[] = [];
    for (const { n, mode } of cases) {
      const times: number[] = [];
      let tools: Tool[] = [];
      for (let s = 0; s < sessions; s++) {
        const { client, transport } = await connectClient(`${proxy.url}/t/budget-${mode}-${n}/mcp`, tokens.get(`${mode}-${n}`)!);
        try {
          const t = performance.now();
          tools = (await client.listTools()).tools;
          times.push(performance.now() - t);
        } finally {
          await transport.terminateSession().catch(() => undefined);
          await client.close().catch(() => undefined);
        }
      }
      const paid = hostTokens(tools);
      const expected = inProcess(n, mode, true);
      const description = tools.find((t) => t.name === "discover_tool")?.description ?? "";
      const fig: ThroughProxy = {
        tools: n,
        mode,
        upstreams: teamOf(n).length,
        sessions,
        tokens: paid,
        within: paid <= BUDGET,
        sameAsInProcess: paid === expected.tokens && description.length > 0,
        idle: (description.match(/^[\w-]+: (connecting|unavailable) — /gm) ?? []).length,
        firstListMs: median(times),
      };
      console.log(`proxy, ${mode}, ${n} tools: first tools/list ${fig.firstListMs.toFixed(0)} ms, ${paid} tokens (${fig.within ? "within" : "OVER"} ${BUDGET})`);
      out.push(fig);
    }
    return out;
  } finally {
    await teardown({ proxy, snapshot, replay, dir });
  }
}

export interface Figures {
  budget: number;
  inProcess: InProcess[];
  proxy: ThroughProxy[];
}

const fmt = (n: number) => n.toLocaleString("en-US");

export function markdown(f: Figures): string {
  const over = [...f.inProcess, ...f.proxy].filter((r) => !r.within);
  return [
    "## Catalog budget at scale",
    "",
    `What a new session's whole \`tools/list\` costs a host with the default \`catalog_budget\` (${fmt(f.budget)} tokens), for synthetic ` +
      "teams of 50 to 20,000 tools (the scale bench's upstreams: the 20 corpus catalogs repeated under new names, the last one cut " +
      "to the size), all eager (config-file mode) or all lazy (dynamic mode). Tokens are counted independently with js-tiktoken " +
      "(o200k_base) on the compact JSON of `{name, description, input_schema}` per tool; the Worker's own counter " +
      "(`src/catalog/tokenizer.ts`) gave the same figure in every row. _Whole_ is the same list with the whole catalog, what a team " +
      "pays without a budget. The fit time is `fitCatalog` (`src/catalog/budget.ts`) with the Worker's counter, in-process, median " +
      "of repeated runs on a fresh view (a session fits once per change of its catalog and remembers the answer).",
    "",
    table(
      ["tools", "upstreams", "mode", "whole", "with the budget", "within", "servers: whole / names / summary / counted", "lazy: listed / counted", "fit (ms)"],
      f.inProcess.map((r) => [
        fmt(r.tools),
        r.upstreams,
        r.mode,
        fmt(r.wholeTokens),
        `**${fmt(r.tokens)}**${r.tokens === r.workerTokens ? "" : ` (Worker: ${r.workerTokens})`}`,
        r.within ? "yes" : "**no**",
        r.mode === "dynamic" ? "–" : `${r.forms.whole} / ${r.forms.names} / ${r.forms.summary} / ${r.forms.hidden}`,
        r.mode === "dynamic" ? `${r.forms.lazyShown} / ${r.forms.lazyHidden}` : "–",
        r.fitMs.toFixed(1),
      ]),
      ["--:", "--:", "---", "--:", "--:", "---", "---", "---", "--:"],
    ),
    "",
    "Through `wrangler dev` (the SDK client, every upstream a replay route on loopback; eager teams up to 5,000 tools, since one " +
      "session then connects every upstream at once): the first `tools/list` of a new session, median over sessions (after " +
      "the first session of a team, a new one lists at once from the team's catalog cache and connects beside it).",
    "",
    table(
      ["tools", "mode", "upstreams", "sessions", "tokens", "within", "same as in-process", "shown connecting or unavailable", "first tools/list (ms)"],
      f.proxy.map((r) => [
        fmt(r.tools),
        r.mode,
        r.upstreams,
        r.sessions,
        fmt(r.tokens),
        r.within ? "yes" : "**no**",
        r.sameAsInProcess ? "yes" : "no",
        r.idle ?? 0,
        r.firstListMs.toFixed(0),
      ]),
      ["--:", "---", "--:", "--:", "--:", "---", "---", "--:", "--:"],
    ),
    "",
    "A proxy list that differs from the in-process fit shows a different state, not a different rule: with hundreds of " +
      "eager upstreams some are still connecting (or failed) when the first list is served, and are shown so; the " +
      "list is fitted to the budget all the same.",
    "",
    over.length === 0
      ? `Goal: session-start tokens stay within the budget at every size: **met** (largest: ${fmt(Math.max(...f.inProcess.map((r) => r.tokens), ...f.proxy.map((r) => r.tokens)))} of ${fmt(f.budget)}).`
      : `Goal: session-start tokens stay within the budget at every size: **not met** (${over.length} rows over).`,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const smoke = isSmoke();
  const sizes = smoke ? SIZES.slice(0, 2) : SIZES;
  const figures: Figures = { budget: BUDGET, inProcess: [], proxy: [] };
  for (const n of sizes) {
    for (const mode of ["config-file", "dynamic"] as const) {
      const r = inProcess(n, mode, smoke);
      figures.inProcess.push(r);
      console.log(`in-process, ${mode}, ${n} tools: whole ${r.wholeTokens}, budgeted ${r.tokens} (Worker ${r.workerTokens}), level ${r.level}, fit ${r.fitMs.toFixed(1)} ms`);
    }
  }
  figures.proxy = await throughProxy(sizes, smoke);
  console.log(`FIGURES ${JSON.stringify(figures)}`);
  writeResult("budget", figures, markdown(figures), smoke);
}

if (isMain(import.meta.url)) await main();
