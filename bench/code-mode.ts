// `npm run bench:code` (issue 17): multi-step tasks on recorded corpus servers (bench/lib/code-tasks.ts) done through
// the proxy under `wrangler dev` in each view — the meta-tools, the direct view and the code view — by a scripted
// host (the SDK Client), against replay upstreams that give scripted answers. Measured per task and view: tokens the
// host is sent, model turns and tool calls, and wall time through the proxy (median of the repetitions); every run's
// upstream calls are checked against the calls the task's program makes offline. Two team variants: every server
// eager, and every server lazy. `--smoke`: one repetition, nothing written; `--reps <n>` sets the repetitions.
// The last line printed is `FIGURES <json>`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { E2E_SECRETS_KEY, connectClient, provisionByAdmin } from "../harness/clients.ts";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../harness/replay-server.ts";
import { ambiguousServers, directNames } from "../src/catalog/direct-names.ts";
import { VIEWS } from "../src/config/view.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { CODE_TASKS, type CodeTask } from "./lib/code-tasks.ts";
import { canonical, plainLeaves, resultValue, runOffline, taskPaths, type OfflineRun, type WaveCall } from "./lib/code-waves.ts";
import { table } from "./lib/markdown.ts";
import { random } from "./lib/random.ts";
import { finishRun, isSmoke, median } from "./lib/results.ts";
import { teardown } from "./lib/teardown.ts";
import { CORPUS_SERVERS, countTokens, hostTokens } from "./tokens.ts";

const smoke = isSmoke();
const repsArg = process.argv.indexOf("--reps");
const REPS = repsArg > 0 ? Math.max(1, Number(process.argv[repsArg + 1] ?? "1")) : smoke ? 1 : 10;
const VARIANTS = ["eager", "lazy"] as const;
type Variant = (typeof VARIANTS)[number];
const VIEW_NAMES = ["meta", "direct", "code"] as const;
type ViewName = (typeof VIEW_NAMES)[number];
/** The issue's goal: the code view sends at least this many times fewer tokens than the meta view… */
const GOAL_RATIO = 5;
/** …on tasks of at least this many upstream tool calls. */
const GOAL_MIN_CALLS = 3;
const ADMIN_TOKEN = "bench-admin-token";
/** A 32-byte session key (as deployed); CODE_MODE on so `?view=code` is served while the view is dark. */
const PROXY_VARS = { SESSION_KEY: "bench-session-key-0123456789abcd", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, CODE_MODE: "on" };
const CODE_TOOLS = ["search", "describe", "execute"];

// ---------------------------------------------------------------------------------------------------------------
// The scripted host: every tools/list and tools/call counted as a host would pay for it.

const textOf = (result: Pick<CallToolResult, "content">): string =>
  (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

interface Tally {
  /** Model turns that make tool calls (calls of one turn are issued together). */
  turns: number;
  /** Tool calls the host makes (meta-tools, direct tools, search/describe/execute). */
  hostCalls: number;
  /** tools/list results the host got (the first, and one after each list change announced). */
  lists: number;
  /** Host tokens of those lists (bench/tokens.ts's rule: o200k of `{name, description, input_schema}` JSON). */
  listTokens: number;
  /** o200k tokens of the text content of every tool result. */
  resultTokens: number;
  /** o200k tokens of what the model writes: each call's tool name and arguments JSON. */
  writtenTokens: number;
  /** Calls and result tokens by the tool the host called (`tool` for the direct view's upstream tools). */
  byTool: Record<string, { calls: number; tokens: number }>;
}

class Host {
  readonly tally: Tally = { turns: 0, hostCalls: 0, lists: 0, listTokens: 0, resultTokens: 0, writtenTokens: 0, byTool: {} };
  tools: Tool[] = [];
  /** When the first tools/list was answered (performance.now()). */
  firstListedAt: number | undefined;
  #changed = false;
  readonly #client: Client;
  readonly #kind: (name: string) => string;

  constructor(client: Client, kind: (name: string) => string) {
    this.#client = client;
    this.#kind = kind;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.#changed = true;
    });
  }

  /** tools/list, every page. */
  async list(): Promise<Tool[]> {
    this.#changed = false;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.firstListedAt ??= performance.now();
    this.tally.lists++;
    this.tally.listTokens += hostTokens(tools);
    this.tools = tools;
    return tools;
  }

  /** One model turn: these calls issued together, their results in order; a list change announced meanwhile is listed anew. */
  async turn(calls: Array<{ name: string; arguments: Record<string, unknown> }>): Promise<CallToolResult[]> {
    this.tally.turns++;
    const results = await Promise.all(
      calls.map(async (call) => {
        this.tally.writtenTokens += countTokens(call.name) + countTokens(JSON.stringify(call.arguments));
        const result = (await this.#client.callTool({ name: call.name, arguments: call.arguments })) as CallToolResult;
        const tokens = countTokens(textOf(result));
        const kind = (this.tally.byTool[this.#kind(call.name)] ??= { calls: 0, tokens: 0 });
        kind.calls++;
        kind.tokens += tokens;
        this.tally.hostCalls++;
        this.tally.resultTokens += tokens;
        return result;
      }),
    );
    await this.settle();
    return results;
  }

  /** Lists anew if the proxy announced a list change since the last list. */
  async settle(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.#changed) await this.list();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The scripts: what the host does in each view for one task.

interface Plan {
  task: CodeTask;
  offline: OfflineRun;
  /** The distinct tools the program calls, in the order of first use. */
  used: Array<{ server: string; tool: string; path: string }>;
  /** Registry name (`server/tool`) → direct-view name. */
  directName: Map<string, string>;
  upstreamCalls: number;
}

class ScriptError extends Error {}

function expectOk(result: CallToolResult, what: string): string {
  const text = textOf(result);
  if (result.isError) throw new ScriptError(`${what} answered an error: ${text.slice(0, 400)}`);
  return text;
}

/** Checks that every upstream result the host got is the value the program saw offline. */
function expectValues(wave: WaveCall[], results: CallToolResult[], how: string): void {
  wave.forEach((call, i) => {
    const result = results[i]!;
    expectOk(result, `${how} ${call.server}/${call.tool}`);
    const value = resultValue(result);
    if (!isDeepStrictEqual(value, call.value)) {
      throw new ScriptError(`${how} ${call.server}/${call.tool} gave ${JSON.stringify(value).slice(0, 200)}, not what the program saw offline: ${JSON.stringify(call.value).slice(0, 200)}`);
    }
  });
}

async function metaScript(host: Host, plan: Plan, variant: Variant): Promise<void> {
  await host.list();
  if (variant === "lazy") {
    const loads = await host.turn(plan.task.servers.map((s) => ({ name: "load_mcp", arguments: { mcp_name: s.name } })));
    loads.forEach((r, i) => expectOk(r, `load_mcp ${plan.task.servers[i]!.name}`));
  }
  // A model looks a tool's schema up before its first use; it knows which ones it needs from the catalog.
  const lookups = await host.turn(plan.used.map((u) => ({ name: "discover_tool", arguments: { tool_name: `${u.server}/${u.tool}` } })));
  lookups.forEach((r, i) => expectOk(r, `discover_tool ${plan.used[i]!.server}/${plan.used[i]!.tool}`));
  for (const wave of plan.offline.waves) {
    const results = await host.turn(wave.map((c) => ({ name: "use_tool", arguments: { tool_name: `${c.server}/${c.tool}`, tool_input: c.args } })));
    expectValues(wave, results, "use_tool");
  }
}

async function directScript(host: Host, plan: Plan): Promise<void> {
  const listed = new Set((await host.list()).map((t) => t.name));
  const nameOf = (c: { server: string; tool: string }) => plan.directName.get(`${c.server}/${c.tool}`)!;
  const absent = plan.used.filter((u) => !listed.has(nameOf(u)));
  if (absent.length) throw new ScriptError(`the direct view does not list ${absent.map(nameOf).join(", ")}`);
  for (const wave of plan.offline.waves) {
    const results = await host.turn(wave.map((c) => ({ name: nameOf(c), arguments: c.args })));
    expectValues(wave, results, "direct");
  }
}

async function codeScript(host: Host, plan: Plan, variant: Variant): Promise<void> {
  const listed = (await host.list()).map((t) => t.name);
  const missing = CODE_TOOLS.filter((n) => !listed.includes(n));
  if (missing.length) throw new ScriptError(`the code view does not list ${missing.join(", ")} (it lists ${listed.join(", ")})`);
  const paths = plan.used.map((u) => u.path);
  // One search per server the program uses, its query naming what the task needs there (the per-method phrases of
  // the task, joined), then the declaration of each method, then the program. Every method must be among the hits.
  const byNamespace = new Map<string, string[]>();
  for (const p of paths) byNamespace.set(p.split(".")[0]!, [...(byNamespace.get(p.split(".")[0]!) ?? []), p]);
  const queries = [...byNamespace].map(([namespace, methods]) => ({ namespace, methods, query: methods.map((m) => plan.task.searches[m]!).join(", ") }));
  const searches = await host.turn(queries.map((q) => ({ name: "search", arguments: { query: q.query } })));
  // A lazy server's methods are not searchable before it loads; its namespace is offered instead.
  const offered = (text: string, wanted: string) => text.includes(variant === "lazy" ? wanted.split(".")[0]! : wanted);
  const missed = searches.flatMap((r, i) => {
    const text = expectOk(r, `search "${queries[i]!.query}"`);
    return queries[i]!.methods.filter((m) => !offered(text, m));
  });
  // A method the server's search did not rank high enough is searched for on its own, in one more turn.
  if (missed.length > 0) {
    const again = await host.turn(missed.map((m) => ({ name: "search", arguments: { query: plan.task.searches[m]! } })));
    again.forEach((r, i) => {
      const text = expectOk(r, `search "${plan.task.searches[missed[i]!]}"`);
      if (!offered(text, missed[i]!)) throw new ScriptError(`search "${plan.task.searches[missed[i]!]}" did not offer ${missed[i]}: ${text.slice(0, 400)}`);
    });
  }
  // One describe of every method the program calls (paths separated by commas: one answer, one note).
  const [described] = await host.turn([{ name: "describe", arguments: { path: paths.join(", ") } }]);
  const declared = expectOk(described!, `describe ${paths.join(", ")}`);
  const undeclared = paths.filter((p) => !declared.includes(`${p.split(".")[1]!}(`));
  if (undeclared.length) throw new ScriptError(`describe does not declare ${undeclared.join(", ")}: ${declared.slice(0, 400)}`);
  const [executed] = await host.turn([{ name: "execute", arguments: { code: plan.task.program } }]);
  const text = expectOk(executed!, "execute");
  const absent = [...plainLeaves(plan.offline.result), ...plan.offline.logs].filter((s) => !text.includes(s));
  if (absent.length) throw new ScriptError(`execute's answer lacks ${absent.slice(0, 3).map((s) => JSON.stringify(s)).join(", ")}: ${text.slice(0, 600)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Figures.

interface RunSample {
  tally: Tally;
  wallMs: number;
  /** After the first tools/list: the turns alone. */
  turnsMs: number;
  executes: number;
}

interface ViewFigures {
  turns: number;
  hostCalls: number;
  upstreamCalls: number;
  executes: number;
  lists: number;
  listTokens: number;
  resultTokens: number;
  /** What the host is sent: listTokens + resultTokens. */
  tokens: number;
  writtenTokens: number;
  byTool: Tally["byTool"];
  /** Median wall time of a run (connect, initialize, lists and every turn), and of the turns alone. */
  wallMs: number;
  turnsMs: number;
  wallMinMs: number;
  wallMaxMs: number;
  reps: number;
  /** The token counts differed between repetitions (the median is shown). */
  tokensVary: boolean;
}

interface TaskFigures {
  id: string;
  prompt: string;
  servers: Array<{ name: string; file: string; tools: number }>;
  upstreamCalls: number;
  waves: number[];
  programTokens: number;
  runs: Record<Variant, Partial<Record<ViewName, ViewFigures>>>;
}

interface Comparison {
  variant: Variant;
  against: "meta" | "direct";
  /** Per task of ≥ GOAL_MIN_CALLS calls: the other view's tokens over the code view's. */
  ratios: Array<{ task: string; ratio: number }>;
  worst?: { task: string; ratio: number };
  overall?: number;
}

interface Figures {
  reps: number;
  tasks: TaskFigures[];
  code: { available: boolean; reason?: string };
  comparisons: Comparison[];
  goals: {
    ratio: { goal: number; minCalls: number; worst?: number; met?: boolean };
    oneExecute: { met?: boolean; counts: Record<string, number> };
  };
  verified: { runs: number; exact: number };
  offline: Array<{ task: string; calls: number; waves: number }>;
  smoke: boolean;
}

function summarise(samples: RunSample[], upstreamCalls: number): ViewFigures {
  const med = (f: (s: RunSample) => number) => median(samples.map(f));
  const tokens = samples.map((s) => s.tally.listTokens + s.tally.resultTokens);
  const first = samples[0]!.tally;
  return {
    turns: med((s) => s.tally.turns),
    hostCalls: med((s) => s.tally.hostCalls),
    upstreamCalls,
    executes: med((s) => s.executes),
    lists: med((s) => s.tally.lists),
    listTokens: med((s) => s.tally.listTokens),
    resultTokens: med((s) => s.tally.resultTokens),
    tokens: median(tokens),
    writtenTokens: med((s) => s.tally.writtenTokens),
    byTool: first.byTool,
    wallMs: med((s) => s.wallMs),
    turnsMs: med((s) => s.turnsMs),
    wallMinMs: Math.min(...samples.map((s) => s.wallMs)),
    wallMaxMs: Math.max(...samples.map((s) => s.wallMs)),
    reps: samples.length,
    tokensVary: new Set(tokens).size > 1,
  };
}

function compare(tasks: TaskFigures[], variant: Variant, against: "meta" | "direct"): Comparison {
  const ratios = tasks
    .filter((t) => t.upstreamCalls >= GOAL_MIN_CALLS && t.runs[variant].code && t.runs[variant][against])
    .map((t) => ({ task: t.id, ratio: t.runs[variant][against]!.tokens / t.runs[variant].code!.tokens }));
  if (ratios.length === 0) return { variant, against, ratios };
  const worst = ratios.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  const sum = (view: ViewName) => tasks.filter((t) => ratios.some((r) => r.task === t.id)).reduce((n, t) => n + t.runs[variant][view]!.tokens, 0);
  return { variant, against, ratios, worst, overall: sum(against) / sum("code") };
}

const x = (ratio: number) => `${ratio.toFixed(1)}×`;
const msText = (v: number) => v.toFixed(1);

function runLine(task: TaskFigures, variant: Variant, view: ViewName, f: ViewFigures): string {
  const calls = view === "code" ? `${f.hostCalls} host calls (${f.executes} execute, ${f.upstreamCalls} upstream inside)` : `${f.hostCalls} host calls (${f.upstreamCalls} upstream)`;
  return (
    `${task.id} ${variant} ${view}: ${f.turns} turns, ${calls}, ${f.tokens} tokens sent (tools/list ${f.listTokens} in ${f.lists}, results ${f.resultTokens})` +
    `${f.tokensVary ? " [varied between repetitions]" : ""}, ${f.writtenTokens} written; wall p50 ${msText(f.wallMs)} ms (turns ${msText(f.turnsMs)} ms)`
  );
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

async function main(): Promise<void> {
  const started = performance.now();
  const errors: string[] = [];

  // Each task's program, run offline against the scripted answers: the calls every view must make.
  const plans = new Map<string, Plan>();
  for (const task of CODE_TASKS) {
    const offline = await runOffline(task);
    const paths = taskPaths(task);
    const seen = new Set<string>();
    const used: Plan["used"] = [];
    for (const call of offline.waves.flat()) {
      if (seen.has(call.path)) continue;
      seen.add(call.path);
      used.push({ server: call.server, tool: call.tool, path: call.path });
      if (task.searches[call.path] === undefined) throw new Error(`${task.id}: no search query for ${call.path}`);
    }
    for (const p of Object.keys(task.searches)) if (!paths.has(p)) throw new Error(`${task.id}: the search query for ${p} names no tool`);
    const registry = task.servers.flatMap((s) => loadCorpus(s.file).tools.map((t) => ({ server: s.name, tool: t.name, registryName: `${s.name}/${t.name}` })));
    const names = directNames("multi", registry, ambiguousServers(task.servers.map((s) => s.name)));
    const directName = new Map([...names].map(([direct, registryName]) => [registryName, direct]));
    const upstreamCalls = offline.waves.flat().length;
    plans.set(task.id, { task, offline, used, directName, upstreamCalls });
  }
  const offline = CODE_TASKS.map((t) => ({ task: t.id, calls: plans.get(t.id)!.upstreamCalls, waves: plans.get(t.id)!.offline.waves.length }));
  console.log(
    `offline: ${offline.length} programs run against their scripted answers: ` +
      offline.map((o) => `${o.task} ${o.calls} calls in ${o.waves} waves`).join(", "),
  );

  const route = (task: CodeTask, server: string) => `${task.id}-${server}`;
  const replay: ReplayServer = await startReplayServer(
    Object.fromEntries(CODE_TASKS.flatMap((t) => t.servers.map((s) => [route(t, s.name), { catalog: loadCorpus(s.file), answers: s.answers }]))),
  );
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-code-"));
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: join(dir, "state"), vars: PROXY_VARS, config: snapshot.config });
    const team = (task: CodeTask, variant: Variant) => `${task.id}-${variant}`;
    const tokens = new Map<string, string>();
    for (const task of CODE_TASKS) {
      for (const variant of VARIANTS) {
        const mcp = Object.fromEntries(
          task.servers.map((s) => {
            const description = CORPUS_SERVERS.find((c) => c.file === s.file)?.description;
            if (description === undefined) throw new Error(`no lazy description for ${s.file} in bench/tokens.ts`);
            return [s.name, { url: replay.url(route(task, s.name)), ...(variant === "lazy" ? { description } : {}) }];
          }),
        );
        tokens.set(team(task, variant), await provisionByAdmin(proxy.url, ADMIN_TOKEN, team(task, variant), { mcp }, "bench-code"));
      }
    }
    const url = (task: CodeTask, variant: Variant, view: ViewName) => `${proxy!.url}/t/${team(task, variant)}/mcp?view=${view}`;

    // The code view runs only once the proxy serves it with its three tools.
    const probeTask = CODE_TASKS[0]!;
    let code: Figures["code"];
    try {
      const { client, transport } = await connectClient(url(probeTask, "eager", "code"), tokens.get(team(probeTask, "eager"))!);
      const listed = (await client.listTools()).tools.map((t) => t.name);
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
      const missing = CODE_TOOLS.filter((n) => !listed.includes(n));
      code = missing.length ? { available: false, reason: `its tools/list lacks ${missing.join(", ")} (it lists ${listed.join(", ") || "nothing"})` } : { available: true };
    } catch (err) {
      code = { available: false, reason: (err instanceof Error ? err.message : String(err)).split("\n")[0]!.slice(0, 300) };
    }
    console.log(code.available ? "code view: served (search, describe, execute)" : `code view: not available, not measured (${code.reason})`);
    // Once the proxy knows the view, failing to serve it is an error, not a reason to skip it.
    if (!code.available && (VIEWS as readonly string[]).includes("code")) errors.push(`the proxy knows the code view (src/config/view.ts) but does not serve it: ${code.reason}`);
    const views = VIEW_NAMES.filter((v) => v !== "code" || code.available);

    const samples = new Map<string, RunSample[]>();
    const key = (task: CodeTask, variant: Variant, view: ViewName) => `${task.id} ${variant} ${view}`;
    let verifiedRuns = 0;
    let exactRuns = 0;
    /** Task, variant and view of every run that failed or did not make exactly the program's calls. */
    const failed = new Set<string>();

    const runOnce = async (task: CodeTask, variant: Variant, view: ViewName): Promise<void> => {
      const plan = plans.get(task.id)!;
      const before = new Map(task.servers.map((s) => [s.name, replay.stats(route(task, s.name)).calls.length]));
      const t0 = performance.now();
      const { client, transport } = await connectClient(url(task, variant, view), tokens.get(team(task, variant))!);
      const host = new Host(client, (name) => (view === "direct" ? "tool" : name));
      try {
        if (view === "meta") await metaScript(host, plan, variant);
        else if (view === "direct") await directScript(host, plan);
        else await codeScript(host, plan, variant);
        const t1 = performance.now();
        const executes = host.tally.byTool.execute?.calls ?? 0;
        samples.set(key(task, variant, view), [...(samples.get(key(task, variant, view)) ?? []), { tally: host.tally, wallMs: t1 - t0, turnsMs: t1 - (host.firstListedAt ?? t1), executes }]);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close().catch(() => undefined);
        // What reached the upstreams during this run must be exactly the program's calls.
        verifiedRuns++;
        const wrong: string[] = [];
        for (const s of task.servers) {
          const got = replay
            .stats(route(task, s.name))
            .calls.slice(before.get(s.name))
            .map((c) => `${c.name} ${canonical(c.arguments ?? {})}`)
            .sort();
          const expected = plan.offline.waves
            .flat()
            .filter((c) => c.server === s.name)
            .map((c) => `${c.tool} ${canonical(c.args)}`)
            .sort();
          if (!isDeepStrictEqual(got, expected)) {
            const extra = got.filter((g) => !expected.includes(g)).map((g) => g.slice(0, 160));
            const lacking = expected.filter((e) => !got.includes(e)).map((e) => e.slice(0, 160));
            wrong.push(`${s.name}: ${got.length} calls for ${expected.length} expected; unexpected ${JSON.stringify(extra.slice(0, 2))}; missing ${JSON.stringify(lacking.slice(0, 2))}`);
          }
        }
        if (wrong.length === 0) exactRuns++;
        else failed.add(key(task, variant, view));
        if (wrong.length > 0) errors.push(`${key(task, variant, view)}: the upstreams did not receive the program's calls: ${wrong.join("; ")}`);
      }
    };

    const combos = CODE_TASKS.flatMap((task) => VARIANTS.flatMap((variant) => views.map((view) => ({ task, variant, view }))));
    const next = random(17);
    for (let rep = 0; rep < REPS; rep++) {
      // A new order every repetition, so drift on a shared machine hits every view alike.
      const order = combos.map((c) => ({ c, r: next() })).sort((a, b) => a.r - b.r).map((o) => o.c);
      for (const { task, variant, view } of order) {
        try {
          await runOnce(task, variant, view);
        } catch (err) {
          failed.add(key(task, variant, view));
          errors.push(`${key(task, variant, view)}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }

    // Figures per task, variant and view.
    const tasks: TaskFigures[] = CODE_TASKS.map((task) => {
      const plan = plans.get(task.id)!;
      const runs = { eager: {}, lazy: {} } as TaskFigures["runs"];
      for (const variant of VARIANTS) {
        for (const view of views) {
          const s = samples.get(key(task, variant, view));
          if (s?.length) runs[variant][view] = summarise(s, plan.upstreamCalls);
        }
      }
      return {
        id: task.id,
        prompt: task.prompt,
        servers: task.servers.map((s) => ({ name: s.name, file: s.file, tools: loadCorpus(s.file).tools.length })),
        upstreamCalls: plan.upstreamCalls,
        waves: plan.offline.waves.map((w) => w.length),
        programTokens: countTokens(task.program),
        runs,
      };
    });
    for (const t of tasks) for (const variant of VARIANTS) for (const view of views) if (t.runs[variant][view]) console.log(runLine(t, variant, view, t.runs[variant][view]!));

    const comparisons = code.available ? VARIANTS.flatMap((v) => [compare(tasks, v, "meta"), compare(tasks, v, "direct")]) : [];
    const headline = comparisons.find((c) => c.variant === "eager" && c.against === "meta");
    const executeCounts = Object.fromEntries(
      tasks.flatMap((t) => VARIANTS.filter((v) => t.runs[v].code).map((v) => [`${t.id} ${v}`, t.runs[v].code!.executes])),
    );
    const goals: Figures["goals"] = {
      ratio: { goal: GOAL_RATIO, minCalls: GOAL_MIN_CALLS },
      oneExecute: { counts: executeCounts },
    };
    if (headline?.worst) {
      goals.ratio.worst = headline.worst.ratio;
      goals.ratio.met = headline.ratios.every((r) => r.ratio >= GOAL_RATIO);
    }
    // Met when one execute did each task: every code run completed with one, and made exactly the program's calls.
    if (Object.keys(executeCounts).length > 0) {
      goals.oneExecute.met =
        Object.values(executeCounts).every((n) => n === 1) &&
        Object.keys(executeCounts).length === tasks.length * VARIANTS.length &&
        ![...failed].some((k) => k.endsWith(" code"));
    }

    for (const variant of VARIANTS) {
      const m = tasks.map((t) => t.runs[variant].meta?.tokens ?? 0).reduce((a, b) => a + b, 0);
      const d = tasks.map((t) => t.runs[variant].direct?.tokens ?? 0).reduce((a, b) => a + b, 0);
      if (m && d) console.log(`meta vs direct (${variant}): ${m} vs ${d} tokens over ${tasks.length} tasks (meta ${x(d / m)} fewer)`);
    }
    if (!code.available) {
      console.log(`code vs meta: not measured (code view not available); goal ≥ ${GOAL_RATIO}×: not judged`);
      console.log("code view: 1 execute per task: not judged");
    } else {
      for (const c of comparisons) {
        if (!c.worst) continue;
        const label = c.variant === "eager" && c.against === "meta" ? "code vs meta" : `code vs ${c.against} (${c.variant})`;
        const verdict = c.against === "meta" && c.variant === "eager" ? `; goal ≥ ${GOAL_RATIO}×: ${goals.ratio.met ? "met" : "missed"}` : "";
        console.log(`${label}: ${x(c.worst.ratio)} fewer tokens on tasks of ≥${GOAL_MIN_CALLS} calls (worst: ${c.worst.task}; over all: ${x(c.overall!)})${verdict}`);
      }
      const extra = Object.entries(executeCounts).filter(([, n]) => n !== 1);
      const broken = [...failed].filter((k) => k.endsWith(" code"));
      const why = extra.length ? extra.map(([k, n]) => `${k}: ${n}`).join(", ") : broken.length ? `failed: ${broken.join(", ")}` : "not every task ran";
      console.log(`code view: 1 execute per task: ${goals.oneExecute.met ? "met" : `missed (${why})`}`);
    }
    for (const variant of VARIANTS) {
      const per = (view: ViewName) => tasks.map((t) => t.runs[variant][view]?.turns ?? "-").join("/");
      console.log(`turns (${variant}; ${tasks.map((t) => t.id).join("/")}): ${views.map((v) => `${v} ${per(v)}`).join(", ")}`);
    }
    console.log(`upstream calls verified: ${exactRuns} of ${verifiedRuns} runs made exactly the program's calls`);
    for (const e of errors) console.error(`ERROR ${e}`);
    console.log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s (${REPS} repetition${REPS === 1 ? "" : "s"})`);

    const figures: Figures = { reps: REPS, tasks, code, comparisons, goals, verified: { runs: verifiedRuns, exact: exactRuns }, offline, smoke };
    const text = markdown(figures);
    if (smoke) console.log(text);
    finishRun({ name: "code-mode", figures, markdown: text, smoke, wranglerOutput: proxy.output(), errors: errors.length, printed: { errorCount: errors.length } });
  } finally {
    await teardown({ proxy, snapshot, replay, dir });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The BENCHMARKS.md section.

function markdown(f: Figures): string {
  const out: string[] = [];
  const headline = f.comparisons.find((c) => c.variant === "eager" && c.against === "meta");
  out.push(
    "## Code mode: multi-step tasks",
    "",
    `${f.tasks.length} tasks on recorded corpus servers, each done in the three views by a scripted host (the SDK \`Client\`) ` +
      "through the proxy under `wrangler dev`, against replay upstreams (`harness/replay-server.ts`) that give scripted answers " +
      "(`bench/lib/code-tasks.ts`): CircleCI pipelines and logs, GitHub and GitLab issues, a knowledge graph, files, Sentry issues. " +
      "Each task is one program a model would write for the code view's `execute`; the meta and direct views make the same upstream " +
      "calls with the same arguments, grouped into the same model turns (`bench/lib/code-waves.ts` runs the program offline and " +
      "records which calls it issues before it needs any of their results). Every run's upstream calls are checked against the " +
      "program's.",
    "",
    "- **Tokens sent**: what the proxy sends the host that a model reads: every `tools/list` the host gets (the first, and one " +
      "more after each `notifications/tools/list_changed`), counted as in *Context tokens* (o200k_base on `{name, description, " +
      "input_schema}` JSON), plus the text content of every tool result (`structuredContent`, which repeats it, not counted).",
    "- **Turns**: model turns that make tool calls. Calls that do not depend on each other's results share a turn (a host runs them " +
      "together); every view needs one more turn for the final answer, not counted. Meta view: one turn of `discover_tool` " +
      "lookups (every tool's schema before its first use, all found in the catalog of `discover_tool`'s description; a lazy team first " +
      "has a turn of `load_mcp`), then the program's waves through `use_tool`. Direct view: the waves, by direct names. Code view: " +
      "one `search` per server the program uses (its query names what the task needs there), and one more turn of a `search` per " +
      "method those did not offer (a method no search offers fails the run), one `describe` of every method the program calls " +
      "(comma-separated paths; brief declarations, the default), one `execute`.",
    "- **Written**: what the model writes, o200k of each call's tool name and arguments JSON (in the code view, mostly the program).",
    `- **Wall**: a run from connect to the last answer (initialize, lists and every turn), median of ${f.reps} repetition${f.reps === 1 ? "" : "s"}, ` +
      "all variants interleaved; no model time. A real host adds a model's latency per turn, so turns weigh more than these times.",
    "",
    "What the scripts assume, in each view's favour or against it: the meta view's model looks up every tool it will use in one " +
      "turn, up front (fewest turns); the code view's model writes a program that works the first time, parsing results whose shape " +
      "no declaration gives it (CircleCI's and Sentry's text, GitHub's and GitLab's JSON as text): a model that first looks at one " +
      "result needs one more `execute`. The answers are modest in size (a CI log of 1.3–1.6k tokens, a GitHub issue of about 950, " +
      "files of 1.4–1.7k): the code view's saving grows with them, the other views' costs do too.",
    "",
  );
  if (!f.code.available) out.push(`**The code view was not measured in this run**: ${f.code.reason}.`, "");
  out.push(
    table(
      ["task", "servers (tools)", "upstream calls", "waves"],
      f.tasks.map((t) => [`\`${t.id}\`: ${t.prompt}`, t.servers.map((s) => `${s.name} (${s.tools})`).join(", "), t.upstreamCalls, t.waves.join(" + ")]),
      ["---", "---", "--:", "---"],
    ),
    "",
  );
  for (const variant of VARIANTS) {
    out.push(
      `### ${variant === "eager" ? "Every server eager" : "Every server lazy (dynamic mode)"}`,
      "",
      table(
        ["task", "view", "turns", "host calls", "tokens sent", "of which tools/list", "written", "wall p50 ms"],
        f.tasks.flatMap((t) =>
          VIEW_NAMES.filter((v) => t.runs[variant][v]).map((v) => {
            const r = t.runs[variant][v]!;
            const calls = v === "code" ? `${r.hostCalls} (${r.executes} \`execute\`)` : String(r.hostCalls);
            return [t.id, v, r.turns, calls, r.tokens, r.listTokens, r.writtenTokens, msText(r.wallMs)];
          }),
        ),
        ["---", "---", "--:", "--:", "--:", "--:", "--:", "--:"],
      ),
      "",
    );
  }
  if (headline?.worst) {
    const met = f.goals.ratio.met;
    out.push(
      `**Goal: the code view sends ≥ ${GOAL_RATIO}× fewer tokens than the meta view on tasks of ≥ ${GOAL_MIN_CALLS} calls: ${met ? "met" : "missed"}** ` +
        `(eager teams; worst task ${headline.worst.task}, ${headline.worst.ratio.toFixed(2)}×; all tasks together ${x(headline.overall!)}). ` +
        `**One \`execute\` per task: ${f.goals.oneExecute.met ? "met" : "missed"}.**`,
      "",
      table(
        ["comparison", ...f.tasks.map((t) => t.id), "all tasks"],
        f.comparisons.map((c) => [
          `${c.against} / code tokens (${c.variant})`,
          ...f.tasks.map((t) => {
            const r = c.ratios.find((q) => q.task === t.id);
            return r ? x(r.ratio) : "";
          }),
          c.overall === undefined ? "" : x(c.overall),
        ]),
        ["---", ...f.tasks.map(() => "--:"), "--:"],
      ),
      "",
    );
  }
  out.push(...whereTokensGo(f));
  out.push(`Upstream calls checked: ${f.verified.exact} of ${f.verified.runs} runs made exactly the program's calls.`, "");
  return out.join("\n");
}

/** Tokens sent by what sent them (eager teams): the list, each kind of host call. */
function whereTokensGo(f: Figures): string[] {
  const kinds: Array<[string, string]> = [
    ["discover_tool", "`discover_tool` lookups"],
    ["search", "`search`"],
    ["describe", "`describe`"],
    ["use_tool", "upstream results (`use_tool`)"],
    ["tool", "upstream results (direct)"],
    ["execute", "`execute`"],
  ];
  const rows = f.tasks.flatMap((t) =>
    VIEW_NAMES.filter((v) => t.runs.eager[v]).map((v) => {
      const r = t.runs.eager[v]!;
      return [t.id, v, r.listTokens, ...kinds.map(([k]) => r.byTool[k]?.tokens ?? ""), r.tokens];
    }),
  );
  if (rows.length === 0) return [];
  const out = [
    "### Where the tokens go (every server eager)",
    "",
    table(["task", "view", "tools/list", ...kinds.map(([, label]) => label), "total"], rows, ["---", "---", ...Array(kinds.length + 2).fill("--:")]),
    "",
  ];
  const code = f.tasks.map((t) => t.runs.eager.code).filter((r) => r !== undefined);
  const meta = f.tasks.map((t) => t.runs.eager.meta).filter((r) => r !== undefined);
  if (code.length === f.tasks.length && meta.length === f.tasks.length) {
    const sum = (rs: ViewFigures[], k: string) => rs.reduce((n, r) => n + (r.byTool[k]?.tokens ?? 0), 0);
    const total = (rs: ViewFigures[]) => rs.reduce((n, r) => n + r.tokens, 0);
    const describe = sum(code, "describe");
    out.push(
      `Over the ${f.tasks.length} tasks the code view is sent ${total(code)} tokens, ${describe} of them (${((describe / total(code)) * 100).toFixed(0)}%) ` +
        `\`describe\` answers (brief declarations, several methods per call), against ${sum(meta, "discover_tool")} for the meta view's lookups ` +
        `of the same tools (${x(sum(meta, "discover_tool") / Math.max(1, describe))}); the rest of the saving is results: ${sum(meta, "use_tool")} ` +
        `tokens of upstream results in the meta view against ${sum(code, "execute")} of \`execute\` answers.`,
      "",
    );
  }
  return out;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
