// The soak's figures (the FIGURES line and bench/results/soak.json): what the run recorded, added up per upstream,
// per chaos phase and over time.
import { percentiles, type Percentiles } from "../lib/results.ts";
import type { AfterWait, KeptSample } from "./census.ts";
import type { ChaosWindow, PhaseSpec } from "./chaos.ts";
import type { FloorFigures } from "./floor.ts";
import type { Sample } from "./monitor.ts";
import { ABANDON_EVERY, CHAOS_TIMEOUT_MS, MEMORY_FLOOR_MIB_PER_MIN, STORAGE_FLOOR_BYTES_PER_MIN, type SoakOptions } from "./options.ts";
import type { CallEvent, Totals } from "./sessions.ts";
import { trend, type Trend } from "./trend.ts";
import type { UpstreamServers } from "./upstreams.ts";
import type { HeapReading } from "./worker.ts";

export interface UpstreamFigures {
  calls: number;
  ok: number;
  errors: number;
  transportFailures: number;
  errorsByKind: Record<string, number>;
  latency: Percentiles;
}

export interface PhaseFigures {
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

/** Slow healthy calls started close together (a new burst after 3 s without one), and what went on meanwhile. */
export interface SlowBurst {
  t: number;
  slow: number;
  phase: string;
  /** Every call (either upstream) that started in the burst's first second, and their median time. */
  allCallsInFirstSecond: number;
  medianMsOfThose: number;
  /** Cores used in the sample covering it. */
  workerdCores: number | undefined;
  wranglerCores: number | undefined;
  proxyWorkerdCores: number | undefined;
  /** Whether this process or the upstreams' stalled within 3 s of it. */
  driverStalled: boolean;
  upstreamsStalled: boolean;
}

export interface Figures {
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
  /** Healthy calls that took over a second: how many, how many were a session's first round, and their bursts. */
  slowHealthy: { count: number; firstRound: number; bursts: SlowBurst[] };
  phases: PhaseFigures[];
  sessions: { started: number; deleted: number; abandoned: number; chaosUnavailableAtStart: number; healthyMissingAtStart: number; peakOpen: number };
  streamSamples: string[];
  upstreamServers: UpstreamServers;
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
   * What the proxy keeps (its Durable Objects' rows and its KV entries), counted every `censusMs`, at the end of the
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

/** Everything the run recorded, from which the figures are computed. */
export interface RunRecord {
  options: SoakOptions;
  phases: PhaseSpec[];
  totals: Totals;
  windows: ChaosWindow[];
  samples: Sample[];
  heap: HeapReading[];
  kept: KeptSample[];
  /** s from the start of the run to the end of its sessions. */
  runS: number;
  /** The readings at the end of the run, and after the wait. */
  endSample: Sample;
  keptEndOfRun: KeptSample;
  wait: AfterWait;
  afterIdle: Sample;
  machineBusyCores: number;
  workerdCores: number;
  stalls: Figures["stalls"];
  upstreamServers: UpstreamServers;
  floor: FloorFigures | undefined;
  /** Everything the proxy's `wrangler dev` printed. */
  wranglerOutput: string;
}

export function soakFigures(r: RunRecord): Figures {
  const events = r.totals.events;
  // The phases read the samples in the order they were taken; the rest, in time order.
  const phases = phaseFigures(r);
  r.samples.sort((a, b) => a.t - b.t);
  return {
    config: configFigures(r),
    ...callFigures(r.totals),
    stalls: r.stalls,
    catalogRecovery: catalogRecovery(events, r.windows),
    slowHealthy: slowHealthy(r),
    healthyCalmLatency: percentiles(events.filter((e) => e.ok && e.upstream === "healthy" && !inChaos(e, r.windows)).map((e) => e.end - e.start)),
    phases,
    sessions: sessionFigures(r.totals),
    streamSamples: r.totals.streamSamples,
    upstreamServers: r.upstreamServers,
    ...resourceFigures(r),
    kept: keptFigures(r),
    heapTrend: heapTrend(r),
    floor: r.floor,
    proxyRequests: r.totals.proxyRequests,
    kindSamples: r.totals.kindSamples,
    proxyLog: {
      unhandled: (r.wranglerOutput.match(/"event":"unhandled"/g) ?? []).length,
      uncaught: (r.wranglerOutput.match(/uncaught exception/gi) ?? []).length,
      reloads: (r.wranglerOutput.match(/Reloading local server/g) ?? []).length,
    },
  };
}

function configFigures(r: RunRecord): Figures["config"] {
  const o = r.options;
  return {
    runS: o.runMs / 1000,
    sessions: o.sessions,
    warmS: o.warmMs / 1000,
    chaosS: o.chaosMs / 1000,
    calmS: o.calmMs / 1000,
    lifetimeS: [o.lifetimeMs[0] / 1000, o.lifetimeMs[1] / 1000],
    thinkMs: o.thinkMs,
    abandonEvery: ABANDON_EVERY,
    chaosTimeoutMs: CHAOS_TIMEOUT_MS,
    sessionTtlS: o.sessionTtlS,
    upstreamIdleS: o.upstreamIdleS,
    waitAfterRunS: r.wait.waitedS,
    waitDeadlineS: o.waitDeadlineMs / 1000,
    phases: r.phases.map((p) => p.name),
  };
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

const inChaos = (e: CallEvent, windows: ChaosWindow[]) => windows.some((w) => e.start >= w.start && e.start < w.end);

type CallFigures = Pick<
  Figures,
  "calls" | "ok" | "errors" | "transportFailures" | "transportByStep" | "transportSamples" | "healthyErrors" | "wrongAnswers" | "errorSamples" | "latency" | "healthy" | "chaos"
>;

function callFigures(totals: Totals): CallFigures {
  const events = totals.events;
  const both = pair(events);
  const ok = events.filter((e) => e.ok);
  return {
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
  };
}

/** Per chaos phase: the calls started in its window, and in the calm after it until the next phase. */
function phaseFigures(r: RunRecord): PhaseFigures[] {
  const events = r.totals.events;
  const nearest = (t: number): Sample | undefined => {
    let best: Sample | undefined;
    for (const s of r.samples) if (!best || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
    return best;
  };
  return r.windows.map((w, i) => {
    const next = r.windows[i + 1]?.start ?? r.options.runMs;
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
      chaosInFlightAtEnd: nearest(w.end / 1000)?.chaosInFlight,
      chaosInFlightBeforeNext: nearest(next / 1000 - r.options.sampleMs / 1000)?.chaosInFlight,
    };
  });
}

/** Calls that found chaos missing from the session's catalog after an outage that breaks initialize had ended. */
function catalogRecovery(events: CallEvent[], windows: ChaosWindow[]): Figures["catalogRecovery"] {
  const outages = windows.filter((w) => w.spec.control === "down" || w.spec.faults?.["*"] !== undefined);
  const delays = events
    .filter((e) => (e.kind === "not in the session's catalog" || e.kind === "unavailable (tried again at once)") && !outages.some((w) => e.start >= w.start && e.start < w.end))
    .map((e) => {
      const before = outages.filter((w) => w.end <= e.start).at(-1);
      return before ? (e.start - before.end) / 1000 : undefined;
    })
    .filter((d): d is number => d !== undefined);
  return { errorsAfterOutage: delays.length, maxSAfterOutage: delays.length ? Math.max(...delays) : 0 };
}

/** Healthy calls over a second, grouped into bursts (a new one after 3 s without a slow call). */
function slowHealthy(r: RunRecord): Figures["slowHealthy"] {
  const slow = r.totals.events.filter((e) => e.upstream === "healthy" && e.end - e.start > 1_000);
  const bursts: SlowBurst[] = [];
  let current: CallEvent[] = [];
  const flush = () => {
    if (current[0]) bursts.push(slowBurst(r, current));
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
}

function slowBurst(r: RunRecord, slow: CallEvent[]): SlowBurst {
  const t0 = slow[0]!.start;
  const inFirstSecond = r.totals.events.filter((e) => e.start >= t0 && e.start < t0 + 1_000);
  const covering = r.samples.find((x) => x.t * 1000 > t0 + 500);
  const near = (list: Array<{ t: number }>) => list.some((x) => Math.abs(x.t * 1000 - t0) < 3_000);
  return {
    t: t0 / 1000,
    slow: slow.length,
    phase: r.windows.find((w) => t0 >= w.start && t0 < w.end)?.spec.name ?? "calm",
    allCallsInFirstSecond: inFirstSecond.length,
    medianMsOfThose: percentiles(inFirstSecond.map((e) => e.end - e.start)).p50,
    workerdCores: covering?.workerdCores,
    wranglerCores: covering?.wranglerCores,
    proxyWorkerdCores: covering?.proxyWorkerdCores,
    driverStalled: near(r.stalls.driver),
    upstreamsStalled: near(r.stalls.upstreams),
  };
}

function sessionFigures(totals: Totals): Figures["sessions"] {
  return {
    started: totals.sessionsStarted,
    deleted: totals.sessionsDeleted,
    abandoned: totals.sessionsAbandoned,
    chaosUnavailableAtStart: totals.sessionsChaosUnavailable,
    healthyMissingAtStart: totals.sessionsHealthyMissing,
    peakOpen: totals.peakOpen,
  };
}

type ResourceFigures = Pick<Figures, "memory" | "storage" | "storageTotal" | "samples" | "machineBusyCores" | "workerdCores" | "heap" | "upstreamInFlight">;

/** Memory, storage and open requests over the run, from the samples (in time order). */
function resourceFigures(r: RunRecord): ResourceFigures {
  const { samples, runS, endSample, afterIdle } = r;
  const inRunSamples = samples.filter((s) => s.t <= endSample.t);
  return {
    memory: { unit: "MiB", ...trend(samples, (s) => s.rssMiB, runS, MEMORY_FLOOR_MIB_PER_MIN, afterIdle.rssMiB) },
    storage: {
      unit: "bytes",
      ...trend(samples, (s) => s.proxyBytes, runS, STORAGE_FLOOR_BYTES_PER_MIN, afterIdle.proxyBytes),
      objectFilesEnd: endSample.objectFiles,
    },
    storageTotal: { unit: "bytes", ...trend(samples, (s) => s.storageBytes, runS, STORAGE_FLOOR_BYTES_PER_MIN, afterIdle.storageBytes) },
    samples,
    machineBusyCores: r.machineBusyCores,
    workerdCores: r.workerdCores,
    heap: r.heap,
    upstreamInFlight: {
      chaosPeak: Math.max(...inRunSamples.map((x) => x.chaosInFlight).filter(Number.isFinite)),
      chaosEndOfRun: endSample.chaosInFlight,
      chaosAfterIdle: afterIdle.chaosInFlight,
      healthyPeak: Math.max(...inRunSamples.map((x) => x.healthyInFlight).filter(Number.isFinite)),
      healthyEndOfRun: endSample.healthyInFlight,
    },
  };
}

function keptFigures(r: RunRecord): Figures["kept"] {
  const { kept, wait } = r;
  return {
    samples: kept,
    trend: trend(kept, (k) => k.dataBytes, r.runS, STORAGE_FLOOR_BYTES_PER_MIN, wait.afterWait.dataBytes),
    endOfRun: r.keptEndOfRun,
    afterWait: wait.afterWait,
    settledAfterS: wait.settledAfterS,
    peakSessionObjects: Math.max(...kept.map((k) => k.sessions.holdingData)),
    peakIndexRows: Math.max(...kept.map((k) => k.teamIndex.rows)),
    bounded: wait.settledAfterS !== undefined,
  };
}

/** The heap read during the run (and just after it); the last reading, when taken after the wait, is its "after idle". */
function heapTrend(r: RunRecord): Figures["heapTrend"] {
  const { heap, runS } = r;
  const last = heap.at(-1);
  return {
    unit: "MiB",
    ...trend(
      heap.filter((h) => h.t <= runS + 5),
      (h) => h.totalMiB + h.backingMiB,
      runS,
      MEMORY_FLOOR_MIB_PER_MIN,
      last && last.t > runS + 5 ? last.totalMiB + last.backingMiB : undefined,
    ),
  };
}
