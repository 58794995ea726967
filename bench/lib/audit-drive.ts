// Bench-only: the calls bench/audit-dev.ts makes through `wrangler dev`. A level: hosts, each a 2025 session of its
// own, calling server-everything's echo through use_tool back to back for a while, every call with a traceparent of
// its own; then the team's trail read back until it holds every answered call (bench/lib/audit-accounting.ts). The
// latency rounds: one host calling the same echo in turn in sessions of teams whose objects keep all, part or none
// of the audit's work (bench/floor/audit-parts-worker.ts), a block of calls at a time.
import { performance } from "node:perf_hooks";
import { newTraceparent, readTrail, waitForTrail, type Accounting, type TrailReader } from "./audit-accounting.ts";
import { RawSession } from "./json-rpc.ts";
import { CLK_TCK, machineBusyTicks, readStat } from "./proc.ts";
import { random } from "./random.ts";
import { median, percentiles, type Percentiles } from "./results.ts";

/** Where a host connects: a team's MCP URL and a token of it. */
export interface Target {
  url: string;
  token: string;
}

/** One echo through use_tool with `traceparent` in its `_meta`; answers its latency (ms). */
async function echo(session: RawSession, traceparent: string): Promise<number> {
  const start = performance.now();
  await session.callTool("use_tool", { tool_name: "everything/echo", tool_input: { message: "audit bench" } }, '"tool":"echo"', { traceparent });
  return performance.now() - start;
}

export interface LevelFigures extends Accounting {
  hosts: number;
  seconds: number;
  /** Calls sent; `answered` of them answered without an error. */
  calls: number;
  answered: number;
  errors: number;
  callsPerSecond: number;
  latency: Percentiles;
  /** From the last answer until the trail held every answered call's entry (NaN: not within the bound). */
  drainMs: number;
  trailReads: number;
  /** One reading of the level's whole trail (every page), ms. */
  fullReadMs: number;
  /** Share of a core the Worker's workerd used over the calls (1 = one core busy throughout), and the whole machine. */
  workerCores: number;
  machineCores: number;
  /** CPU the Worker's workerd used per answered call over the level. */
  workerCpuMsPerCall: number;
}

/**
 * A level of `hosts` concurrent hosts for `durationMs`, then, given a `reader`, its trail accounted for (waiting at
 * most `boundMs`); without one (a team whose calls are not audited) the accounting is left at zero.
 */
export async function callLevel(opts: {
  target: Target;
  reader?: TrailReader | undefined;
  hosts: number;
  durationMs: number;
  boundMs: number;
  /** The workerd process that runs the Worker (its CPU is read from /proc). */
  workerPid: () => number | undefined;
  errorSamples: string[];
}): Promise<LevelFigures> {
  const sessions = await Promise.all(Array.from({ length: opts.hosts }, () => RawSession.open(opts.target.url, opts.target.token, "bench-audit")));
  const answered = new Set<string>();
  const lastOfEachHost: Array<{ traceparent: string; sentAt: number }> = [];
  const latencies: number[] = [];
  let calls = 0;
  let errors = 0;
  let lastAnswer = 0;
  const worker = opts.workerPid();
  const ticks = () => (worker === undefined ? 0 : (readStat(worker)?.ticks ?? 0));
  const [workerStart, machineStart] = [ticks(), machineBusyTicks()];
  const since = Date.now();
  const start = performance.now();
  const deadline = start + opts.durationMs;
  await Promise.all(
    sessions.map(async (session) => {
      let last: { traceparent: string; sentAt: number } | undefined;
      while (performance.now() < deadline) {
        const traceparent = newTraceparent();
        const sentAt = Date.now();
        calls++;
        try {
          latencies.push(await echo(session, traceparent));
          answered.add(traceparent);
          last = { traceparent, sentAt };
          lastAnswer = Math.max(lastAnswer, performance.now());
        } catch (err) {
          errors++;
          if (opts.errorSamples.length < 5) opts.errorSamples.push(err instanceof Error ? err.message : String(err));
        }
      }
      if (last) lastOfEachHost.push(last);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const workerCores = (ticks() - workerStart) / CLK_TCK / seconds;
  const machineCores = (machineBusyTicks() - machineStart) / CLK_TCK / seconds;
  const trail = opts.reader
    ? await waitForTrail({ reader: opts.reader, since, answered, lastOfEachHost, lastAnswer, boundMs: opts.boundMs })
    : { accounting: { found: 0, missing: 0, duplicates: 0, strays: 0, notOk: 0 }, drainMs: Number.NaN, reads: 0, fullReadMs: 0 };
  await Promise.all(sessions.map((s) => s.close()));
  return {
    hosts: opts.hosts,
    seconds,
    calls,
    answered: answered.size,
    errors,
    callsPerSecond: answered.size / seconds,
    latency: percentiles(latencies),
    ...trail.accounting,
    drainMs: trail.drainMs,
    trailReads: trail.reads,
    fullReadMs: trail.fullReadMs,
    workerCores,
    machineCores,
    workerCpuMsPerCall: (workerCores * seconds * 1000) / Math.max(1, answered.size),
  };
}

/** One side of the latency rounds: a team's session, and its trail when its calls are audited. */
export interface Side {
  name: string;
  target: Target;
  /** The side's trail: every call of it must be there (audited), or none (a side that records nothing). */
  trail?: { reader: TrailReader; expect: "every call" | "none" };
}

export interface SideFigures {
  name: string;
  latency: Percentiles;
  /** p50 − the baseline's p50, ms (the baseline: the first side). */
  addedP50: number;
  /** The median over rounds of (this side's block median − the baseline's), ms. */
  addedPairedMedian: number;
  /** CPU the Worker's workerd used during this side's blocks, per call (its own work and whatever else ran then). */
  workerCpuMsPerCall: number;
  /** Its trail held against its calls; entries found for a side that records nothing. */
  trail?: Accounting & { drainMs: number };
}

export interface LatencyRounds {
  rounds: number;
  block: number;
  sides: SideFigures[];
}

/** In place, seeded: the same order on every run. */
function shuffle<T>(items: T[], draw: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(draw() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Reads a side's trail after its calls: every call's entry (waiting at most `boundMs`), or that there is none. */
async function sideTrail(side: Side, since: number, answered: Set<string>, last: { traceparent: string; sentAt: number }, lastAnswer: number, boundMs: number) {
  if (!side.trail) return undefined;
  if (side.trail.expect === "none") {
    const found = (await readTrail(side.trail.reader, since)).length;
    return { found, missing: 0, duplicates: 0, strays: found, notOk: 0, drainMs: 0 };
  }
  const waited = await waitForTrail({ reader: side.trail.reader, since, answered, lastOfEachHost: [last], lastAnswer, boundMs });
  return { ...waited.accounting, drainMs: waited.drainMs };
}

/**
 * `rounds` rounds of one block of `block` sequential calls on each side, in an order drawn anew each round (seeded),
 * after `warm` calls on each side; the first side is the baseline the others are compared with. Blocks rather than
 * single calls alternate so that a side's own shipping (a batch sent 50 ms after its entries, beside the next answers)
 * falls mostly within its own block.
 */
export async function latencyRounds(opts: {
  sides: Side[];
  rounds: number;
  block: number;
  warm: number;
  boundMs: number;
  /** CPU ticks the Worker's workerd has used so far (read before and after each block). */
  workerTicks: () => number;
}): Promise<LatencyRounds> {
  const runs = await Promise.all(
    opts.sides.map(async (side) => ({
      side,
      session: await RawSession.open(side.target.url, side.target.token, "bench-audit-rounds"),
      samples: [] as number[],
      blocks: [] as number[],
      ticks: 0,
      answered: new Set<string>(),
      last: { traceparent: "", sentAt: 0 },
      lastAnswer: 0,
    })),
  );
  for (let i = 0; i < opts.warm; i++) for (const run of runs) await echo(run.session, newTraceparent());
  const since = Date.now();
  const draw = random(28);
  for (let round = 0; round < opts.rounds; round++) {
    for (const run of shuffle([...runs], draw)) {
      const block: number[] = [];
      const ticksBefore = opts.workerTicks();
      for (let i = 0; i < opts.block; i++) {
        const traceparent = newTraceparent();
        const sentAt = Date.now();
        block.push(await echo(run.session, traceparent));
        run.answered.add(traceparent);
        [run.last, run.lastAnswer] = [{ traceparent, sentAt }, performance.now()];
      }
      run.ticks += opts.workerTicks() - ticksBefore;
      run.samples.push(...block);
      run.blocks.push(median(block));
    }
  }
  const base = runs[0]!;
  const sides: SideFigures[] = [];
  for (const run of runs) {
    const latency = percentiles(run.samples);
    const trail = await sideTrail(run.side, since, run.answered, run.last, run.lastAnswer, opts.boundMs);
    sides.push({
      name: run.side.name,
      latency,
      addedP50: latency.p50 - percentiles(base.samples).p50,
      addedPairedMedian: median(run.blocks.map((b, i) => b - base.blocks[i]!)),
      workerCpuMsPerCall: ((run.ticks / CLK_TCK) * 1000) / run.samples.length,
      ...(trail ? { trail } : {}),
    });
  }
  await Promise.all(runs.map((r) => r.session.close()));
  return { rounds: opts.rounds, block: opts.block, sides };
}
