// The soak's settings: its command-line flags, the timings and limits that follow from them, and the fixed ones.
//
// `--minutes N` (default 4), `--sessions N` (default 40), `--ttl S` (SESSION_TTL_SECONDS, default 60), `--idle S`
// (UPSTREAM_IDLE_SECONDS, default 15), `--smoke` (~20 s, 6 sessions, three phases, writes nothing; the other flags
// are then ignored). A number out of range throws before anything starts.

export interface SoakOptions {
  smoke: boolean;
  /** The active run: sessions call tools for this long (then the open ones finish their round). */
  runMs: number;
  sessions: number;
  /** Calm before the first chaos phase; then cycles of chaos and calm. */
  warmMs: number;
  chaosMs: number;
  calmMs: number;
  /** How long one host session lives, and how long a host thinks between rounds (from, to). */
  lifetimeMs: readonly [number, number];
  thinkMs: readonly [number, number];
  /** Hosts start spread over this long. */
  staggerMs: number;
  /** The Worker's RSS, CPU, the persistence folder and the upstreams' open requests are read this often. */
  sampleMs: number;
  /**
   * The proxy's clocks, short so a run of minutes shows them at work: an abandoned session's storage is deleted
   * SESSION_TTL_SECONDS after its last request (a day by default), and its upstream clients are closed
   * UPSTREAM_IDLE_SECONDS after it (two minutes by default).
   */
  sessionTtlS: number;
  upstreamIdleS: number;
  /**
   * After the run, what the proxy keeps is counted again until no session object and no index entry holds anything
   * (then memory is read once more). Nothing abandoned at the end of the run can be deleted before its time-to-live,
   * so counting starts one time-to-live after the run, and goes on every `waitPollMs`. The alarm that deletes a
   * session runs late on a busy machine (it was seen more than 4 s late with the two cores shared), so the deadline
   * is generous: the time-to-live, one idle period, and a margin. A real leak never clears, so the deadline only
   * bounds how long a failing run takes; storage still there then fails the run.
   */
  waitMinMs: number;
  waitDeadlineMs: number;
  waitPollMs: number;
  /** What the proxy keeps (rows in its Durable Objects, entries in KV) is counted this often. */
  censusMs: number;
  /** The V8 heap of the Worker's isolate is read this often. */
  heapMs: number;
  /**
   * The floor after the soak: a trivial Worker → Durable Object → fetch under its own `wrangler dev`, sent as many
   * requests as the proxy got (at most this many), to tell the local runtime's memory growth from the proxy's.
   */
  floorMaxRequests: number;
  /** The forget phase makes the chaos upstream forget its sessions this often. */
  forgetEveryMs: number;
  /** A progress line is printed this often. */
  progressMs: number;
  /** Hard stop: whatever happens, the run ends (children stopped) this long after it started. */
  watchdogMs: number;
}

/** The value of a number flag, or `fallback` when it is not given. */
function argNumber(argv: readonly string[], name: string, fallback: number, min: number, max: number): number {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} takes a number from ${min} to ${max}`);
  return value;
}

export function soakOptions(argv: readonly string[]): SoakOptions {
  const smoke = argv.includes("--smoke");
  const runMs = smoke ? 20_000 : Math.round(argNumber(argv, "--minutes", 4, 1, 60) * 60_000);
  const sessions = smoke ? 6 : Math.round(argNumber(argv, "--sessions", 40, 1, 200));
  const sessionTtlS = smoke ? 8 : argNumber(argv, "--ttl", 60, 5, 86_400);
  const upstreamIdleS = smoke ? 4 : argNumber(argv, "--idle", 15, 2, 86_400);
  const waitDeadlineMs = (sessionTtlS + upstreamIdleS + (smoke ? 30 : 60)) * 1000;
  return {
    smoke,
    runMs,
    sessions,
    warmMs: smoke ? 2_000 : 12_000,
    chaosMs: smoke ? 3_000 : 10_000,
    calmMs: smoke ? 3_000 : 12_000,
    lifetimeMs: smoke ? [6_000, 12_000] : [20_000, 60_000],
    thinkMs: smoke ? [200, 500] : [1_500, 3_000],
    staggerMs: smoke ? 1_000 : 5_000,
    sampleMs: smoke ? 1_000 : 2_000,
    sessionTtlS,
    upstreamIdleS,
    waitMinMs: sessionTtlS * 1000,
    waitDeadlineMs,
    waitPollMs: smoke ? 1_000 : 2_000,
    censusMs: smoke ? 4_000 : 15_000,
    heapMs: smoke ? 5_000 : 30_000,
    floorMaxRequests: smoke ? 300 : 40_000,
    forgetEveryMs: smoke ? 1_000 : 2_000,
    progressMs: smoke ? 5_000 : 20_000,
    watchdogMs: runMs + waitDeadlineMs + 420_000,
  };
}

// Fixed settings, the same for every run.

/** Every n-th session ends without DELETE (its host just goes away). */
export const ABANDON_EVERY = 4;
/** The chaos entry's upstream timeout (the healthy one keeps the default 30 s). */
export const CHAOS_TIMEOUT_MS = 4_000;
/**
 * The host side's own request timeout: hitting it is a transport failure. Longer than the proxy's default upstream
 * timeout (30 s), so a slow upstream is reported by the proxy first.
 */
export const CLIENT_TIMEOUT_MS = 45_000;
/** A session whose requests fail this many rounds in a row at the transport level is given up. */
export const MAX_TRANSPORT_STREAK = 3;
/** Memory and storage "level off" when they grow at most this much per minute over the last third of the run. */
export const MEMORY_FLOOR_MIB_PER_MIN = 5;
export const STORAGE_FLOOR_BYTES_PER_MIN = 64 * 1024;
/** wrangler.toml's `name`: its Durable Objects live under v3/do/<name>-<class>. */
export const WORKER_NAME = "dynmcp-edge";
