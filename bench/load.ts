// Load (issue 4, part 3): many concurrent MCP sessions against the proxy under `wrangler dev`, with replay upstreams.
//
// Each simulated host runs whole sessions back to back: initialize (+ notifications/initialized), tools/list,
// discover_tool, several use_tool calls over two upstreams, DELETE. Concurrency ramps (25 → 400 hosts, each a
// session at a time); every level runs for a bounded time, then drains. Per level: sessions/s and calls/s
// (completed in the level's window), errors, latency percentiles per request, peak open sessions, and per process
// the CPU used and the peak RSS (from /proc) of the two workerd processes wrangler starts, wrangler itself, the
// upstreams and this driver, which says where it saturates. The driver speaks raw JSON-RPC over the keep-alive
// fetch (the SDK Client would cost the driver more CPU than it measures).
//
// `--smoke`: two tiny levels, writes nothing. `--default-keep-alive`: the upstreams keep Node's 5 s idle keep-alive
// (see bench/floor/node-server.ts). The last line printed is `FIGURES <json>`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { provisionTeam } from "../harness/clients.ts";
import { startUpstreams, type Upstreams } from "./floor/node-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { parseAnswer, type RpcAnswer } from "./lib/json-rpc.ts";
import { finishRun, isSmoke, ms, percentiles, type Percentiles } from "./lib/results.ts";
import { CLK_TCK, CORES, machineBusyTicks, readStat, rssKiB, wranglerProcesses } from "./lib/proc.ts";

const ROOT = join(import.meta.dirname, "..");
process.chdir(ROOT);

const smoke = isSmoke();
const LEVELS = smoke ? [2, 4] : [25, 50, 100, 200, 400];
/** How long each level keeps starting sessions; in-flight sessions then finish (the drain). */
const LEVEL_MS = smoke ? 2_500 : 15_000;
/** Hosts start spread over this long, not all in the same millisecond. */
const STAGGER_MS = smoke ? 200 : 2_000;
const USE_CALLS = 5;
const REQUEST_TIMEOUT_MS = 30_000;
const SAMPLE_EVERY_MS = 250;
/** After the last level: how long to wait before reading the Worker's memory again. */
const IDLE_MS = smoke ? 1_000 : 15_000;

// ---------------------------------------------------------------------------------------------------------------
// A minimal MCP host: raw JSON-RPC over fetch

type Kind = "initialize" | "initialized" | "tools/list" | "discover_tool" | "use_tool" | "delete";

interface Stats {
  latencies: Record<Kind, number[]>;
  /** Completion times (performance.now()) of sessions and of requests. */
  sessionEnds: number[];
  requestEnds: number[];
  sessionMs: number[];
  errors: number;
  errorSamples: string[];
  open: number;
  peakOpen: number;
}

const newStats = (): Stats => ({
  latencies: { initialize: [], initialized: [], "tools/list": [], discover_tool: [], use_tool: [], delete: [] },
  sessionEnds: [],
  requestEnds: [],
  sessionMs: [],
  errors: 0,
  errorSamples: [],
  open: 0,
  peakOpen: 0,
});

class Host {
  readonly #url: string;
  readonly #token: string;
  readonly #stats: Stats;
  #session = "";
  #id = 0;

  constructor(url: string, token: string, stats: Stats) {
    this.#url = url;
    this.#token = token;
    this.#stats = stats;
  }

  async #send(kind: Kind, method: "POST" | "DELETE", message?: Record<string, unknown>): Promise<RpcAnswer | undefined> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: "application/json, text/event-stream",
    };
    if (message) headers["content-type"] = "application/json";
    if (this.#session) {
      headers["mcp-session-id"] = this.#session;
      headers["mcp-protocol-version"] = "2025-06-18";
    }
    const start = performance.now();
    const response = await fetch(this.#url, {
      method,
      headers,
      body: message ? JSON.stringify(message) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body = await response.text();
    const end = performance.now();
    if (!response.ok) throw new Error(`${kind}: HTTP ${response.status} ${body.slice(0, 200)}`);
    this.#stats.latencies[kind].push(end - start);
    this.#stats.requestEnds.push(end);
    if (kind === "initialize") this.#session = response.headers.get("mcp-session-id") ?? "";
    if (!message || message.id === undefined) return undefined;
    const answer = parseAnswer(response.headers.get("content-type") ?? "", body);
    if (answer.error) throw new Error(`${kind}: JSON-RPC ${answer.error.code} ${answer.error.message}`);
    return answer;
  }

  #request(kind: Kind, method: string, params: Record<string, unknown>) {
    return this.#send(kind, "POST", { jsonrpc: "2.0", id: ++this.#id, method, params });
  }

  async #tool(kind: "discover_tool" | "use_tool", args: Record<string, unknown>, expect: string): Promise<void> {
    const answer = await this.#request(kind, "tools/call", { name: kind, arguments: args });
    const result = answer?.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
    const text = (result?.content ?? []).map((c) => c.text ?? "").join("");
    if (!result || result.isError || !text.includes(expect)) throw new Error(`${kind}: unexpected result ${text.slice(0, 200)}`);
  }

  /** One whole session; throws on the first failure. */
  async session(): Promise<void> {
    this.#session = "";
    this.#id = 0;
    const start = performance.now();
    await this.#request("initialize", "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench-load", version: "1.0.0" },
    });
    if (!this.#session) throw new Error("initialize: no session id");
    this.#stats.open++;
    this.#stats.peakOpen = Math.max(this.#stats.peakOpen, this.#stats.open);
    try {
      await this.#send("initialized", "POST", { jsonrpc: "2.0", method: "notifications/initialized" });
      const list = await this.#request("tools/list", "tools/list", {});
      const names = ((list?.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
      if (!names.includes("use_tool") || !String(JSON.stringify(list?.result)).includes("read_graph")) {
        throw new Error(`tools/list: unexpected catalog ${JSON.stringify(list?.result).slice(0, 200)}`);
      }
      await this.#tool("discover_tool", { tool_name: "memory/read_graph" }, "read_graph");
      for (let i = 0; i < USE_CALLS; i++) {
        if (i % 2 === 0) await this.#tool("use_tool", { tool_name: "memory/read_graph", tool_input: {} }, '"tool":"read_graph"');
        else await this.#tool("use_tool", { tool_name: "everything/echo", tool_input: { message: `m${i}` } }, '"tool":"echo"');
      }
    } finally {
      this.#stats.open--;
      await this.#send("delete", "DELETE").catch(() => {});
    }
    const end = performance.now();
    this.#stats.sessionMs.push(end - start);
    this.#stats.sessionEnds.push(end);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Processes: the wrangler tree, CPU and memory from /proc

interface Proc {
  pid: number;
  role: string;
}

/** The processes that do the work, named by what they do. */
function processesOf(proxy: Running, upstreams: Upstreams): Proc[] {
  const procs: Proc[] = [{ pid: process.pid, role: "load driver (this process)" }];
  // wrangler starts two runtimes: its own proxy worker on the public port, and the one that runs the Worker.
  const { wrangler, proxyWorkerd, worker } = wranglerProcesses(proxy.child.pid, proxy.port);
  if (wrangler !== undefined) procs.push({ pid: wrangler, role: "wrangler (Node)" });
  if (proxyWorkerd !== undefined) procs.push({ pid: proxyWorkerd, role: "workerd: wrangler's proxy worker" });
  if (worker !== undefined) procs.push({ pid: worker, role: `${WORKER_RUNTIME} + session objects` });
  procs.push({ pid: upstreams.pid, role: "replay upstreams (Node)" });
  return procs;
}

interface ProcFigures {
  role: string;
  /** Share of one core over the level (1 = one core busy the whole time). */
  cores: number;
  /** CPU seconds used over the level. */
  cpuSeconds: number;
  peakRssMiB: number;
}

const MACHINE = "whole machine (every process)";
const WORKER_RUNTIME = "workerd: the proxy Worker";

/** Samples CPU ticks and RSS of the given processes (and the machine's busy time) until stopped. */
function sampler(procs: Proc[]) {
  const machineStart = machineBusyTicks();
  const startTicks = new Map(procs.map((p) => [p.pid, readStat(p.pid)?.ticks ?? 0]));
  const peak = new Map(procs.map((p) => [p.pid, rssKiB(p.pid)]));
  const began = performance.now();
  const timer = setInterval(() => {
    for (const p of procs) peak.set(p.pid, Math.max(peak.get(p.pid) ?? 0, rssKiB(p.pid)));
  }, SAMPLE_EVERY_MS);
  return {
    stop(): ProcFigures[] {
      clearInterval(timer);
      const seconds = (performance.now() - began) / 1000;
      const figures = procs.map((p) => {
        peak.set(p.pid, Math.max(peak.get(p.pid) ?? 0, rssKiB(p.pid)));
        const ticks = (readStat(p.pid)?.ticks ?? 0) - (startTicks.get(p.pid) ?? 0);
        return { role: p.role, cores: ticks / CLK_TCK / seconds, cpuSeconds: ticks / CLK_TCK, peakRssMiB: (peak.get(p.pid) ?? 0) / 1024 };
      });
      const machine = (machineBusyTicks() - machineStart) / CLK_TCK;
      figures.push({ role: MACHINE, cores: machine / seconds, cpuSeconds: machine, peakRssMiB: 0 });
      return figures;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// One level

interface LevelFigures {
  concurrency: number;
  sessions: number;
  /** Sessions created since the proxy started, this level's included. */
  sessionsSoFar?: number;
  sessionsPerSecond: number;
  callsPerSecond: number;
  errors: number;
  peakOpenSessions: number;
  latency: Percentiles;
  byKind: Record<string, Percentiles>;
  session: Percentiles;
  drainMs: number;
  /** CPU the workerd running the Worker spent per completed session (all of the level's work / its sessions). */
  workerdCpuMsPerSession: number;
  driverLoopDelayP99: number;
  /** wrangler rebuilt and restarted the Worker during the level (src changed): its figures are not valid. */
  reloaded: boolean;
  processes: ProcFigures[];
}

const reloads = (proxy: Running) => (proxy.output().match(/Reloading local server/g) ?? []).length;

async function level(concurrency: number, url: string, token: string, proxy: Running, upstreams: Upstreams, durationMs = LEVEL_MS): Promise<LevelFigures> {
  const stats = newStats();
  const reloadsBefore = reloads(proxy);
  // Found again for every level: a reload of the Worker restarts its workerd.
  const procs = processesOf(proxy, upstreams);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const sampling = sampler(procs);
  const start = performance.now();
  const deadline = start + durationMs;
  const stagger = Math.min(STAGGER_MS, durationMs / 4);
  const host = async (index: number) => {
    await new Promise((r) => setTimeout(r, (stagger * index) / concurrency));
    const h = new Host(url, token, stats);
    while (performance.now() < deadline) {
      try {
        await h.session();
      } catch (err) {
        stats.errors++;
        if (stats.errorSamples.length < 5) stats.errorSamples.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => host(i)));
  const finished = performance.now();
  const processes = sampling.stop();
  loop.disable();
  // Every session started in the level also ended in it (the drain waits), so throughput is simply what was
  // done over the level's whole time; a window would miss sessions longer than itself at high concurrency.
  const levelS = (finished - start) / 1000;
  const all = Object.values(stats.latencies).flat();
  for (const sample of stats.errorSamples) console.error(`  error: ${sample}`);
  return {
    concurrency,
    sessions: stats.sessionMs.length,
    sessionsPerSecond: stats.sessionMs.length / levelS,
    callsPerSecond: stats.requestEnds.length / levelS,
    errors: stats.errors,
    peakOpenSessions: stats.peakOpen,
    latency: percentiles(all),
    byKind: Object.fromEntries(Object.entries(stats.latencies).map(([k, v]) => [k, percentiles(v)])),
    session: percentiles(stats.sessionMs),
    drainMs: finished - deadline,
    workerdCpuMsPerSession:
      ((processes.find((p) => p.role.startsWith(WORKER_RUNTIME))?.cpuSeconds ?? 0) * 1000) / Math.max(1, stats.sessionMs.length),
    reloaded: reloads(proxy) > reloadsBefore,
    driverLoopDelayP99: loop.percentile(99) / 1e6,
    processes,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The run

interface Figures {
  memory: { atStartMiB: number; afterIdleMiB: number; idleMs: number; sessions: number };
  levels: LevelFigures[];
  peakWorkerdRssMiB: number;
  knee: { concurrency: number; sessionsPerSecond: number; reason: string } | undefined;
  errors: number;
  config: { levels: number[]; levelMs: number; useCalls: number; upstreams: string[] };
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-load-"));
  let upstreams: Upstreams | undefined;
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    upstreams = await startUpstreams({}, process.argv.includes("--default-keep-alive"));
    const state = join(dir, "state");
    const token = provisionTeam(dir, state, "load", {
      mcp: {
        memory: { url: upstreams.replay("modelcontextprotocol__server-memory") },
        everything: { url: upstreams.replay("modelcontextprotocol__server-everything") },
      },
    });
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: state, vars: { SESSION_KEY: "bench" }, config: snapshot.config });
    const url = `${proxy.url}/t/load/mcp`;
    const procs = processesOf(proxy, upstreams);
    console.log(`load: proxy up in ${ms(performance.now() - started, 0)} ms; processes: ${procs.map((p) => `${p.role} (${p.pid})`).join(", ")}`);

    const workerRss = () => {
      const p = processesOf(proxy!, upstreams!).find((x) => x.role.startsWith(WORKER_RUNTIME));
      return p ? rssKiB(p.pid) / 1024 : 0;
    };
    const rssAtStart = workerRss();
    // Warm the proxy (first requests compile and open connections).
    const warm = await level(Math.min(4, LEVELS[0]!), url, token, proxy, upstreams, smoke ? 1_000 : 3_000);
    let sessionsSoFar = warm.sessions;

    const levels: LevelFigures[] = [];
    for (const concurrency of LEVELS) {
      const f = await level(concurrency, url, token, proxy, upstreams);
      sessionsSoFar += f.sessions;
      f.sessionsSoFar = sessionsSoFar;
      levels.push(f);
      const user = f.processes.find((p) => p.role.startsWith(WORKER_RUNTIME));
      console.log(
        `load: ${String(concurrency).padStart(3)} hosts: ${ms(f.sessionsPerSecond, 1)} sessions/s, ${ms(f.callsPerSecond, 0)} calls/s, ` +
          `p50 ${ms(f.latency.p50, 1)} / p99 ${ms(f.latency.p99, 1)} ms, errors ${f.errors}, peak open ${f.peakOpenSessions}, ` +
          `workerd ${ms(user?.cores ?? 0, 2)} cores ${ms(user?.peakRssMiB ?? 0, 0)} MiB`,
      );
      await new Promise((r) => setTimeout(r, 500));
    }
    // Does memory go back once the sessions are over? (Ended sessions' objects stay until workerd evicts them.)
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const memory = { atStartMiB: rssAtStart, afterIdleMiB: workerRss(), idleMs: IDLE_MS, sessions: sessionsSoFar };
    const errors = levels.reduce((a, l) => a + l.errors, 0);
    const figures: Figures = {
      memory,
      levels,
      peakWorkerdRssMiB: Math.max(...levels.flatMap((l) => l.processes.filter((p) => p.role.startsWith(WORKER_RUNTIME)).map((p) => p.peakRssMiB))),
      knee: knee(levels),
      errors,
      config: { levels: LEVELS, levelMs: LEVEL_MS, useCalls: USE_CALLS, upstreams: ["server-memory (replay)", "server-everything (replay)"] },
    };
    const markdown = render(figures);
    console.log(`\n${markdown}\n`);
    console.log(`load: done in ${ms((performance.now() - started) / 1000, 1)} s`);
    finishRun({ name: "load", figures, markdown, smoke, wranglerOutput: proxy.output(), errors });
  } finally {
    await Promise.all([proxy?.stop(), upstreams?.stop()]);
    snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first level where more hosts stop buying throughput (< 10% more sessions/s) — where it degrades. */
function knee(levels: LevelFigures[]): Figures["knee"] {
  for (let i = 1; i < levels.length; i++) {
    const prev = levels[i - 1]!;
    const cur = levels[i]!;
    if (cur.sessionsPerSecond >= prev.sessionsPerSecond * 1.1) continue;
    const cores = (l: LevelFigures, role: string) => l.processes.find((p) => p.role.startsWith(role))?.cores ?? 0;
    const user = cores(prev, WORKER_RUNTIME);
    const machine = cores(prev, MACHINE);
    const ours = prev.processes.filter((p) => p.role !== MACHINE).reduce((a, p) => a + p.cores, 0);
    const others = Math.max(0, machine - ours);
    const cap = 1000 / prev.workerdCpuMsPerSession;
    const why =
      user >= 0.85
        ? `CPU-bound on the Worker's one isolate thread: locally workerd runs the Worker and every session object of ` +
          `it on one thread, which was ${ms(user * 100, 0)}% busy`
        : machine >= 0.875 * CORES
          ? `CPU-bound on the machine: its ${CORES} cores were ${ms((machine / CORES) * 100, 0)}% busy (${ms(ours, 2)} cores this ` +
            `run's processes, ${ms(others, 2)} other processes on the shared machine), so the Worker's workerd got only ` +
            `${ms(user, 2)} of a core`
          : `not CPU-bound (the machine had idle CPU: ${ms(machine, 2)} of ${CORES} cores busy); the limit is elsewhere (I/O waits ` +
            `in the runtime, the driver's event loop: p99 delay ${ms(prev.driverLoopDelayP99, 0)} ms)`;
    const reason =
      `throughput stops growing at ${prev.concurrency} hosts: ${ms(prev.sessionsPerSecond, 1)} → ${ms(cur.sessionsPerSecond, 1)} ` +
      `sessions/s from ${prev.concurrency} to ${cur.concurrency} hosts, while p99 went ${ms(prev.latency.p99, 0)} → ` +
      `${ms(cur.latency.p99, 0)} ms (more hosts only queue: latency grows with hosts ÷ throughput). Why: ${why}. ` +
      `The Worker's workerd spends ${ms(prev.workerdCpuMsPerSession, 1)} ms of CPU per session (${USE_CALLS + 5} requests ` +
      `from the host, plus two upstream connects with their catalog reads), so even a whole core of its own would cap ` +
      `it near ${ms(cap, 0)} sessions/s on this machine`;
    return { concurrency: prev.concurrency, sessionsPerSecond: prev.sessionsPerSecond, reason };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function render(f: Figures): string {
  const lines: string[] = [];
  lines.push("## Load", "");
  lines.push(
    `Concurrent hosts, each running whole sessions back to back against \`wrangler dev\` on loopback: initialize, ` +
      `tools/list, discover_tool, ${USE_CALLS} use_tool calls over two replay upstreams (server-memory and ` +
      `server-everything catalogs, both eager, in a Node process of their own), DELETE. Each level starts sessions for ` +
      `${LEVEL_MS / 1000} s (hosts staggered over the first ${STAGGER_MS / 1000} s), then lets the open ones finish; ` +
      "sessions/s and calls/s (HTTP requests of every kind) are what completed over the level's whole time, drain " +
      "included; latency is per HTTP request. " +
      "CPU is the share of one core each process used over the level (/proc), memory its peak RSS.",
    "",
  );
  lines.push(
    "| hosts | peak open sessions | sessions so far | sessions/s | calls/s | errors | p50 ms | p99 ms | session p50 ms | workerd (Worker) cores | workerd (wrangler proxy) cores | wrangler (Node) cores | upstreams cores | driver cores | whole machine cores | workerd (Worker) CPU ms per session | workerd (Worker) peak RSS MiB |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const l of f.levels) {
    const proc = (prefix: string) => l.processes.find((p) => p.role.startsWith(prefix));
    const cores = (prefix: string) => ms(proc(prefix)?.cores ?? 0, 2);
    lines.push(
      `| ${l.concurrency} | ${l.peakOpenSessions} | ${l.sessionsSoFar ?? ""} | ${ms(l.sessionsPerSecond, 1)} | ${ms(l.callsPerSecond, 0)} | ${l.errors} | ` +
        `${ms(l.latency.p50, 1)} | ${ms(l.latency.p99, 1)} | ${ms(l.session.p50, 0)} | ${cores(WORKER_RUNTIME)} | ` +
        `${cores("workerd: wrangler")} | ${cores("wrangler")} | ${cores("replay")} | ${cores("load driver")} | ${cores("whole machine")} | ${ms(l.workerdCpuMsPerSession, 1)} | ` +
        `${ms(proc(WORKER_RUNTIME)?.peakRssMiB ?? 0, 0)} |`,
    );
  }
  lines.push("");
  const top = f.levels.at(-1)!;
  lines.push("Per request kind at the highest level (" + top.concurrency + " hosts), ms:", "");
  lines.push("| request | p50 | p95 | p99 | n |", "|---|---:|---:|---:|---:|");
  for (const [kind, p] of Object.entries(top.byKind)) lines.push(`| ${kind} | ${ms(p.p50, 1)} | ${ms(p.p95, 1)} | ${ms(p.p99, 1)} | ${p.n} |`);
  lines.push("");
  lines.push(`Errors over the whole run: **${f.errors}**. Peak RSS of the workerd process running the Worker: **${ms(f.peakWorkerdRssMiB, 0)} MiB**.`, "");
  const m = f.memory;
  const perHundred = ((f.peakWorkerdRssMiB - m.atStartMiB) / Math.max(1, m.sessions)) * 100;
  lines.push(
    `Memory: the Worker's workerd held ${ms(m.atStartMiB, 0)} MiB before the first session and peaked at ` +
      `${ms(f.peakWorkerdRssMiB, 0)} MiB after ${m.sessions} sessions (each its own Durable Object), ≈ ${ms(perHundred, 1)} MiB ` +
      `per 100 sessions created; ${m.idleMs / 1000} s after the last session ended it still held ${ms(m.afterIdleMiB, 0)} MiB.`,
    "",
  );
  if (f.knee) lines.push(`**Where it degrades**: ${f.knee.reason}.`, "");
  else lines.push("**Where it degrades**: throughput still grew at the highest level measured.", "");
  return lines.join("\n");
}

await main();
