// Soak (issue 7): many MCP sessions calling tools through the proxy for minutes while one upstream misbehaves on a
// schedule. Loopback only, bounded in sessions and time, stops by itself.
//
//   - Upstreams: two replay servers (test/fixtures/replay-server.ts) in a Node process of their own, started from
//     this file with `--upstreams`: "healthy" (server-everything's catalog) and "chaos" (server-memory's). This
//     process drives the chaos route's schedule: faults are swapped over IPC, down/up/forget go through the
//     replay server's control endpoints.
//   - Proxy: `wrangler dev` serving a copy of src/ taken at start (bench/floor/proxy-snapshot.ts), its state in a
//     fresh --persist-to folder, the team provisioned with the team CLI.
//   - Hosts: concurrent sessions, each its own SDK Client over streamable HTTP with the bearer token. A session
//     lives 20–60 s (every 4th is abandoned without DELETE, as hosts that vanish do), then a new one takes its
//     place. Each round calls, in parallel: healthy/echo or healthy/get-sum, chaos/read_graph (read-only: safe to
//     repeat) and chaos/create_entities (not idempotent: never repeated), then thinks for 1.5–3 s.
//   - Figures: calls, errors by kind (the isError texts classified), transport failures to the proxy (thrown by
//     the SDK client: must be 0), p50/p99 of successful calls, per chaos phase what the host saw; the RSS of the
//     workerd running the Worker, the V8 heap of its isolate, what the proxy keeps (rows of its Durable Objects
//     and KV entries) and the bytes under --persist-to over time, with their slopes over the middle and the last
//     third of the run; after the run, what is still kept once every abandoned session is past its time-to-live
//     (counted again until nothing is, or a generous deadline passes); then the floor Worker's RSS growth for as
//     many requests, under its own wrangler dev.
//
// `--minutes N` (default 4), `--sessions N` (default 40), `--ttl S` (SESSION_TTL_SECONDS, default 60), `--idle S`
// (UPSTREAM_IDLE_SECONDS, default 15), `--smoke` (~20 s, 6 sessions, three phases, writes nothing). The last line
// printed is `FIGURES <json>`. Exit code 1 when a transport failure, an error on the healthy upstream or a wrong
// answer was seen, or when a session's storage was still there at the deadline after its time-to-live (the figures
// are still written: they are the finding); also when wrangler reloaded the Worker during a full run, which then
// writes nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runScript, scrubbedEnv, startWranglerDev, stopChild, type Running } from "../scripts/lib/processes.ts";
import { provisionTeam } from "../test/e2e/helpers.ts";
import { loadCorpus, startReplayServer, type Fault, type ReplayRoute, type RouteStats } from "../test/fixtures/replay-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { finishRun, isSmoke, ms, percentiles, type Percentiles } from "./lib/results.ts";
import { CLK_TCK, CORES, machineBusyTicks, readStat, rssKiB, wranglerProcesses } from "./lib/proc.ts";

const ROOT = join(import.meta.dirname, "..");
const THIS_FILE = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------------------------
// Settings

function argNumber(name: string, fallback: number, min: number, max: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} takes a number from ${min} to ${max}`);
  return value;
}

const smoke = isSmoke();
/** The active run: sessions call tools for this long (then the open ones finish their round). */
const RUN_MS = smoke ? 20_000 : Math.round(argNumber("--minutes", 4, 1, 60) * 60_000);
const SESSIONS = smoke ? 6 : Math.round(argNumber("--sessions", 40, 1, 200));
/** Calm before the first chaos phase; then cycles of chaos and calm. */
const WARM_MS = smoke ? 2_000 : 12_000;
const CHAOS_MS = smoke ? 3_000 : 10_000;
const CALM_MS = smoke ? 3_000 : 12_000;
const LIFETIME_MS: readonly [number, number] = smoke ? [6_000, 12_000] : [20_000, 60_000];
const THINK_MS: readonly [number, number] = smoke ? [200, 500] : [1_500, 3_000];
/** Hosts start spread over this long. */
const STAGGER_MS = smoke ? 1_000 : 5_000;
/** Every n-th session ends without DELETE (its host just goes away). */
const ABANDON_EVERY = 4;
/** The chaos entry's upstream timeout (the healthy one keeps the default 30 s). */
const CHAOS_TIMEOUT_MS = 4_000;
/**
 * The host side's own request timeout: hitting it is a transport failure. Longer than the proxy's default upstream
 * timeout (30 s), so a slow upstream is reported by the proxy first.
 */
const CLIENT_TIMEOUT_MS = 45_000;
/** A session whose requests fail this many rounds in a row at the transport level is given up. */
const MAX_TRANSPORT_STREAK = 3;
const SAMPLE_MS = smoke ? 1_000 : 2_000;
/**
 * The proxy's clocks, short so a run of minutes shows them at work: an abandoned session's storage is deleted
 * SESSION_TTL_SECONDS after its last request (a day by default), and its upstream clients are closed
 * UPSTREAM_IDLE_SECONDS after it (two minutes by default).
 */
const SESSION_TTL_S = smoke ? 8 : argNumber("--ttl", 60, 5, 86_400);
const UPSTREAM_IDLE_S = smoke ? 4 : argNumber("--idle", 15, 2, 86_400);
/**
 * After the run, what the proxy keeps is counted again until no session object and no index entry holds anything
 * (then memory is read once more). Nothing abandoned at the end of the run can be deleted before its time-to-live,
 * so counting starts one time-to-live after the run, and goes on every WAIT_POLL_MS. The alarm that deletes a
 * session runs late on a busy machine (it was seen more than 4 s late with the two cores shared), so the deadline
 * is generous: the time-to-live, one idle period, and a margin. A real leak never clears, so the deadline only
 * bounds how long a failing run takes; storage still there then fails the run.
 */
const WAIT_MIN_MS = SESSION_TTL_S * 1000;
const WAIT_DEADLINE_MS = (SESSION_TTL_S + UPSTREAM_IDLE_S + (smoke ? 30 : 60)) * 1000;
const WAIT_POLL_MS = smoke ? 1_000 : 2_000;
/** What the proxy keeps (rows in its Durable Objects, entries in KV) is counted this often. */
const CENSUS_MS = smoke ? 4_000 : 15_000;
/** The V8 heap of the Worker's isolate is read this often. */
const HEAP_MS = smoke ? 5_000 : 30_000;
/**
 * The floor after the soak: a trivial Worker → Durable Object → fetch under its own `wrangler dev`, sent as many
 * requests as the proxy got (at most this many), to tell the local runtime's memory growth from the proxy's.
 */
const FLOOR_MAX_REQUESTS = smoke ? 300 : 40_000;
/** The forget phase makes the chaos upstream forget its sessions this often. */
const FORGET_EVERY_MS = smoke ? 1_000 : 2_000;
/** Memory and storage "level off" when they grow at most this much per minute over the last third of the run. */
const MEMORY_FLOOR_MIB_PER_MIN = 5;
const STORAGE_FLOOR_BYTES_PER_MIN = 64 * 1024;
/** Hard stop: whatever happens, the run ends (children stopped) this long after it started. */
const WATCHDOG_MS = RUN_MS + WAIT_DEADLINE_MS + 420_000;

const HEALTHY_CATALOG = "modelcontextprotocol__server-everything";
const CHAOS_CATALOG = "modelcontextprotocol__server-memory";
/** wrangler.toml's `name`: its Durable Objects live under v3/do/<name>-<class>. */
const WORKER_NAME = "dynmcp-edge";

interface PhaseSpec {
  name: string;
  /** What the chaos upstream does during the phase, for the report. */
  what: string;
  faults?: Record<string, Fault>;
  control?: "down" | "forget";
  /** What the proxy promises the host sees (issue 7, docs). */
  expect: string;
}

const PHASES: readonly PhaseSpec[] = [
  {
    name: "forget",
    what: `forgets all its sessions every ${FORGET_EVERY_MS / 1000} s (404 to known session ids)`,
    control: "forget",
    expect: "a new upstream session and the call once more, invisible to the host; a call whose new session is forgotten too before the retry lands is reported as expired",
  },
  {
    name: "rpc-error",
    what: "answers every tools/call with JSON-RPC error -32603",
    faults: { "tools/call": { kind: "rpc-error", code: -32603, message: "chaos: internal error" } },
    expect: "the upstream's error as an isError result naming the server, at once",
  },
  {
    name: "http-503",
    what: "answers every request with HTTP 503",
    faults: { "*": { kind: "http", status: 503, body: "Service Unavailable" } },
    expect: "HTTP 503 as an isError result, at once; sessions that start now list chaos as unavailable, and their calls to its tools try it again at once (within the reconnect budget)",
  },
  {
    name: "429",
    what: "answers tools/call with HTTP 429 and Retry-After: 1",
    faults: { "tools/call": { kind: "raw", status: 429, contentType: "application/json", body: '{"error":"rate limited"}', headers: { "retry-after": "1" } } },
    expect: "one wait of the Retry-After (1 s), one more try, then HTTP 429",
  },
  {
    name: "slow",
    what: "answers tools/call after 1.5 s",
    faults: { "tools/call": { kind: "delay", ms: 1_500 } },
    expect: "every call succeeds, 1.5 s slower; healthy calls unaffected",
  },
  {
    name: "down",
    what: "is down: every connection is dropped",
    control: "down",
    expect: "unreachable (read-only tool, after one reconnect with backoff) or unknown outcome (create_entities); throttled once a session's reconnect budget (10, given back one every 6 s) is spent; sessions that start now list chaos as unavailable, and their calls to its tools try it again at once (within the reconnect budget)",
  },
  {
    name: "sse-cut",
    what: "cuts every tools/call answer stream in the middle",
    faults: { "tools/call": { kind: "sse-cut" } },
    expect: "read_graph tried once more on a new connection (cut again: an error), create_entities reported as unknown outcome, never repeated",
  },
  {
    name: "hang",
    what: "accepts tools/call and never answers",
    faults: { "tools/call": { kind: "hang" } },
    expect: "a timeout after the entry's 4 s, the upstream request cancelled; healthy calls of the same session unaffected",
  },
  {
    name: "wrong-id",
    what: "answers tools/call with the wrong JSON-RPC id",
    faults: { "tools/call": { kind: "wrong-id" } },
    expect: "the stray answer ignored, the call times out after 4 s",
  },
  {
    name: "huge",
    what: "answers the phase's first 20 tools/call with 9 MiB (the proxy's limit is 8 MiB)",
    faults: { "tools/call": { kind: "huge", bytes: 9 * 2 ** 20, times: 20 } },
    expect: "those 20 refused as too large, the session goes on; the other calls succeed",
  },
];
const SMOKE_PHASES = ["down", "rpc-error", "forget"];

function schedule(): PhaseSpec[] {
  const count = Math.max(1, Math.floor((RUN_MS - WARM_MS) / (CHAOS_MS + CALM_MS)));
  const pool = smoke ? SMOKE_PHASES.map((n) => PHASES.find((p) => p.name === n)!) : PHASES;
  return Array.from({ length: count }, (_, i) => pool[i % pool.length]!);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const between = ([lo, hi]: readonly [number, number]) => lo + Math.random() * (hi - lo);

// ---------------------------------------------------------------------------------------------------------------
// The upstream process (`node bench/soak.ts --upstreams`)

/** A fault change for the chaos route, or a question about requests in flight or event-loop stalls. */
type ToUpstreams = { seq: number; faults: Record<string, Fault> | null } | { seq: number; query: "inflight" | "stalls" };
interface InFlight {
  healthy: number;
  chaos: number;
}
type FromUpstreams =
  | { type: "ready"; healthy: number; chaos: number }
  | { type: "ack"; seq: number; inflight?: InFlight; stalls?: Stall[] };

/** A moment a process's event loop could not run timers on time: when (epoch ms) and for how long. */
interface Stall {
  at: number;
  ms: number;
}

/** Notes every time a 50 ms timer fires more than STALL_MS late (the process was busy or descheduled). */
const STALL_MS = 250;
function watchStalls(): { stalls: Stall[]; stop: () => void } {
  const stalls: Stall[] = [];
  let last = Date.now();
  const timer = setInterval(() => {
    const t = Date.now();
    const late = t - last - 50;
    if (late > STALL_MS && stalls.length < 1_000) stalls.push({ at: last + 50, ms: late });
    last = t;
  }, 50);
  timer.unref();
  return { stalls, stop: () => clearInterval(timer) };
}

/**
 * Node closes idle keep-alive connections after 5 s; a client (workerd) reusing one just as it closes fails with
 * "Network connection lost". Hosted servers sit behind load balancers that keep connections for a minute or more,
 * so these servers do too (as bench/floor/node-server.ts does for the other benchmarks).
 */
function longKeepAlive(): void {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    this.keepAliveTimeout = 65_000;
    this.headersTimeout = 66_000;
    countInFlight(this);
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  } as typeof Server.prototype.listen;
}

/**
 * Requests each server has received and not finished answering: a response ends when it is sent or when the
 * client closes the connection. A request the proxy gave up on (a timeout) but never aborted stays here.
 */
const inFlight = new Map<Server, number>();
function countInFlight(server: Server): void {
  inFlight.set(server, 0);
  server.on("request", (_req, res) => {
    inFlight.set(server, (inFlight.get(server) ?? 0) + 1);
    res.once("close", () => inFlight.set(server, (inFlight.get(server) ?? 1) - 1));
  });
}
const inFlightOn = (port: number): number => {
  for (const [server, n] of inFlight) {
    const address = server.address();
    if (typeof address === "object" && address?.port === port) return n;
  }
  return 0;
};

async function serveUpstreams(): Promise<void> {
  longKeepAlive();
  const chaosRoutes: Record<string, ReplayRoute> = { chaos: { catalog: loadCorpus(CHAOS_CATALOG) } };
  const healthy = await startReplayServer({ healthy: { catalog: loadCorpus(HEALTHY_CATALOG) } });
  const chaos = await startReplayServer(chaosRoutes);
  const stalls = watchStalls();
  const stop = () => void Promise.all([healthy.close(), chaos.close()]).then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop); // the soak is gone: never outlive it
  process.on("message", (raw) => {
    const message = raw as ToUpstreams;
    if ("query" in message && message.query === "stalls") {
      process.send?.({ type: "ack", seq: message.seq, stalls: stalls.stalls } satisfies FromUpstreams);
      return;
    }
    if ("query" in message) {
      const inflight = { healthy: inFlightOn(healthy.port), chaos: inFlightOn(chaos.port) };
      process.send?.({ type: "ack", seq: message.seq, inflight } satisfies FromUpstreams);
      return;
    }
    // The replay server reads a route's faults on every request, so swapping the object takes effect at once.
    const route = chaosRoutes.chaos!;
    if (message.faults) route.faults = message.faults;
    else delete route.faults;
    process.send?.({ type: "ack", seq: message.seq } satisfies FromUpstreams);
  });
  process.send?.({ type: "ready", healthy: healthy.port, chaos: chaos.port } satisfies FromUpstreams);
}

interface Upstreams {
  pid: number;
  healthyBase: string;
  chaosBase: string;
  setFaults: (faults: Record<string, Fault> | null) => Promise<void>;
  /** Requests each upstream has received and not finished answering right now. */
  inFlight: () => Promise<InFlight>;
  stalls: () => Promise<Stall[]>;
  /** POST to a control endpoint of a replay server (`/__down/chaos`, `/__reset`, …). */
  control: (base: string, path: string) => Promise<void>;
  stats: (base: string, route: string) => Promise<RouteStats>;
  output: () => string;
  stop: () => Promise<void>;
}

function startUpstreams(): Promise<Upstreams> {
  const child: ChildProcess = spawn(process.execPath, [THIS_FILE, "--upstreams"], {
    env: scrubbedEnv({}),
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let seq = 0;
  const acks = new Map<number, (answer: FromUpstreams & { type: "ack" }) => void>();
  const ask = (message: ToUpstreams) =>
    new Promise<FromUpstreams & { type: "ack" }>((done, fail) => {
      const t = setTimeout(() => fail(new Error("the upstream process did not answer")), 5_000);
      acks.set(message.seq, (answer) => (clearTimeout(t), done(answer)));
      child.send(message);
    });
  const stop = () => stopChild(child, 3_000);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the upstream process did not start:\n${output}`));
    }, 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the upstream process exited with ${code}:\n${output}`));
    });
    child.on("message", (raw) => {
      const message = raw as FromUpstreams;
      if (message.type === "ack") {
        acks.get(message.seq)?.(message);
        acks.delete(message.seq);
        return;
      }
      clearTimeout(timer);
      const healthyBase = `http://127.0.0.1:${message.healthy}`;
      const chaosBase = `http://127.0.0.1:${message.chaos}`;
      resolve({
        pid: child.pid ?? 0,
        healthyBase,
        chaosBase,
        setFaults: async (faults) => {
          await ask({ seq: ++seq, faults });
        },
        inFlight: async () => (await ask({ seq: ++seq, query: "inflight" })).inflight ?? { healthy: 0, chaos: 0 },
        stalls: async () => (await ask({ seq: ++seq, query: "stalls" })).stalls ?? [],
        control: async (base, path) => {
          const response = await fetch(`${base}${path}`, { method: "POST", signal: AbortSignal.timeout(5_000) });
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status}`);
        },
        stats: async (base, route) => {
          const response = await fetch(`${base}/__stats/${route}`, { signal: AbortSignal.timeout(5_000) });
          return (await response.json()) as RouteStats;
        },
        output: () => output,
        stop,
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Calls and what the host saw

type Upstream = "healthy" | "chaos";

interface CallEvent {
  upstream: Upstream;
  tool: string;
  /** ms since the run started. */
  start: number;
  end: number;
  ok: boolean;
  /** The error class when not ok; "transport" when the SDK client threw. */
  kind?: string;
  /** The session's round (0: the first calls after tools/list). */
  round: number;
}

interface Totals {
  events: CallEvent[];
  transportFailures: number;
  /** Transport failures by where they happened (initialize, tools/list, use_tool on …, DELETE). */
  transportByStep: Record<string, number>;
  transportSamples: string[];
  otherSamples: string[];
  /** The first text the host got for each error kind. */
  kindSamples: Record<string, string>;
  /** HTTP requests the hosts sent to the proxy (POST, GET and DELETE). */
  proxyRequests: number;
  sessionsStarted: number;
  sessionsDeleted: number;
  sessionsAbandoned: number;
  /** Sessions whose catalog showed the chaos upstream as unavailable at start. */
  sessionsChaosUnavailable: number;
  /** Sessions whose catalog lacked the healthy upstream's tools (an isolation failure). */
  sessionsHealthyMissing: number;
  open: number;
  peakOpen: number;
  /** The first errors the SDK client reported outside requests (e.g. its GET stream breaking), while the session was open. */
  streamSamples: string[];
}

const totals: Totals = {
  events: [],
  transportFailures: 0,
  transportByStep: {},
  transportSamples: [],
  otherSamples: [],
  kindSamples: {},
  proxyRequests: 0,
  sessionsStarted: 0,
  sessionsDeleted: 0,
  sessionsAbandoned: 0,
  sessionsChaosUnavailable: 0,
  sessionsHealthyMissing: 0,
  open: 0,
  peakOpen: 0,
  streamSamples: [],
};

const short = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).replace(/\s+/g, " ").slice(0, 300);

function transportFailure(step: string, err: unknown): void {
  totals.transportFailures++;
  totals.transportByStep[step] = (totals.transportByStep[step] ?? 0) + 1;
  if (totals.transportSamples.length < 8) totals.transportSamples.push(`${step}: ${short(err)}`);
}

/** The class of a use_tool isError text (the proxy's wording, see src/errors.ts). */
function classify(text: string): string {
  if (text.includes("Unknown tool:")) return "not in the session's catalog";
  if (text.includes("cannot be called now")) return "unavailable (tried again at once)";
  if (text.includes("may or may not have run")) return "unknown outcome";
  if (text.includes("could not reach")) return "unreachable";
  const http = /answered HTTP (\d{3})/.exec(text);
  if (http) return `HTTP ${http[1]}`;
  if (text.includes("did not answer within")) return "timeout";
  if (text.includes("no longer knows this session")) return "session expired";
  if (text.includes("larger than")) return "too large";
  if (text.includes("returned an error")) return "upstream JSON-RPC error";
  if (text.includes("reconnecting too often")) return "throttled (reconnect budget)";
  if (text.includes("broke the MCP protocol")) return "protocol error";
  if (/the connection to "[^"]*" closed/.test(text)) return "connection closed";
  return "other";
}

const textOf = (result: CallToolResult) => (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

let runStart = 0;
const now = () => performance.now() - runStart;

/** One use_tool call in the session's `round`; the replay upstream echoes tool and arguments, which must be the call's own. */
async function call(
  client: Client,
  upstream: Upstream,
  tool: string,
  input: Record<string, unknown>,
  round: number,
): Promise<"ok" | "error" | "transport"> {
  const start = now();
  let result: CallToolResult;
  try {
    result = (await client.callTool({ name: "use_tool", arguments: { tool_name: `${upstream}/${tool}`, tool_input: input } }, undefined, {
      timeout: CLIENT_TIMEOUT_MS,
    })) as CallToolResult;
  } catch (err) {
    transportFailure(`use_tool on ${upstream}`, err);
    totals.events.push({ upstream, tool, start, end: now(), ok: false, kind: "transport", round });
    return "transport";
  }
  const end = now();
  const text = textOf(result);
  if (result.isError) {
    const kind = classify(text);
    if (kind === "other" && totals.otherSamples.length < 8) totals.otherSamples.push(`${upstream}/${tool}: ${text.slice(0, 300)}`);
    totals.kindSamples[kind] ??= text.slice(0, 400);
    totals.events.push({ upstream, tool, start, end, ok: false, kind, round });
    return "error";
  }
  let echoed: { tool?: unknown; arguments?: unknown } = {};
  try {
    echoed = JSON.parse(text) as typeof echoed;
  } catch {
    // not the replay's answer: counted as a wrong answer below
  }
  if (echoed.tool !== tool || JSON.stringify(echoed.arguments ?? {}) !== JSON.stringify(input)) {
    if (totals.otherSamples.length < 8) totals.otherSamples.push(`wrong answer from ${upstream}/${tool}: ${text.slice(0, 200)}`);
    totals.events.push({ upstream, tool, start, end, ok: false, kind: "wrong answer", round });
    return "error";
  }
  totals.events.push({ upstream, tool, start, end, ok: true, round });
  return "ok";
}

async function session(url: string, token: string, number: number, runEnd: number): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: (input, init) => (totals.proxyRequests++, fetch(input, init)),
  });
  const client = new Client({ name: "soak-host", version: "1.0.0" });
  let closing = false;
  client.onerror = (err) => {
    if (closing) return;
    if (totals.streamSamples.length < 5) totals.streamSamples.push(short(err));
  };
  try {
    await client.connect(transport, { timeout: CLIENT_TIMEOUT_MS });
  } catch (err) {
    transportFailure("initialize", err);
    closing = true;
    await client.close().catch(() => {});
    return;
  }
  totals.sessionsStarted++;
  totals.open++;
  totals.peakOpen = Math.max(totals.peakOpen, totals.open);
  const abandon = number % ABANDON_EVERY === ABANDON_EVERY - 1;
  try {
    let catalog = "";
    try {
      const list = await client.listTools(undefined, { timeout: CLIENT_TIMEOUT_MS });
      catalog = list.tools.find((t) => t.name === "discover_tool")?.description ?? "";
    } catch (err) {
      transportFailure("tools/list", err);
      return;
    }
    if (/^chaos: unavailable/m.test(catalog)) totals.sessionsChaosUnavailable++;
    if (!/^healthy:$/m.test(catalog) || !/^- echo:/m.test(catalog)) totals.sessionsHealthyMissing++;

    const ends = Math.min(runEnd, now() + between(LIFETIME_MS));
    let streak = 0;
    for (let round = 0; now() < ends && round < 10_000; round++) {
      const nonce = `s${number}-r${round}`;
      const healthy =
        round % 2 === 0
          ? call(client, "healthy", "echo", { message: nonce }, round)
          : call(client, "healthy", "get-sum", { a: number, b: round }, round);
      const outcomes = await Promise.all([
        healthy,
        call(client, "chaos", "read_graph", {}, round),
        call(client, "chaos", "create_entities", { entities: [{ name: nonce, entityType: "soak", observations: [] }] }, round),
      ]);
      streak = outcomes.every((o) => o === "transport") ? streak + 1 : 0;
      if (streak >= MAX_TRANSPORT_STREAK) break;
      await sleep(between(THINK_MS));
    }
  } finally {
    totals.open--;
    closing = true;
    if (abandon) {
      totals.sessionsAbandoned++;
    } else {
      // The SDK puts no time limit on DELETE; close() below aborts it.
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          transport.terminateSession(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer to DELETE within ${CLIENT_TIMEOUT_MS} ms`)), CLIENT_TIMEOUT_MS);
          }),
        ]);
        totals.sessionsDeleted++;
      } catch (err) {
        transportFailure("DELETE", err);
      } finally {
        clearTimeout(timer);
      }
    }
    await client.close().catch(() => {});
  }
}

/** One host: sessions back to back until the run ends. */
async function host(index: number, url: string, token: string, runEnd: number, next: () => number): Promise<void> {
  await sleep((STAGGER_MS * index) / SESSIONS);
  for (let i = 0; now() < runEnd && i < 10_000; i++) {
    const before = totals.transportFailures;
    await session(url, token, next(), runEnd);
    // A session that could not even start: do not spin.
    if (totals.transportFailures > before) await sleep(1_000);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The Worker's process and the persistence folder, from /proc and the file system

/** The workerd that runs the Worker and every session object (not wrangler's proxy worker): the one measured. */
const workerPid = (proxy: Running): number | undefined => wranglerProcesses(proxy.child.pid, proxy.port).worker;

interface HeapReading {
  /** s since the run started. */
  t: number;
  usedMiB: number;
  totalMiB: number;
  /** ArrayBuffer backing stores (outside the V8 heap), as V8 reports them. */
  backingMiB: number;
}

/**
 * The V8 heap of the Worker's isolate (every session object lives in it), read through wrangler's inspector port
 * with the DevTools protocol's Runtime.getHeapUsage. Connected only for a reading (an attached debugger could slow
 * the Worker); undefined when it cannot be read. workerd does not implement HeapProfiler.collectGarbage, so the
 * used size includes garbage not yet collected.
 */
async function workerHeap(proxy: Running): Promise<Omit<HeapReading, "t"> | undefined> {
  const args = proxy.child.spawnargs;
  const port = args[args.indexOf("--inspector-port") + 1];
  if (!port) return undefined;
  let ws: WebSocket | undefined;
  try {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(5_000) })).json()) as Array<{
      webSocketDebuggerUrl?: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) return undefined;
    // wrangler's inspector proxy accepts DevTools' origin only; Node's WebSocket (undici) takes headers.
    const Socket = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;
    const socket = new Socket(url, { headers: { Origin: "https://devtools.devprod.cloudflare.dev" } });
    ws = socket;
    return await new Promise<Omit<HeapReading, "t"> | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 5_000);
      socket.addEventListener("error", () => (clearTimeout(timer), resolve(undefined)));
      socket.addEventListener("open", () => socket.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" })));
      socket.addEventListener("message", (event) => {
        const message = JSON.parse(String(event.data)) as {
          id?: number;
          result?: { usedSize: number; totalSize: number; backingStorageSize?: number };
        };
        if (message.id !== 1 || !message.result) return;
        clearTimeout(timer);
        const r = message.result;
        resolve({
          usedMiB: r.usedSize / 2 ** 20,
          totalMiB: r.totalSize / 2 ** 20,
          backingMiB: (r.backingStorageSize ?? 0) / 2 ** 20,
        });
      });
    });
  } catch {
    return undefined;
  } finally {
    ws?.close();
  }
}

interface FloorFigures {
  requests: number;
  errors: number;
  seconds: number;
  rssStartMiB: number;
  rssEndMiB: number;
  /** RSS growth per request, KiB. */
  kibPerRequest: number;
}

/**
 * The local runtime's own memory growth: a trivial Worker forwarding every request to one Durable Object that
 * fetches a plain Node server (bench/floor, `/do-fetch`), under its own `wrangler dev`, sent `requests` requests
 * `concurrency` at a time. Its RSS per request, beside the proxy's, tells what the proxy adds.
 */
async function runFloor(dir: string, requests: number, concurrency: number): Promise<FloorFigures | undefined> {
  const node = new Server((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  node.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  const address = node.address();
  const nodeUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
  let floor: Running | undefined;
  try {
    floor = await startWranglerDev({ persistTo: join(dir, "floor"), vars: { NODE_URL: nodeUrl }, config: "bench/floor/wrangler.toml" });
    const target = `${floor.url}/do-fetch`;
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { message: "floor" } } });
    const post = async () => {
      const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      return response.ok;
    };
    await post(); // the Worker and its object are up before the first reading
    const running = floor;
    let pid = workerPid(running);
    const rss = () => {
      if (pid === undefined || rssKiB(pid) === 0) pid = workerPid(running);
      return (pid === undefined ? 0 : rssKiB(pid)) / 1024;
    };
    const rssStartMiB = rss();
    const started = performance.now();
    let sent = 0;
    let errors = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < requests) {
          sent++;
          if (!(await post().catch(() => false))) errors++;
        }
      }),
    );
    const rssEndMiB = rss();
    return {
      requests: sent,
      errors,
      seconds: (performance.now() - started) / 1000,
      rssStartMiB,
      rssEndMiB,
      kibPerRequest: ((rssEndMiB - rssStartMiB) * 1024) / Math.max(1, sent),
    };
  } catch (err) {
    console.error(`soak: the floor run failed: ${short(err)}`);
    return undefined;
  } finally {
    await floor?.stop();
    node.closeAllConnections();
    await new Promise<void>((resolve) => node.close(() => resolve()));
  }
}

interface FolderSize {
  bytes: number;
  /** The proxy's own state: Durable Objects (sessions, and any other class of the Worker) and KV. */
  proxyBytes: number;
  /** SQLite files of session objects (one per object that ever stored something). */
  objectFiles: number;
}

/**
 * Bytes under --persist-to, by owner. Besides the Worker's Durable Objects (`v3/do/<worker>-<class>`) and KV
 * (`v3/kv`), wrangler's local emulation keeps stores of its own there (observability traces, the rate limiter's
 * object, …) that have no counterpart in the proxy's deployed storage; they count in the total only.
 */
function folderSize(dir: string): FolderSize {
  const out: FolderSize = { bytes: 0, proxyBytes: 0, objectFiles: 0 };
  const walk = (path: string, rel: string, depth: number) => {
    if (depth > 12) return;
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      const relative = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(full, relative, depth + 1);
      else if (entry.isFile()) {
        let size = 0;
        try {
          size = statSync(full).size;
        } catch {
          continue; // gone between listing and stat (a WAL file checkpointed away)
        }
        out.bytes += size;
        const session = relative.startsWith("v3/do/") && relative.includes("-SessionObject/");
        if (relative.startsWith(`v3/do/${WORKER_NAME}-`) || relative.startsWith("v3/kv/")) out.proxyBytes += size;
        if (session && entry.name.endsWith(".sqlite") && entry.name !== "metadata.sqlite") out.objectFiles++;
      }
    }
  };
  walk(dir, "", 0);
  return out;
}

interface ObjectCensus {
  /** Objects of the class with a SQLite file. */
  files: number;
  /** Objects that still hold rows (for sessions: one not ended yet, by DELETE or its time-to-live). */
  holdingData: number;
  unreadable: number;
  /** Rows in all the class's objects, and the bytes of their keys and values: what the proxy keeps. */
  rows: number;
  dataBytes: number;
  /**
   * File bytes (WAL and shared-memory files included) of the objects whose storage was wiped: workerd keeps an
   * empty file (the deployed runtime keeps nothing).
   */
  bytesEmpty: number;
  /** Rows of the fullest object. */
  maxRows: number;
}

interface KeptSample {
  /** s since the run started. */
  t: number;
  sessions: ObjectCensus;
  /** The per-team index of live sessions (admin reloads and reconnects find them there). */
  teamIndex: ObjectCensus;
  /** Team configs, token hashes, catalog cache. */
  kv: { entries: number; dataBytes: number };
  /** Bytes of keys and values in all of the above. */
  dataBytes: number;
}

type Sqlite = typeof import("node:sqlite");
let sqlite: Promise<Sqlite> | undefined;

/** node:sqlite, loaded once; it is experimental in Node 22, so its one-time warning is kept out of the output. */
function loadSqlite(): Promise<Sqlite> {
  if (!sqlite) {
    const listeners = process.listeners("warning");
    process.removeAllListeners("warning");
    process.on("warning", (w) => {
      if (w.name !== "ExperimentalWarning") for (const l of listeners) l(w);
    });
    sqlite = import("node:sqlite");
  }
  return sqlite;
}

/** Bytes of a SQLite file with its WAL and shared-memory files, and when any of them last changed. */
function sqliteFileState(file: string): { bytes: number; mtimeMs: number } {
  let bytes = 0;
  let mtimeMs = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      const st = statSync(file + suffix);
      bytes += st.size;
      mtimeMs = Math.max(mtimeMs, st.mtimeMs);
    } catch {
      // no WAL or shared-memory file
    }
  }
  return { bytes, mtimeMs };
}

/**
 * Per object file: its rows and data bytes when last read, so an unchanged file is not opened again. A file that
 * could not be read (being created, say) is not remembered: it is read again next time.
 */
const objectCache = new Map<string, { mtimeMs: number; rows: number; dataBytes: number }>();

/**
 * Opens each object's SQLite file of one Durable Object class read-only (workerd keeps an object's rows in
 * `_cf_KV`) and counts the rows and the bytes of their keys and values. Counting rows, not file sizes, is what
 * tells the proxy's storage from the local runtime's: workerd keeps a file for every object that ever stored
 * anything, even after deleteAll().
 */
async function censusOfObjects(state: string, className: string): Promise<ObjectCensus> {
  const out: ObjectCensus = { files: 0, holdingData: 0, unreadable: 0, rows: 0, dataBytes: 0, bytesEmpty: 0, maxRows: 0 };
  const dir = join(state, "v3", "do", `${WORKER_NAME}-${className}`);
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  } catch {
    return out;
  }
  const { DatabaseSync } = await loadSqlite();
  for (const name of names.slice(0, 100_000)) {
    const file = join(dir, name);
    const { bytes, mtimeMs } = sqliteFileState(file);
    out.files++;
    let entry = objectCache.get(file);
    if (entry === undefined || entry.mtimeMs !== mtimeMs) {
      try {
        const db = new DatabaseSync(file, { readOnly: true });
        try {
          const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_cf_KV'").get();
          const row = table
            ? (db.prepare("SELECT count(*) AS n, coalesce(sum(length(key) + length(value)), 0) AS b FROM _cf_KV").get() as { n: number; b: number })
            : { n: 0, b: 0 };
          entry = { mtimeMs, rows: Number(row.n), dataBytes: Number(row.b) };
        } finally {
          db.close();
        }
      } catch {
        entry = undefined;
      }
      if (entry) objectCache.set(file, entry);
      else objectCache.delete(file);
    }
    if (entry === undefined) {
      out.unreadable++;
    } else if (entry.rows > 0) {
      out.holdingData++;
      out.rows += entry.rows;
      out.dataBytes += entry.dataBytes;
      out.maxRows = Math.max(out.maxRows, entry.rows);
    } else {
      out.bytesEmpty += bytes;
    }
  }
  return out;
}

/** KV entries (wrangler keeps them in a SQLite index plus one blob file per value) and their bytes. */
async function censusOfKv(state: string): Promise<KeptSample["kv"]> {
  const out = { entries: 0, dataBytes: 0 };
  const index = join(state, "v3", "kv", "miniflare-KVNamespaceObject");
  let names: string[];
  try {
    names = readdirSync(index).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  } catch {
    return out;
  }
  const blobDirs = readdirSync(join(state, "v3", "kv"))
    .filter((d) => d !== "miniflare-KVNamespaceObject")
    .map((d) => join(state, "v3", "kv", d, "blobs"));
  const { DatabaseSync } = await loadSqlite();
  for (const name of names) {
    try {
      const db = new DatabaseSync(join(index, name), { readOnly: true });
      try {
        const rows = db.prepare("SELECT key, blob_id FROM _mf_entries").all() as Array<{
          key: string;
          blob_id: string;
        }>;
        for (const row of rows) {
          out.entries++;
          out.dataBytes += Buffer.byteLength(row.key);
          for (const dir of blobDirs) {
            try {
              out.dataBytes += statSync(join(dir, row.blob_id)).size;
              break;
            } catch {
              // not in this namespace's folder
            }
          }
        }
      } finally {
        db.close();
      }
    } catch {
      // a namespace being written to: counted next time
    }
  }
  return out;
}

/** What the proxy keeps: rows of its Durable Objects and its KV entries. */
async function keptData(state: string, t: number): Promise<KeptSample> {
  const [sessions, teamIndex, kv] = [await censusOfObjects(state, "SessionObject"), await censusOfObjects(state, "TeamIndex"), await censusOfKv(state)];
  return { t, sessions, teamIndex, kv, dataBytes: sessions.dataBytes + teamIndex.dataBytes + kv.dataBytes };
}

/**
 * Nothing kept: no session object and no team-index entry holds anything, and every object file could be read (an
 * unreadable one proves nothing; an index that was never written proves nothing either).
 */
function nothingKept(k: KeptSample): boolean {
  return k.sessions.holdingData === 0 && k.teamIndex.rows === 0 && k.sessions.unreadable === 0 && k.teamIndex.unreadable === 0 && k.teamIndex.files > 0;
}

/** CPU ticks (user + system) of a process. */
function cpuTicks(pid: number | undefined): number {
  return pid === undefined ? 0 : (readStat(pid)?.ticks ?? 0);
}

interface Sample {
  /** s since the run started. */
  t: number;
  rssMiB: number;
  storageBytes: number;
  proxyBytes: number;
  /** SQLite files of session objects under --persist-to. */
  objectFiles: number;
  /** Requests each upstream had received and not finished answering. */
  chaosInFlight: number;
  healthyInFlight: number;
  /** Cores the Worker's workerd used since the previous sample; and wrangler's Node process and its proxy workerd. */
  workerdCores: number;
  wranglerCores: number;
  proxyWorkerdCores: number;
}

function nearest(samples: Sample[], t: number): Sample | undefined {
  let best: Sample | undefined;
  for (const s of samples) if (!best || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
  return best;
}

/** Least-squares slope of value per minute. */
function slopePerMinute(points: Array<{ t: number; v: number }>): number {
  if (points.length < 2) return Number.NaN;
  const n = points.length;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const mv = points.reduce((a, p) => a + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? Number.NaN : (num / den) * 60;
}

interface Trend {
  start: number;
  peak: number;
  end: number;
  afterIdle: number | undefined;
  middleThirdSlopePerMin: number;
  lastThirdSlopePerMin: number;
  levelsOff: boolean;
}

/** Levels off when the last third of the run grows at most `floor` per minute. */
function trend<T extends { t: number }>(samples: T[], value: (s: T) => number, runS: number, floor: number, afterIdle: number | undefined): Trend {
  const pts = (from: number, to: number) => samples.filter((s) => s.t >= from && s.t <= to).map((s) => ({ t: s.t, v: value(s) }));
  const middle = pts(runS / 3, (2 * runS) / 3);
  const last = pts((2 * runS) / 3, runS);
  const midSlope = slopePerMinute(middle);
  const lastSlope = slopePerMinute(last);
  // The readings taken just after the run (within a few seconds) still count as its end.
  const inRun = samples.filter((s) => s.t <= runS + 5);
  return {
    start: value(samples[0]!),
    peak: Math.max(...samples.map(value)),
    end: value(inRun.at(-1) ?? samples.at(-1)!),
    afterIdle,
    middleThirdSlopePerMin: midSlope,
    lastThirdSlopePerMin: lastSlope,
    levelsOff: lastSlope <= floor,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Figures

interface UpstreamFigures {
  calls: number;
  ok: number;
  errors: number;
  transportFailures: number;
  errorsByKind: Record<string, number>;
  latency: Percentiles;
}

interface PhaseFigures {
  name: string;
  what: string;
  expect: string;
  /** s since the run started. */
  start: number;
  end: number;
  /** Calls started during the chaos window. */
  during: { chaos: UpstreamFigures; healthy: UpstreamFigures };
  /** Calls started in the calm window after it (until the next phase). */
  after: { chaos: UpstreamFigures; healthy: UpstreamFigures };
  /** s from the end of the chaos window to the first successful chaos call started after it. */
  firstChaosSuccessAfterS: number | undefined;
  /** s from the end of the chaos window to the last failed chaos call started in the calm window. */
  lastChaosErrorAfterS: number | undefined;
  /** Requests the chaos upstream still had open when the window ended, and just before the next phase. */
  chaosInFlightAtEnd: number | undefined;
  chaosInFlightBeforeNext: number | undefined;
}

/** Upstream sessions opened by the proxy (initialize) and closed (DELETE), as the upstream counted them. */
interface UpstreamServerFigures {
  initializes: number;
  deletes: number;
}

interface Figures {
  config: {
    runS: number;
    sessions: number;
    warmS: number;
    chaosS: number;
    calmS: number;
    lifetimeS: readonly [number, number];
    thinkMs: readonly [number, number];
    abandonEvery: number;
    chaosTimeoutMs: number;
    sessionTtlS: number;
    upstreamIdleS: number;
    /** How long the run waited after the last session: until nothing was kept, or the deadline. */
    waitAfterRunS: number;
    /** The longest it would have waited. */
    waitDeadlineS: number;
    phases: string[];
  };
  calls: number;
  ok: number;
  errors: number;
  transportFailures: number;
  transportByStep: Record<string, number>;
  transportSamples: string[];
  healthyErrors: number;
  wrongAnswers: number;
  errorSamples: string[];
  latency: Percentiles;
  healthy: UpstreamFigures;
  chaos: UpstreamFigures;
  /** Successful healthy calls outside every chaos window (the baseline). */
  healthyCalmLatency: Percentiles;
  /**
   * Calls answered "Unknown tool" or "unavailable" (chaos not in the session's catalog) after an outage that breaks initialize
   * (down, HTTP 503) had ended: how many, and the latest one, in s after the end of its outage.
   */
  catalogRecovery: { errorsAfterOutage: number; maxSAfterOutage: number };
  /** Event-loop stalls over STALL_MS of this process and of the upstreams' process (s since the run started, ms). */
  stalls: { driver: Array<{ t: number; ms: number }>; upstreams: Array<{ t: number; ms: number }> };
  /** Healthy calls that took over a second: how many, how many were a session's first round, and the slowest few. */
  slowHealthy: {
    count: number;
    firstRound: number;
    /**
     * Slow healthy calls grouped by when they started (a new burst after 3 s without one): how many, the phase,
     * every call (either upstream) that started in the burst's first second with its median time, and what the
     * processes did meanwhile (cores in the sample covering it; stalls of this process or the upstreams').
     */
    bursts: Array<{
      t: number;
      slow: number;
      phase: string;
      allCallsInFirstSecond: number;
      medianMsOfThose: number;
      workerdCores: number | undefined;
      wranglerCores: number | undefined;
      proxyWorkerdCores: number | undefined;
      driverStalled: boolean;
      upstreamsStalled: boolean;
    }>;
  };
  phases: PhaseFigures[];
  sessions: { started: number; deleted: number; abandoned: number; chaosUnavailableAtStart: number; healthyMissingAtStart: number; peakOpen: number };
  streamSamples: string[];
  upstreamServers: { healthy: UpstreamServerFigures; chaos: UpstreamServerFigures };
  memory: Trend & { unit: "MiB" };
  /** The proxy's own storage: its Durable Objects and KV. */
  storage: Trend & { unit: "bytes"; objectFilesEnd: number };
  /** Everything under --persist-to, wrangler's local stores (traces, rate limiter) included. */
  storageTotal: Trend & { unit: "bytes" };
  samples: Sample[];
  /** Cores busy over the run, every process included (the machine is shared). */
  machineBusyCores: number;
  /** Cores the workerd running the Worker used over the run. */
  workerdCores: number;
  /** The V8 heap of the Worker's isolate at the start, each third, the end of the run and after the idle wait. */
  heap: HeapReading[];
  /** Requests the upstreams had received and not finished answering (a request the proxy never aborted stays). */
  upstreamInFlight: { chaosPeak: number; chaosEndOfRun: number; chaosAfterIdle: number | undefined; healthyPeak: number; healthyEndOfRun: number };
  /**
   * What the proxy keeps (its Durable Objects' rows and its KV entries), counted every CENSUS_MS, at the end of the
   * run and after the wait; its trend is over the bytes of keys and values. Bounded means: once every session has
   * ended or outlived its time-to-live, no session object and no index entry holds anything.
   */
  kept: {
    samples: KeptSample[];
    trend: Trend;
    endOfRun: KeptSample;
    /** The last count after the run: the first that found nothing kept, or the one at the deadline. */
    afterWait: KeptSample;
    /** s after the last session until nothing was kept; undefined when something still was at the deadline. */
    settledAfterS: number | undefined;
    peakSessionObjects: number;
    peakIndexRows: number;
    bounded: boolean;
  };
  /** The V8 heap of the Worker's isolate (allocated + ArrayBuffer backing stores, MiB) over the run. */
  heapTrend: Trend & { unit: "MiB" };
  /** The floor after the run: a trivial Worker under its own wrangler dev, as many requests as the proxy got. */
  floor: FloorFigures | undefined;
  /** HTTP requests the hosts sent to the proxy. */
  proxyRequests: number;
  /** The first text the host got for each error kind. */
  kindSamples: Record<string, string>;
  proxyLog: { unhandled: number; uncaught: number; reloads: number };
}

function upstreamFigures(events: CallEvent[]): UpstreamFigures {
  const errorsByKind: Record<string, number> = {};
  for (const e of events) if (!e.ok && e.kind) errorsByKind[e.kind] = (errorsByKind[e.kind] ?? 0) + 1;
  const ok = events.filter((e) => e.ok);
  return {
    calls: events.length,
    ok: ok.length,
    errors: events.length - ok.length,
    transportFailures: events.filter((e) => e.kind === "transport").length,
    errorsByKind,
    latency: percentiles(ok.map((e) => e.end - e.start)),
  };
}

const pair = (events: CallEvent[]) => ({
  chaos: upstreamFigures(events.filter((e) => e.upstream === "chaos")),
  healthy: upstreamFigures(events.filter((e) => e.upstream === "healthy")),
});

function addStats(into: UpstreamServerFigures, s: RouteStats): void {
  into.initializes += s.methods.initialize ?? 0;
  into.deletes += s.deletes;
}

// ---------------------------------------------------------------------------------------------------------------
// The run

async function main(): Promise<void> {
  process.chdir(ROOT);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-soak-"));
  const state = join(dir, "state");
  let upstreams: Upstreams | undefined;
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  const cleanup = async () => {
    await Promise.all([proxy?.stop(), upstreams?.stop()]);
    snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  };
  const watchdog = setTimeout(() => {
    console.error(`soak: still running after ${WATCHDOG_MS / 1000} s; stopping everything`);
    void cleanup().finally(() => process.exit(2));
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    upstreams = await startUpstreams();
    const token = provisionTeam(dir, state, "soak", {
      mcp: {
        healthy: { url: `${upstreams.healthyBase}/healthy/mcp` },
        chaos: { url: `${upstreams.chaosBase}/chaos/mcp`, timeout: CHAOS_TIMEOUT_MS },
      },
    });
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({
      persistTo: state,
      vars: { SESSION_KEY: "soak", SESSION_TTL_SECONDS: String(SESSION_TTL_S), UPSTREAM_IDLE_SECONDS: String(UPSTREAM_IDLE_S) },
      config: snapshot.config,
    });
    const url = `${proxy.url}/t/soak/mcp`;
    const running = proxy;
    const phases = schedule();
    console.log(
      `soak: proxy up in ${ms(performance.now() - started, 0)} ms (workerd pid ${workerPid(running) ?? "?"}); ${SESSIONS} sessions for ` +
        `${RUN_MS / 1000} s; chaos phases: ${phases.map((p) => p.name).join(", ")}`,
    );

    // Sampling: the Worker's RSS and the persistence folder.
    const samples: Sample[] = [];
    // wrangler's own Node process, the workerd running wrangler's proxy worker on the public port, and the Worker's.
    const wranglers = wranglerProcesses(running.child.pid, running.port);
    let pid = wranglers.worker;
    const ups0 = upstreams;
    const wranglerPid = wranglers.wrangler;
    const proxyWorkerdPid = wranglers.proxyWorkerd;
    let lastCpu = { t: 0, ticks: cpuTicks(pid), wrangler: cpuTicks(wranglerPid), proxy: cpuTicks(proxyWorkerdPid) };
    /** Takes a sample, keeps it in `samples` and returns it. */
    const sample = async (): Promise<Sample> => {
      const t = now() / 1000;
      if (pid === undefined || rssKiB(pid) === 0) pid = workerPid(running);
      const cpu = { t, ticks: cpuTicks(pid), wrangler: cpuTicks(wranglerPid), proxy: cpuTicks(proxyWorkerdPid) };
      const span = t - lastCpu.t;
      const cores = (now: number, before: number) => (span > 0.5 ? (now - before) / CLK_TCK / span : 0);
      const workerdCores = cores(cpu.ticks, lastCpu.ticks);
      const wranglerCores = cores(cpu.wrangler, lastCpu.wrangler);
      const proxyWorkerdCores = cores(cpu.proxy, lastCpu.proxy);
      lastCpu = cpu;
      const size = folderSize(state);
      const inflight = await ups0.inFlight().catch(() => ({ healthy: Number.NaN, chaos: Number.NaN }));
      const taken: Sample = {
        t,
        workerdCores,
        wranglerCores,
        proxyWorkerdCores,
        chaosInFlight: inflight.chaos,
        healthyInFlight: inflight.healthy,
        rssMiB: (pid === undefined ? 0 : rssKiB(pid)) / 1024,
        storageBytes: size.bytes,
        proxyBytes: size.proxyBytes,
        objectFiles: size.objectFiles,
      };
      samples.push(taken);
      return taken;
    };
    runStart = performance.now();
    const runStartEpoch = Date.now();
    const driverStalls = watchStalls();
    const ticksAtStart = machineBusyTicks();
    const workerTicksAtStart = cpuTicks(pid);
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_MS);
    const heap: HeapReading[] = [];
    const readHeap = async () => {
      const reading = await workerHeap(running);
      if (reading) heap.push({ t: now() / 1000, ...reading });
    };
    await readHeap();
    // The heap is read at the start, every HEAP_MS during the run and at its end (see workerHeap).
    const heapReadings = (async () => {
      for (let at = HEAP_MS; at < RUN_MS - HEAP_MS / 2; at += HEAP_MS) {
        await sleep(Math.max(0, at - now()));
        await readHeap();
      }
    })();
    // What the proxy keeps, counted in its Durable Objects' rows and its KV entries.
    const kept: KeptSample[] = [];
    let counting: Promise<void> | undefined;
    const census = () =>
      (counting ??= keptData(state, now() / 1000)
        .then((k) => void kept.push(k))
        .catch((err: unknown) => console.error(`soak: counting what the proxy keeps failed: ${short(err)}`))
        .finally(() => (counting = undefined)));
    await census();
    const censusTimer = setInterval(() => void census(), CENSUS_MS);

    // The chaos schedule.
    const server = { healthy: { initializes: 0, deletes: 0 }, chaos: { initializes: 0, deletes: 0 } };
    const ups = upstreams;
    const collectStats = async () => {
      addStats(server.healthy, await ups.stats(ups.healthyBase, "healthy"));
      addStats(server.chaos, await ups.stats(ups.chaosBase, "chaos"));
      await ups.control(ups.healthyBase, "/__reset");
      await ups.control(ups.chaosBase, "/__reset");
    };
    const windows: Array<{ spec: PhaseSpec; start: number; end: number }> = [];
    const runEnd = RUN_MS;
    const chaos = (async () => {
      for (let i = 0; i < phases.length; i++) {
        const spec = phases[i]!;
        const at = WARM_MS + i * (CHAOS_MS + CALM_MS);
        await sleep(Math.max(0, at - now()));
        await collectStats(); // also resets the replay's per-fault counters (`times`)
        const start = now();
        if (spec.faults) await ups.setFaults(spec.faults);
        if (spec.control === "down") await ups.control(ups.chaosBase, "/__down/chaos");
        if (spec.control === "forget") {
          for (let k = 0; now() < at + CHAOS_MS && k < 1_000; k++) {
            await ups.control(ups.chaosBase, "/__forget/chaos");
            await sleep(Math.min(FORGET_EVERY_MS, Math.max(0, at + CHAOS_MS - now())));
          }
        }
        await sleep(Math.max(0, at + CHAOS_MS - now()));
        if (spec.faults) await ups.setFaults(null);
        if (spec.control === "down") await ups.control(ups.chaosBase, "/__up/chaos");
        const end = now();
        windows.push({ spec, start, end });
        console.log(`soak: ${ms(end / 1000, 0).padStart(4)} s  phase ${spec.name} over (${ms((end - start) / 1000, 1)} s)`);
      }
    })();

    let sessionNumber = 0;
    const progress = setInterval(() => {
      const ev = totals.events;
      const errs = ev.filter((e) => !e.ok);
      console.log(
        `soak: ${ms(now() / 1000, 0).padStart(4)} s  ${ev.length} calls, ${errs.filter((e) => e.upstream === "chaos").length} chaos errors, ` +
          `${errs.filter((e) => e.upstream === "healthy").length} healthy errors, ${totals.transportFailures} transport failures, ` +
          `${totals.open} open, workerd ${ms(samples.at(-1)?.rssMiB ?? 0, 0)} MiB, storage ${ms((samples.at(-1)?.proxyBytes ?? 0) / 2 ** 20, 1)} MiB (all ${ms((samples.at(-1)?.storageBytes ?? 0) / 2 ** 20, 1)} MiB)`,
      );
    }, smoke ? 5_000 : 20_000);
    await Promise.all([chaos, heapReadings, ...Array.from({ length: SESSIONS }, (_, i) => host(i, url, token, runEnd, () => sessionNumber++))]);
    const runS = now() / 1000;
    // CPU over the run, read as it ends (the readings below take time of their own).
    const machineBusyCores = (machineBusyTicks() - ticksAtStart) / CLK_TCK / runS;
    const workerdCores = (cpuTicks(pid) - workerTicksAtStart) / CLK_TCK / runS;
    clearInterval(progress);
    await collectStats();
    clearInterval(sampler);
    clearInterval(censusTimer);
    // The end of the run: taken a moment after runS, so it is what every figure "at the end of the run" reads.
    const endSample = await sample();
    await readHeap();
    await counting;
    await census();
    const keptEndOfRun = kept.at(-1)!;

    // Wait on the condition, not a clock: count again until nothing is kept or the deadline passes.
    const waitStart = now();
    await sleep(WAIT_MIN_MS);
    let keptAfterWait: KeptSample | undefined;
    for (let round = 0; round < 100_000; round++) {
      const counted = await keptData(state, now() / 1000).catch((err: unknown) => {
        console.error(`soak: counting what the proxy keeps failed: ${short(err)}`);
        return undefined;
      });
      if (counted) {
        kept.push(counted);
        keptAfterWait = counted;
        if (nothingKept(counted)) break;
      }
      if (now() - waitStart >= WAIT_DEADLINE_MS) break;
      await sleep(Math.min(WAIT_POLL_MS, Math.max(0, waitStart + WAIT_DEADLINE_MS - now())));
    }
    if (!keptAfterWait) throw new Error("what the proxy keeps could not be counted after the run");
    const waitedS = Math.round((now() - waitStart) / 100) / 10;
    const settledAfterS = nothingKept(keptAfterWait) ? waitedS : undefined;
    console.log(
      settledAfterS !== undefined
        ? `soak: nothing kept ${ms(settledAfterS, 1)} s after the last session (time-to-live ${SESSION_TTL_S} s)`
        : `soak: ${keptAfterWait.sessions.holdingData} session objects still held data ${ms(waitedS, 1)} s after the last session ` +
            `(time-to-live ${SESSION_TTL_S} s, deadline ${WAIT_DEADLINE_MS / 1000} s)`,
    );
    const afterIdle = await sample();
    await readHeap();
    const floor = await runFloor(dir, Math.min(FLOOR_MAX_REQUESTS, totals.proxyRequests), SESSIONS);
    driverStalls.stop();
    const rel = (list: Stall[]) => list.map((x) => ({ t: (x.at - runStartEpoch) / 1000, ms: x.ms })).filter((x) => x.t >= 0);
    const stalls = { driver: rel(driverStalls.stalls), upstreams: rel(await ups.stalls().catch(() => [])) };

    // Figures.
    const events = totals.events;
    const inChaos = (e: CallEvent) => windows.some((w) => e.start >= w.start && e.start < w.end);
    const phaseFigures: PhaseFigures[] = windows.map((w, i) => {
      const next = windows[i + 1]?.start ?? runEnd;
      const during = events.filter((e) => e.start >= w.start && e.start < w.end);
      // Calls that straddle the next phase's start may meet its faults: only those over before it count here.
      const after = events.filter((e) => e.start >= w.end && e.end < next);
      const chaosAfter = after.filter((e) => e.upstream === "chaos");
      const firstOk = chaosAfter.filter((e) => e.ok).sort((a, b) => a.end - b.end)[0];
      const lastErr = chaosAfter.filter((e) => !e.ok).sort((a, b) => b.start - a.start)[0];
      return {
        name: w.spec.name,
        what: w.spec.what,
        expect: w.spec.expect,
        start: w.start / 1000,
        end: w.end / 1000,
        during: pair(during),
        after: pair(after),
        firstChaosSuccessAfterS: firstOk ? (firstOk.end - w.end) / 1000 : undefined,
        lastChaosErrorAfterS: lastErr ? (lastErr.start - w.end) / 1000 : undefined,
        chaosInFlightAtEnd: nearest(samples, w.end / 1000)?.chaosInFlight,
        chaosInFlightBeforeNext: nearest(samples, next / 1000 - SAMPLE_MS / 1000)?.chaosInFlight,
      };
    });
    const both = pair(events);
    const ok = events.filter((e) => e.ok);
    const output = running.output();
    samples.sort((a, b) => a.t - b.t);
    const inRunSamples = samples.filter((s) => s.t <= endSample.t);
    const figures: Figures = {
      config: {
        runS: RUN_MS / 1000,
        sessions: SESSIONS,
        warmS: WARM_MS / 1000,
        chaosS: CHAOS_MS / 1000,
        calmS: CALM_MS / 1000,
        lifetimeS: [LIFETIME_MS[0] / 1000, LIFETIME_MS[1] / 1000],
        thinkMs: THINK_MS,
        abandonEvery: ABANDON_EVERY,
        chaosTimeoutMs: CHAOS_TIMEOUT_MS,
        sessionTtlS: SESSION_TTL_S,
        upstreamIdleS: UPSTREAM_IDLE_S,
        waitAfterRunS: waitedS,
        waitDeadlineS: WAIT_DEADLINE_MS / 1000,
        phases: phases.map((p) => p.name),
      },
      calls: events.length,
      ok: ok.length,
      errors: events.length - ok.length,
      transportFailures: totals.transportFailures,
      transportByStep: totals.transportByStep,
      transportSamples: totals.transportSamples,
      healthyErrors: both.healthy.errors,
      wrongAnswers: events.filter((e) => e.kind === "wrong answer").length,
      errorSamples: totals.otherSamples,
      latency: percentiles(ok.map((e) => e.end - e.start)),
      healthy: both.healthy,
      chaos: both.chaos,
      stalls,
      catalogRecovery: (() => {
        const outages = windows.filter((w) => w.spec.control === "down" || w.spec.faults?.["*"] !== undefined);
        const delays = events
          .filter((e) => (e.kind === "not in the session's catalog" || e.kind === "unavailable (tried again at once)") && !outages.some((w) => e.start >= w.start && e.start < w.end))
          .map((e) => {
            const before = outages.filter((w) => w.end <= e.start).at(-1);
            return before ? (e.start - before.end) / 1000 : undefined;
          })
          .filter((d): d is number => d !== undefined);
        return { errorsAfterOutage: delays.length, maxSAfterOutage: delays.length ? Math.max(...delays) : 0 };
      })(),
      slowHealthy: (() => {
        const slow = events.filter((e) => e.upstream === "healthy" && e.end - e.start > 1_000);
        const phaseAt = (t: number) => windows.find((w) => t >= w.start && t < w.end)?.spec.name ?? "calm";
        const bursts: Figures["slowHealthy"]["bursts"] = [];
        let current: CallEvent[] = [];
        const flush = () => {
          const first = current[0];
          if (!first) return;
          const t0 = first.start;
          const inFirstSecond = events.filter((e) => e.start >= t0 && e.start < t0 + 1_000);
          const covering = samples.find((x) => x.t * 1000 > t0 + 500);
          const near = (list: Array<{ t: number }>) => list.some((x) => Math.abs(x.t * 1000 - t0) < 3_000);
          bursts.push({
            t: t0 / 1000,
            slow: current.length,
            phase: phaseAt(t0),
            allCallsInFirstSecond: inFirstSecond.length,
            medianMsOfThose: percentiles(inFirstSecond.map((e) => e.end - e.start)).p50,
            workerdCores: covering?.workerdCores,
            wranglerCores: covering?.wranglerCores,
            proxyWorkerdCores: covering?.proxyWorkerdCores,
            driverStalled: near(stalls.driver),
            upstreamsStalled: near(stalls.upstreams),
          });
          current = [];
        };
        for (const e of [...slow].sort((a, b) => a.start - b.start)) {
          const last = current.at(-1);
          if (last && e.start - last.start > 3_000) flush();
          current.push(e);
        }
        flush();
        return {
          count: slow.length,
          firstRound: slow.filter((e) => e.round === 0).length,
          bursts,
        };
      })(),
      healthyCalmLatency: percentiles(events.filter((e) => e.ok && e.upstream === "healthy" && !inChaos(e)).map((e) => e.end - e.start)),
      phases: phaseFigures,
      sessions: {
        started: totals.sessionsStarted,
        deleted: totals.sessionsDeleted,
        abandoned: totals.sessionsAbandoned,
        chaosUnavailableAtStart: totals.sessionsChaosUnavailable,
        healthyMissingAtStart: totals.sessionsHealthyMissing,
        peakOpen: totals.peakOpen,
      },
      streamSamples: totals.streamSamples,
      upstreamServers: server,
      memory: { unit: "MiB", ...trend(samples, (s) => s.rssMiB, runS, MEMORY_FLOOR_MIB_PER_MIN, afterIdle?.rssMiB) },
      storage: {
        unit: "bytes",
        ...trend(samples, (s) => s.proxyBytes, runS, STORAGE_FLOOR_BYTES_PER_MIN, afterIdle?.proxyBytes),
        objectFilesEnd: endSample.objectFiles,
      },
      storageTotal: { unit: "bytes", ...trend(samples, (s) => s.storageBytes, runS, STORAGE_FLOOR_BYTES_PER_MIN, afterIdle?.storageBytes) },
      samples,
      machineBusyCores,
      workerdCores,
      heap,
      upstreamInFlight: {
        chaosPeak: Math.max(...inRunSamples.map((x) => x.chaosInFlight).filter(Number.isFinite)),
        chaosEndOfRun: endSample.chaosInFlight,
        chaosAfterIdle: afterIdle?.chaosInFlight,
        healthyPeak: Math.max(...inRunSamples.map((x) => x.healthyInFlight).filter(Number.isFinite)),
        healthyEndOfRun: endSample.healthyInFlight,
      },
      kept: {
        samples: kept,
        trend: trend(kept, (k) => k.dataBytes, runS, STORAGE_FLOOR_BYTES_PER_MIN, keptAfterWait.dataBytes),
        endOfRun: keptEndOfRun,
        afterWait: keptAfterWait,
        settledAfterS,
        peakSessionObjects: Math.max(...kept.map((k) => k.sessions.holdingData)),
        peakIndexRows: Math.max(...kept.map((k) => k.teamIndex.rows)),
        bounded: settledAfterS !== undefined,
      },
      heapTrend: {
        unit: "MiB",
        ...trend(
          heap.filter((h) => h.t <= runS + 5),
          (h) => h.totalMiB + h.backingMiB,
          runS,
          MEMORY_FLOOR_MIB_PER_MIN,
          heap.at(-1) && heap.at(-1)!.t > runS + 5 ? heap.at(-1)!.totalMiB + heap.at(-1)!.backingMiB : undefined,
        ),
      },
      floor,
      proxyRequests: totals.proxyRequests,
      kindSamples: totals.kindSamples,
      proxyLog: {
        unhandled: (output.match(/"event":"unhandled"/g) ?? []).length,
        uncaught: (output.match(/uncaught exception/gi) ?? []).length,
        reloads: (output.match(/Reloading local server/g) ?? []).length,
      },
    };

    const markdown = render(figures);
    console.log(`\n${markdown}\n`);
    printSummary(figures);
    console.log(`soak: done in ${ms((performance.now() - started) / 1000, 1)} s`);
    // Failures are the finding: the figures are written all the same (finishRun refuses only a reloaded Worker).
    finishRun({ name: "soak", figures, markdown, smoke, wranglerOutput: output, printed: { samples: undefined } });
    if (figures.transportFailures > 0 || figures.healthyErrors > 0 || figures.wrongAnswers > 0 || totals.sessionsHealthyMissing > 0 || !figures.kept.bounded) {
      process.exitCode = 1;
    }
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
  if (!smoke && (await runScript(join(ROOT, "bench", "report.ts"))) !== 0) process.exitCode = 1;
}

/** The summary line of the wait after the run: how long until nothing was kept, or what was still kept at the deadline. */
function storageAfterRun(f: Figures): string {
  const c = f.config;
  const a = f.kept.afterWait;
  if (f.kept.settledAfterS !== undefined) {
    return `SOAK storage after the run: nothing kept ${ms(f.kept.settledAfterS, 1)} s after the last session (time-to-live ${c.sessionTtlS} s, deadline ${c.waitDeadlineS} s)`;
  }
  return (
    `SOAK storage after the run: still kept ${ms(c.waitAfterRunS, 1)} s after the last session (time-to-live ${c.sessionTtlS} s, deadline ${c.waitDeadlineS} s): ` +
    `${a.sessions.holdingData} session objects holding ${a.sessions.rows} rows, ${a.sessions.dataBytes} bytes (at most ${a.sessions.maxRows} rows in one); ` +
    `team index ${a.teamIndex.rows} rows; unreadable files: ${a.sessions.unreadable} session, ${a.teamIndex.unreadable} index; index files ${a.teamIndex.files}`
  );
}

function printSummary(f: Figures): void {
  const lines = [
    `SOAK calls: ${f.calls}`,
    `SOAK transport failures: ${f.transportFailures}`,
    `SOAK healthy errors: ${f.healthyErrors} (of ${f.healthy.calls} healthy calls)${f.healthyErrors ? `: ${kinds(f.healthy.errorsByKind)}` : ""}`,
    `SOAK chaos errors: ${f.chaos.errors} (of ${f.chaos.calls} chaos calls): ${kinds(f.chaos.errorsByKind) || "none"}`,
    `SOAK wrong answers: ${f.wrongAnswers}`,
    `SOAK healthy calls over 1 s: ${f.slowHealthy.count} (${f.slowHealthy.firstRound} in a session's first round)`,
    `SOAK event-loop stalls over ${STALL_MS} ms: driver ${f.stalls.driver.length} (longest ${ms(Math.max(0, ...f.stalls.driver.map((x) => x.ms)), 0)} ms), upstreams ${f.stalls.upstreams.length} (longest ${ms(Math.max(0, ...f.stalls.upstreams.map((x) => x.ms)), 0)} ms)`,
    `SOAK latency ms (successful calls): all p50 ${ms(f.latency.p50, 1)} p99 ${ms(f.latency.p99, 1)}; healthy p50 ${ms(f.healthy.latency.p50, 1)} p99 ${ms(f.healthy.latency.p99, 1)}; chaos p50 ${ms(f.chaos.latency.p50, 1)} p99 ${ms(f.chaos.latency.p99, 1)}`,
    `SOAK workerd RSS MiB: start ${ms(f.memory.start, 0)} peak ${ms(f.memory.peak, 0)} end ${ms(f.memory.end, 0)}; slope MiB/min middle third ${ms(f.memory.middleThirdSlopePerMin, 1)} last third ${ms(f.memory.lastThirdSlopePerMin, 1)}; levels off: ${f.memory.levelsOff ? "yes" : "no"}`,
    `SOAK proxy storage KiB (Durable Objects + KV): start ${ms(f.storage.start / 1024, 0)} end ${ms(f.storage.end / 1024, 0)}; slope KiB/min middle third ${ms(f.storage.middleThirdSlopePerMin / 1024, 1)} last third ${ms(f.storage.lastThirdSlopePerMin / 1024, 1)}; levels off: ${f.storage.levelsOff ? "yes" : "no"}`,
    `SOAK persist folder KiB (all): start ${ms(f.storageTotal.start / 1024, 0)} end ${ms(f.storageTotal.end / 1024, 0)}; slope KiB/min middle third ${ms(f.storageTotal.middleThirdSlopePerMin / 1024, 1)} last third ${ms(f.storageTotal.lastThirdSlopePerMin / 1024, 1)}; levels off: ${f.storageTotal.levelsOff ? "yes" : "no"}`,
    `SOAK kept by the proxy (Durable Object rows and KV entries): session objects holding data start ${f.kept.samples[0]?.sessions.holdingData ?? "?"} peak ${f.kept.peakSessionObjects} end of run ${f.kept.endOfRun.sessions.holdingData} after the wait ${f.kept.afterWait.sessions.holdingData}; team index rows end of run ${f.kept.endOfRun.teamIndex.rows} after ${f.kept.afterWait.teamIndex.rows}; KV entries ${f.kept.afterWait.kv.entries}; data KiB start ${ms(f.kept.trend.start / 1024, 1)} peak ${ms(f.kept.trend.peak / 1024, 1)} end ${ms(f.kept.trend.end / 1024, 1)} after ${ms((f.kept.trend.afterIdle ?? 0) / 1024, 1)}; slope KiB/min last third ${ms(f.kept.trend.lastThirdSlopePerMin / 1024, 1)}; bounded: ${f.kept.bounded ? "yes" : "no"}`,
    storageAfterRun(f),
    `SOAK worker heap MiB (allocated + backing stores): start ${ms(f.heapTrend.start, 0)} peak ${ms(f.heapTrend.peak, 0)} end ${ms(f.heapTrend.end, 0)}; slope MiB/min last third ${ms(f.heapTrend.lastThirdSlopePerMin, 1)}; levels off: ${f.heapTrend.levelsOff ? "yes" : "no"}`,
    `SOAK RSS per request KiB: proxy ${ms(((f.memory.end - f.memory.start) * 1024) / Math.max(1, f.proxyRequests), 1)} (${f.proxyRequests} requests)` +
      (f.floor ? `, floor ${ms(f.floor.kibPerRequest, 1)} (${f.floor.requests} requests, ${f.floor.errors} errors, RSS ${ms(f.floor.rssStartMiB, 0)} → ${ms(f.floor.rssEndMiB, 0)} MiB)` : ", floor not measured"),
    ...f.phases.map(
      (p) =>
        `SOAK phase ${p.name}: chaos ${p.during.chaos.ok}/${p.during.chaos.calls} ok (${kinds(p.during.chaos.errorsByKind) || "no errors"}); ` +
        `healthy ${p.during.healthy.calls} calls ${p.during.healthy.errors} errors p99 ${num(p.during.healthy.latency.p99, 0)} ms; ` +
        `after: chaos ${kinds(p.after.chaos.errorsByKind) || "no errors"}, healthy ${p.after.healthy.errors} errors; ` +
        `chaos requests open ${p.chaosInFlightAtEnd ?? "—"} → ${p.chaosInFlightBeforeNext ?? "—"}`,
    ),
    `SOAK upstream requests open: chaos peak ${f.upstreamInFlight.chaosPeak}, end of run ${f.upstreamInFlight.chaosEndOfRun}, after idle ${f.upstreamInFlight.chaosAfterIdle ?? "—"}; healthy peak ${f.upstreamInFlight.healthyPeak}`,
    `SOAK worker heap MiB (used/total/backing stores): ${f.heap.map((h) => `${ms(h.t, 0)} s ${ms(h.usedMiB, 0)}/${ms(h.totalMiB, 0)}/${ms(h.backingMiB, 0)}`).join(", ") || "not read"}`,
    `SOAK unknown-tool answers after outages: ${f.catalogRecovery.errorsAfterOutage}, the last ${ms(f.catalogRecovery.maxSAfterOutage, 1)} s after its outage`,
    `SOAK sessions: ${f.sessions.started} started, ${f.sessions.deleted} deleted, ${f.sessions.abandoned} abandoned, ${f.sessions.chaosUnavailableAtStart} began with chaos unavailable`,
  ];
  for (const s of f.transportSamples) lines.push(`SOAK transport sample: ${s}`);
  for (const s of f.errorSamples) lines.push(`SOAK error sample: ${s}`);
  for (const s of f.streamSamples) lines.push(`SOAK stream notice: ${s}`);
  console.log(lines.join("\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function kinds(byKind: Record<string, number>): string {
  return Object.entries(byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
}

const mib = (bytes: number) => ms(bytes / 2 ** 20, 2);
const sec = (s: number | undefined) => (s === undefined ? "—" : `${ms(s, 1)} s`);
const num = (v: number, digits = 1) => (Number.isFinite(v) ? ms(v, digits) : "—");

function render(f: Figures): string {
  const c = f.config;
  const lines: string[] = [];
  lines.push("## Soak", "");
  lines.push(
    `${c.sessions} concurrent host sessions against \`wrangler dev\` on loopback for ${ms(c.runS / 60, c.runS % 60 === 0 ? 0 : 1)} minutes, each its own SDK ` +
      `\`Client\` over streamable HTTP with the team's bearer token. A session lives ${c.lifetimeS[0]}–${c.lifetimeS[1]} s, then a new ` +
      `one takes its place (every ${c.abandonEvery}th ends without DELETE, as a host that just goes away). Each round calls, in ` +
      "parallel, `healthy/echo` or `healthy/get-sum`, `chaos/read_graph` (read-only, so the proxy may repeat it) and " +
      "`chaos/create_entities` (not idempotent: never repeated), then waits " +
      `${c.thinkMs[0]}–${c.thinkMs[1]} ms. Both upstreams are replay servers in a Node process of their own; \`chaos\` has a ` +
      `${c.chaosTimeoutMs / 1000} s timeout in the team's config. After ${c.warmS} s of calm, \`chaos\` misbehaves for ${c.chaosS} s, ` +
      `then behaves for ${c.calmS} s, one kind of fault after another. Latency is per successful \`use_tool\` call as the host ` +
      "sees it; memory is the RSS of the workerd process running the Worker and every session object (/proc), sampled every " +
      `${SAMPLE_MS / 1000} s; storage what the proxy keeps (the rows of its Durable Objects and its KV entries, counted every ` +
      `${CENSUS_MS / 1000} s) and the bytes under \`--persist-to\`. The proxy runs with \`SESSION_TTL_SECONDS=${c.sessionTtlS}\` and ` +
      `\`UPSTREAM_IDLE_SECONDS=${c.upstreamIdleS}\` (a day and two minutes by default), so the clocks that bound its storage and ` +
      "its connections act within the run.",
    "",
  );
  const row = (name: string, u: UpstreamFigures) =>
    `| ${name} | ${u.calls} | ${u.ok} | ${u.errors} | ${u.transportFailures} | ${num(u.latency.p50)} | ${num(u.latency.p99)} |`;
  lines.push("| upstream | calls | ok | errors (isError) | transport failures | p50 ms | p99 ms |", "|---|---:|---:|---:|---:|---:|---:|");
  lines.push(row("healthy", f.healthy), row("chaos", f.chaos));
  lines.push(
    `| **all** | ${f.calls} | ${f.ok} | ${f.errors} | ${f.transportFailures} | ${num(f.latency.p50)} | ${num(f.latency.p99)} |`,
    "",
  );

  const allKinds = [...new Set([...Object.keys(f.healthy.errorsByKind), ...Object.keys(f.chaos.errorsByKind)])].sort(
    (a, b) => (f.chaos.errorsByKind[b] ?? 0) + (f.healthy.errorsByKind[b] ?? 0) - ((f.chaos.errorsByKind[a] ?? 0) + (f.healthy.errorsByKind[a] ?? 0)),
  );
  lines.push("Errors by kind (the `isError` texts the host got, classified):", "");
  lines.push("| kind | healthy | chaos |", "|---|---:|---:|");
  for (const k of allKinds) lines.push(`| ${k} | ${f.healthy.errorsByKind[k] ?? 0} | ${f.chaos.errorsByKind[k] ?? 0} |`);
  if (allKinds.length === 0) lines.push("| (none) | 0 | 0 |");
  lines.push("");

  const m = f.memory;
  const s = f.storage;
  lines.push(`| resource | start | peak | end of run | after ${c.waitAfterRunS} s idle | slope, middle third | slope, last third | levels off |`);
  lines.push("|---|---:|---:|---:|---:|---:|---:|---|");
  lines.push(
    `| workerd RSS (MiB) | ${num(m.start, 0)} | ${num(m.peak, 0)} | ${num(m.end, 0)} | ${m.afterIdle === undefined ? "—" : num(m.afterIdle, 0)} | ` +
      `${num(m.middleThirdSlopePerMin)} MiB/min | ${num(m.lastThirdSlopePerMin)} MiB/min | ${m.levelsOff ? "yes" : "**no**"} |`,
  );
  const storageRow = (name: string, t: Trend) =>
    `| ${name} | ${mib(t.start)} | ${mib(t.peak)} | ${mib(t.end)} | ${t.afterIdle === undefined ? "—" : mib(t.afterIdle)} | ` +
    `${num(t.middleThirdSlopePerMin / 1024)} KiB/min | ${num(t.lastThirdSlopePerMin / 1024)} KiB/min | ${t.levelsOff ? "yes" : "**no**"} |`;
  const h = f.heapTrend;
  lines.push(
    `| V8 heap of the Worker's isolate, allocated + backing stores (MiB) | ${num(h.start, 0)} | ${num(h.peak, 0)} | ${num(h.end, 0)} | ` +
      `${h.afterIdle === undefined ? "—" : num(h.afterIdle, 0)} | ${num(h.middleThirdSlopePerMin)} MiB/min | ${num(h.lastThirdSlopePerMin)} MiB/min | ` +
      `${h.levelsOff ? "yes" : "**no**"} |`,
  );
  const k = f.kept.trend;
  lines.push(
    `| kept by the proxy: keys and values in its Durable Objects and KV (KiB) | ${num(k.start / 1024)} | ${num(k.peak / 1024)} | ` +
      `${num(k.end / 1024)} | ${k.afterIdle === undefined ? "—" : num(k.afterIdle / 1024)} | ${num(k.middleThirdSlopePerMin / 1024)} KiB/min | ` +
      `${num(k.lastThirdSlopePerMin / 1024)} KiB/min | ${k.levelsOff ? "yes" : "**no**"} |`,
    storageRow("files of the proxy's Durable Objects and KV (MiB)", s),
    storageRow("all of `--persist-to`, wrangler's local stores included (MiB)", f.storageTotal),
    "",
  );

  lines.push(
    "Per chaos phase: calls started in the chaos window, then in the calm window after it (until the next phase). " +
      "\"Recovered\" is the time from the end of the window to the first successful `chaos` call started after it; " +
      "\"last error\" the start of the last failed one in the calm window; \"requests open\" counts the requests the chaos " +
      "upstream had received and not finished answering (a request the proxy gave up on but never aborted stays open).",
    "",
  );
  lines.push(
    "| phase | the chaos upstream… | chaos ok / calls | what the host saw | healthy calls / errors / p99 ms | chaos errors after | recovered | last error | requests open at chaos: end of window → before next phase |",
    "|---|---|---:|---|---:|---|---:|---:|---:|",
  );
  for (const p of f.phases) {
    const d = p.during;
    lines.push(
      `| ${p.name} | ${p.what} | ${d.chaos.ok} / ${d.chaos.calls} | ${kinds(d.chaos.errorsByKind) || "no errors"} | ` +
        `${d.healthy.calls} / ${d.healthy.errors} / ${num(d.healthy.latency.p99, 0)} | ${kinds(p.after.chaos.errorsByKind) || "none"} | ` +
        `${sec(p.firstChaosSuccessAfterS)} | ${sec(p.lastChaosErrorAfterS)} | ${p.chaosInFlightAtEnd ?? "—"} → ${p.chaosInFlightBeforeNext ?? "—"} |`,
    );
  }
  lines.push("");

  lines.push(...analysis(f), "");
  return lines.join("\n");
}

function analysis(f: Figures): string[] {
  const out: string[] = [];
  const verdict = f.transportFailures === 0 && f.healthyErrors === 0 && f.wrongAnswers === 0 && f.sessions.healthyMissingAtStart === 0;
  out.push(
    `**Isolation and transport**: ${f.healthy.calls} calls to \`healthy\` got ${f.healthyErrors} errors ` +
      `(p99 ${num(f.healthy.latency.p99, 0)} ms over the run, ${num(f.healthyCalmLatency.p99, 0)} ms outside chaos windows); ` +
      `${f.transportFailures} requests failed at the transport level (the SDK client threw)` +
      (f.transportFailures ? `: ${Object.entries(f.transportByStep).map(([k, n]) => `${n} at ${k}`).join(", ")}` : "") +
      `; ${f.wrongAnswers} answers belonged to another call. ${f.slowHealthy.count} healthy calls took over 1 s ` +
      `(${f.slowHealthy.firstRound} of them in a session's first round). ` +
      (verdict
        ? "The healthy upstream kept serving while the chaos one failed, and every failure reached the host as an `isError` result."
        : "**This is not what the proxy promises** (see the figures above)."),
  );
  out.push("");
  const bursts = f.slowHealthy.bursts;
  if (bursts.length) {
    out.push(
      `**Pauses**: the ${f.slowHealthy.count} healthy calls over 1 s came in ${bursts.length} burst${bursts.length === 1 ? "" : "s"}: ` +
        bursts
          .map(
            (b) =>
              `at ${ms(b.t, 0)} s (${b.phase === "calm" ? "calm" : `${b.phase} phase`}) ${b.slow} slow healthy calls, while all ` +
              `${b.allCallsInFirstSecond} calls started in that second, to either upstream, took a median ${ms(b.medianMsOfThose, 0)} ms; ` +
              `cores used meanwhile: the Worker's workerd ${b.workerdCores === undefined ? "?" : ms(b.workerdCores, 2)}, wrangler's proxy ` +
              `workerd ${b.proxyWorkerdCores === undefined ? "?" : ms(b.proxyWorkerdCores, 2)}, wrangler (Node) ` +
              `${b.wranglerCores === undefined ? "?" : ms(b.wranglerCores, 2)}; ` +
              `${b.driverStalled || b.upstreamsStalled ? `stalled then: ${[b.driverStalled ? "this process" : "", b.upstreamsStalled ? "the upstreams" : ""].filter(Boolean).join(" and ")}` : "neither this process nor the upstreams stalled"}`,
          )
          .join("; ") +
        ".",
      "",
    );
  }
  out.push("**What the host saw, phase by phase** (calls started in the chaos window; \"afterwards\": the calm that followed):", "");
  const calmP99 = f.healthyCalmLatency.p99;
  for (const p of f.phases) {
    const d = p.during;
    const after = p.after.chaos;
    out.push(
      `- *${p.name}*: the chaos upstream ${p.what}. Promised: ${p.expect}. Seen: ${d.chaos.ok} of ${d.chaos.calls} chaos calls succeeded` +
        (d.chaos.errors ? `, the others got ${kinds(d.chaos.errorsByKind)}` : "") +
        (d.chaos.latency.n ? ` (successful ones p50 ${num(d.chaos.latency.p50, 0)} ms)` : "") +
        `; afterwards ${after.errors ? `${after.errors} more chaos calls failed (${kinds(after.errorsByKind)}), the last starting ${sec(p.lastChaosErrorAfterS)} after the window` : "no chaos call failed"}` +
        (p.firstChaosSuccessAfterS !== undefined ? `, the first success came ${sec(p.firstChaosSuccessAfterS)} after it` : "") +
        `. Healthy: ${d.healthy.calls} calls, ${d.healthy.errors} errors, p99 ${num(d.healthy.latency.p99, 0)} ms (${num(calmP99, 0)} ms in calm windows).`,
    );
  }
  out.push("");
  const texts = Object.entries(f.kindSamples);
  if (texts.length) {
    out.push("The text the host got, one example per kind:", "");
    for (const [kind, text] of texts) out.push(`- ${kind}: \`${text.replace(/`/g, "'")}\``);
    out.push("");
  }
  const sess = f.sessions;
  out.push(
    `**Sessions**: ${sess.started} started (peak ${sess.peakOpen} open), ${sess.deleted} ended with DELETE, ${sess.abandoned} abandoned; ` +
      `${sess.chaosUnavailableAtStart} began while \`chaos\` could not be connected: such a session lists it as unavailable, and ` +
      "a call to one of its tools tries it again at once (within the reconnect budget), answering why it is unavailable while it stays down" +
      (f.catalogRecovery.errorsAfterOutage
        ? ` (after the outages ended, ${f.catalogRecovery.errorsAfterOutage} calls still got such an answer, the last ` +
          `${ms(f.catalogRecovery.maxSAfterOutage, 1)} s after its outage)`
        : "") +
      ". The upstreams " +
      `saw ${f.upstreamServers.healthy.initializes} sessions opened and ${f.upstreamServers.healthy.deletes} closed on \`healthy\`, ` +
      `${f.upstreamServers.chaos.initializes} opened and ${f.upstreamServers.chaos.deletes} closed on \`chaos\`.`,
  );
  out.push("");
  const m = f.memory;
  const h = f.heapTrend;
  const proxyKiB = ((m.end - m.start) * 1024) / Math.max(1, f.proxyRequests);
  const fl = f.floor;
  out.push(
    `**Memory**: the V8 heap of the Worker's isolate, which holds every session object's JavaScript state, went ` +
      `${num(h.start, 0)} → ${num(h.end, 0)} MiB allocated (with ArrayBuffer backing stores; peak ${num(h.peak, 0)}, read every ` +
      `${HEAP_MS / 1000} s: ${f.heap.map((x) => `${ms(x.totalMiB + x.backingMiB, 0)}`).join(", ") || "not read"}); over the last third it ` +
      `grew ${num(h.lastThirdSlopePerMin)} MiB/min: ` +
      (h.levelsOff ? "**the proxy's memory levels off**." : "**the proxy's memory is still growing** at the end of the run.") +
      (h.afterIdle !== undefined ? ` ${f.config.waitAfterRunS} s after the last session it was ${num(h.afterIdle, 0)} MiB.` : "") +
      ` The RSS of the workerd process went ${num(m.start, 0)} → ${num(m.end, 0)} MiB (peak ${num(m.peak, 0)}; ` +
      `${num(m.lastThirdSlopePerMin)} MiB/min over the last third), ${ms(proxyKiB, 1)} KiB per HTTP request the hosts sent ` +
      `(${f.proxyRequests}). ` +
      (fl
        ? `The floor, a Worker that only forwards each request to one Durable Object which fetches a plain Node server, under ` +
          `its own \`wrangler dev\` right after the run, grew ${num(fl.rssStartMiB, 0)} → ${num(fl.rssEndMiB, 0)} MiB over ` +
          `${fl.requests} requests (${fl.errors} errors, ${ms(fl.seconds, 0)} s): **${ms(fl.kibPerRequest, 1)} KiB per request**; the ` +
          `proxy's ${ms(proxyKiB, 1)} KiB is ${ms(proxyKiB / Math.max(0.01, fl.kibPerRequest), 2)}× that. Most of the RSS growth is the ` +
          "local runtime's, per request it serves, whatever the Worker does; the JavaScript heap, the part the proxy owns, is the " +
          "figure that has to level off."
        : "The floor could not be measured in this run."),
  );
  out.push("");
  const u = f.upstreamInFlight;
  out.push(
    `**Requests left open upstream**: the chaos upstream had at most ${u.chaosPeak} requests open at once, ${u.chaosEndOfRun} at the end ` +
      `of the run` +
      (u.chaosAfterIdle !== undefined ? ` and ${u.chaosAfterIdle} after the idle wait` : "") +
      `; the healthy one at most ${u.healthyPeak}, ${u.healthyEndOfRun} at the end. ` +
      "Each request the proxy gave up on without aborting its fetch holds one of its session's 6 upstream connection slots " +
      "until the session ends; a session holding 6 such requests can no longer reach any upstream, the healthy one included, " +
      "and its later calls time out.",
  );
  out.push("");
  const t = f.storageTotal;
  const kt = f.kept.trend;
  const end = f.kept.endOfRun;
  const after = f.kept.afterWait;
  out.push(
    `**Storage**: what the proxy keeps, the keys and values in its Durable Objects and its KV entries, went ` +
      `${num(kt.start / 1024)} → ${num(kt.end / 1024)} KiB over the run (peak ${num(kt.peak / 1024)}; ` +
      `${num(kt.lastThirdSlopePerMin / 1024)} KiB/min over the last third). At most ${f.kept.peakSessionObjects} session objects held ` +
      `data at once, and the team index listed at most ${f.kept.peakIndexRows} sessions (peak ${sess.peakOpen} sessions open): the ` +
      "live ones, and those abandoned less than a time-to-live ago " +
      `(\`SESSION_TTL_SECONDS=${f.config.sessionTtlS}\` here). At the end of the run ${end.sessions.holdingData} session objects held ` +
      `${end.sessions.rows} rows (at most ${end.sessions.maxRows} in one) and the team index listed ${end.teamIndex.rows} sessions; ` +
      `then, from one time-to-live after the last session, it was counted again every ${WAIT_POLL_MS / 1000} s until nothing was kept ` +
      `(at most ${f.config.waitDeadlineS} s). ${f.config.waitAfterRunS} s after the last session ${after.sessions.holdingData} session ` +
      `objects held data and the index listed ${after.teamIndex.rows}, leaving ${num(after.dataBytes / 1024)} KiB: the team's ` +
      `${after.kv.entries} KV entries (config, token hash, catalog cache). ` +
      (f.kept.bounded
        ? "**The proxy's storage is bounded**: by the sessions alive and those abandoned within one time-to-live, each deleted when it ends or expires."
        : "**Something outlived its session** (see the counts above).") +
      ` On disk, workerd keeps a file for every object that ever stored anything, even after deleteAll(): ` +
      `${end.sessions.files} session-object files, ${mib(end.sessions.bytesEmpty)} MiB of them wiped ones; the deployed runtime keeps ` +
      `nothing for an object without data. All of \`--persist-to\` went ${mib(t.start)} → ${mib(t.end)} MiB, wrangler's local ` +
      "emulation (its observability trace store, the rate limiter's object) included. Levelling off means the last third of the run " +
      `grows at most ${MEMORY_FLOOR_MIB_PER_MIN} MiB/min (memory) or ${STORAGE_FLOOR_BYTES_PER_MIN / 1024} KiB/min (storage).`,
  );
  out.push("");
  out.push(
    `The machine is shared: over the run its ${CORES} cores were ${ms((f.machineBusyCores / CORES) * 100, 0)}% busy, every process ` +
      `included; the Worker's workerd used ${ms(f.workerdCores, 2)} of a core. ` +
      `The proxy logged ${f.proxyLog.unhandled} unhandled errors; workerd printed ${f.proxyLog.uncaught} "uncaught exception" lines.`,
  );
  return out;
}

if (process.argv.includes("--upstreams")) await serveUpstreams();
else await main();
