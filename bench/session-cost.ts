// What one live session costs, to size MAX_SESSIONS_PER_PRINCIPAL: one token opens sessions against `wrangler dev`
// in steps and keeps them all open, each as a host starts one (initialize, notifications/initialized, tools/list,
// which waits for the team's two eager upstreams, one use_tool). After each step: the V8 heap of the Worker's isolate
// (every session object lives in it), the RSS of its workerd, and the upstream sessions the replay upstreams were
// asked to open. The figures per session are the slopes over the steps; what they come to at the default bound.
//
// `--smoke`: two tiny steps, writes nothing. The last line printed is `FIGURES <json>`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { provisionTeam } from "../harness/clients.ts";
import type { RouteStats } from "../harness/replay-types.ts";
import { startUpstreams, type Upstreams } from "./floor/node-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { rssKiB } from "./lib/proc.ts";
import { finishRun, isSmoke, median, ms } from "./lib/results.ts";
import { SETTING_DEFAULTS } from "../src/lib/settings.ts";
import { workerHeap, workerPid } from "./soak/worker.ts";

const ROOT = join(import.meta.dirname, "..");
process.chdir(ROOT);

const smoke = isSmoke();
const STEP = smoke ? 2 : 10;
const STEPS = smoke ? 2 : 8;
const ROUTES = ["modelcontextprotocol__server-memory", "modelcontextprotocol__server-everything"];
/** The isolate's memory limit on Cloudflare: what the sessions of an isolate share. */
const ISOLATE_MIB = 128;

interface Step {
  sessions: number;
  heapMiB: number;
  heapUsedMiB: number;
  rssMiB: number;
  upstreamSessions: number;
}

interface Figures {
  steps: Step[];
  perSession: { heapMiB: number; heapUsedMiB: number; rssMiB: number; upstreamSessions: number };
  /** Sessions whose heap alone fills one isolate (above the heap with none open). */
  sessionsPerIsolate: number;
  /** How long starting one took: the figures only (on a shared machine this is mostly its load), not the section. */
  startMs: { p50: number; max: number };
  errors: number;
}

/** The JSON-RPC answer in a JSON or an SSE body. */
function answerOf(contentType: string, body: string): { result?: Record<string, unknown>; error?: { message: string } } {
  if (!contentType.includes("text/event-stream")) return JSON.parse(body);
  const data = body.split("\n").filter((l) => l.startsWith("data:")).at(-1);
  if (!data) throw new Error(`no answer in the event stream: ${body.slice(0, 200)}`);
  return JSON.parse(data.slice(5));
}

/** One session as a host starts it, left open; its id. */
async function openSession(url: string, token: string): Promise<string> {
  let session = "";
  let id = 0;
  const send = async (message: Record<string, unknown>) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" };
    if (session) Object.assign(headers, { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" });
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message), signal: AbortSignal.timeout(30_000) });
    const body = await response.text();
    if (!response.ok) throw new Error(`${String(message.method)}: HTTP ${response.status} ${body.slice(0, 200)}`);
    session ||= response.headers.get("mcp-session-id") ?? "";
    if (message.id === undefined) return undefined;
    const answer = answerOf(response.headers.get("content-type") ?? "", body);
    if (answer.error) throw new Error(`${String(message.method)}: ${answer.error.message}`);
    return answer.result;
  };
  const request = (method: string, params: Record<string, unknown>) => send({ jsonrpc: "2.0", id: ++id, method, params });
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-session-cost", version: "1.0.0" } });
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const list = await request("tools/list", {});
  if (!JSON.stringify(list).includes("read_graph")) throw new Error(`tools/list: the eager catalogs are missing: ${JSON.stringify(list).slice(0, 200)}`);
  const call = (await request("tools/call", { name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "hi" } } })) as { isError?: boolean } | undefined;
  if (!call || call.isError) throw new Error(`use_tool: ${JSON.stringify(call).slice(0, 200)}`);
  return session;
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function upstreamSessions(upstreams: Upstreams): Promise<number> {
  let total = 0;
  for (const route of ROUTES) {
    const base = upstreams.replay(route).replace(/\/[^/]+\/mcp$/, "");
    const stats = (await (await fetch(`${base}/__stats/${route}`)).json()) as RouteStats;
    total += stats.sessions;
  }
  return total;
}

async function reading(proxy: Running, upstreams: Upstreams, sessions: number): Promise<Step> {
  // A moment for the answers' leftovers (background catalog writes, the alarms' first writes) to settle.
  await new Promise((r) => setTimeout(r, smoke ? 200 : 1_500));
  const heap = await workerHeap(proxy);
  const pid = workerPid(proxy);
  return {
    sessions,
    heapMiB: heap ? heap.totalMiB + heap.backingMiB : Number.NaN,
    heapUsedMiB: heap?.usedMiB ?? Number.NaN,
    rssMiB: pid === undefined ? Number.NaN : rssKiB(pid) / 1024,
    upstreamSessions: await upstreamSessions(upstreams),
  };
}

function render(f: Figures): string {
  const rows = f.steps.map((s) => `| ${s.sessions} | ${ms(s.heapMiB, 1)} | ${ms(s.heapUsedMiB, 1)} | ${ms(s.rssMiB, 0)} | ${s.upstreamSessions} |`);
  const p = f.perSession;
  const bound = SETTING_DEFAULTS.maxSessionsPerPrincipal;
  return [
    "## Sessions per principal",
    "",
    `One token opens 2025 sessions against \`wrangler dev\` on loopback, ${STEP} at a time, and keeps every one open: each as a host starts it ` +
      "(initialize, notifications/initialized, tools/list, which waits for the team's two eager upstreams, the server-memory and " +
      "server-everything replay catalogs, then one use_tool). After each step: the V8 heap of the Worker's isolate (allocated + " +
      "ArrayBuffer backing stores; every session object lives in it; workerd cannot be asked to collect garbage first, so the used " +
      "figure holds some), the RSS of its workerd, and the upstream sessions the replay upstreams were asked to open.",
    "",
    "| live sessions | heap (MiB) | heap used (MiB) | workerd RSS (MiB) | upstream sessions opened |",
    "|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `**Per live session**: ${ms(p.heapMiB, 2)} MiB of heap (${ms(p.heapUsedMiB, 2)} MiB used), ${ms(p.rssMiB, 2)} MiB of RSS, and ` +
      `${ms(p.upstreamSessions, 1)} upstream sessions (one per eager upstream). On Cloudflare a Durable Object's isolate has ${ISOLATE_MIB} MB, ` +
      `which objects of one class may share: the heap of about ${Math.floor(f.sessionsPerIsolate)} such sessions fills one. ` +
      `At MAX_SESSIONS_PER_PRINCIPAL's default, ${bound}, ` +
      `one principal's live sessions hold about ${ms(bound * p.heapMiB, 1)} MiB of heap with this team (a team with more eager upstreams ` +
      `or larger catalogs holds more per session) and ${bound} upstream sessions on each eager upstream; why ${bound}: docs/security.md.`,
  ].join("\n");
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-session-cost-"));
  let upstreams: Upstreams | undefined;
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  let errors = 0;
  try {
    upstreams = await startUpstreams();
    const state = join(dir, "state");
    const token = provisionTeam(dir, state, "cost", {
      mcp: { memory: { url: upstreams.replay(ROUTES[0]!) }, everything: { url: upstreams.replay(ROUTES[1]!) } },
    });
    snapshot = snapshotProxy();
    // No bound here: the run measures what the bound is for.
    proxy = await startWranglerDev({ persistTo: state, vars: { SESSION_KEY: "bench", MAX_SESSIONS_PER_PRINCIPAL: "100000" }, config: snapshot.config });
    const url = `${proxy.url}/t/cost/mcp`;
    // Warm-up: the first session compiles and caches what every later one reuses; it stays open (counted as the first).
    const startMs: number[] = [];
    const timed = async () => {
      const started = performance.now();
      await openSession(url, token);
      startMs.push(performance.now() - started);
    };
    await timed();
    const steps: Step[] = [await reading(proxy, upstreams, 1)];
    for (let step = 1; step <= STEPS; step++) {
      // A few at a time, as hosts would start them; not one long burst the machine queues.
      for (let i = 0; i < STEP; i += 2) {
        const batch = await Promise.allSettled([timed(), timed()].slice(0, Math.min(2, STEP - i)));
        for (const outcome of batch) if (outcome.status === "rejected") (errors++, console.error(String(outcome.reason)));
      }
      const r = await reading(proxy, upstreams, 1 + step * STEP);
      steps.push(r);
      console.log(`session-cost: ${r.sessions} sessions: heap ${ms(r.heapMiB, 1)} MiB, RSS ${ms(r.rssMiB, 0)} MiB, upstream sessions ${r.upstreamSessions}`);
    }
    const per = (key: keyof Step) => slope(steps.map((s) => [s.sessions, s[key]]));
    const perSession = { heapMiB: per("heapMiB"), heapUsedMiB: per("heapUsedMiB"), rssMiB: per("rssMiB"), upstreamSessions: per("upstreamSessions") };
    const figures: Figures = {
      steps,
      perSession,
      sessionsPerIsolate: (ISOLATE_MIB - steps[0]!.heapMiB) / Math.max(perSession.heapMiB, 0.001),
      startMs: { p50: median(startMs), max: Math.max(...startMs) },
      errors,
    };
    const markdown = render(figures);
    console.log(`\n${markdown}\n`);
    finishRun({ name: "session-cost", figures, markdown, smoke, wranglerOutput: proxy.output(), errors });
  } finally {
    await Promise.all([proxy?.stop(), upstreams?.stop()]);
    snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
