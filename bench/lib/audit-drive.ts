// Bench-only: the calls bench/audit-dev.ts makes through `wrangler dev`. A level: hosts, each a 2025 session of its
// own, calling server-everything's echo through use_tool back to back for a while, every call with a traceparent of
// its own; then the team's trail read back until it holds every answered call (bench/lib/audit-accounting.ts). The
// A/B rounds: one host calling the same echo alternately in an audited team's session and in a session of the team
// whose outbox records nothing (bench/floor/unaudited-worker.ts), a block of calls at a time.
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
}

/** A level of `hosts` concurrent hosts for `durationMs`, then its trail accounted for (waiting at most `boundMs`). */
export async function auditedLevel(opts: {
  target: Target;
  reader: TrailReader;
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
  const trail = await waitForTrail({ reader: opts.reader, since, answered, lastOfEachHost, lastAnswer, boundMs: opts.boundMs });
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
  };
}

export interface LatencyAB {
  rounds: number;
  block: number;
  audited: Percentiles;
  unaudited: Percentiles;
  /** audited p50 − unaudited p50, ms. */
  addedP50: number;
  /** The median over rounds of (audited block's median − unaudited block's median), ms. */
  addedPairedMedian: number;
  /** The audited calls' entries in their team's trail. */
  auditedTrail: Accounting & { drainMs: number };
  /** Entries in the unaudited team's trail (must be 0: the switch took). */
  unauditedEntries: number;
}

/**
 * `rounds` rounds of one block of `block` sequential calls on each side, in an order drawn anew each round (seeded),
 * after `warm` calls on each side. Blocks rather than single calls alternate so that each side's own shipping (a
 * batch sent 50 ms after the entries, beside the next answers) falls mostly within its own block.
 */
export async function auditLatencyAB(opts: {
  audited: Target;
  unaudited: Target;
  auditedReader: TrailReader;
  unauditedReader: TrailReader;
  rounds: number;
  block: number;
  warm: number;
  /** How long after the last answer the audited calls' entries may take to reach the trail. */
  boundMs: number;
}): Promise<LatencyAB> {
  const sides = {
    audited: { session: await RawSession.open(opts.audited.url, opts.audited.token, "bench-audit-ab"), samples: [] as number[], blocks: [] as number[] },
    unaudited: { session: await RawSession.open(opts.unaudited.url, opts.unaudited.token, "bench-audit-ab"), samples: [] as number[], blocks: [] as number[] },
  };
  for (let i = 0; i < opts.warm; i++) for (const side of Object.values(sides)) await echo(side.session, newTraceparent());
  const since = Date.now();
  const answered = new Set<string>();
  let last = { traceparent: "", sentAt: 0 };
  let lastAnswer = 0;
  const draw = random(28);
  for (let round = 0; round < opts.rounds; round++) {
    const order = draw() < 0.5 ? (["audited", "unaudited"] as const) : (["unaudited", "audited"] as const);
    for (const name of order) {
      const block: number[] = [];
      for (let i = 0; i < opts.block; i++) {
        const traceparent = newTraceparent();
        const sentAt = Date.now();
        block.push(await echo(sides[name].session, traceparent));
        if (name !== "audited") continue;
        answered.add(traceparent);
        [last, lastAnswer] = [{ traceparent, sentAt }, performance.now()];
      }
      sides[name].samples.push(...block);
      sides[name].blocks.push(median(block));
    }
  }
  const trail = await waitForTrail({ reader: opts.auditedReader, since, answered, lastOfEachHost: [last], lastAnswer, boundMs: opts.boundMs });
  const unauditedEntries = (await readTrail(opts.unauditedReader, since)).length;
  await Promise.all(Object.values(sides).map((s) => s.session.close()));
  const audited = percentiles(sides.audited.samples);
  const unaudited = percentiles(sides.unaudited.samples);
  return {
    rounds: opts.rounds,
    block: opts.block,
    audited,
    unaudited,
    addedP50: audited.p50 - unaudited.p50,
    addedPairedMedian: median(sides.audited.blocks.map((a, i) => a - sides.unaudited.blocks[i]!)),
    auditedTrail: { ...trail.accounting, drainMs: trail.drainMs },
    unauditedEntries,
  };
}
