// Bench-only: the calls bench/audit-dev.ts makes through `wrangler dev`. A level: hosts, each a 2025 session of its
// own, calling server-everything's echo through use_tool back to back for a while, every call with a traceparent of
// its own, in turns with the same hosts on a team that records nothing; then the audited team's trail read back until
// it holds every answered call (bench/lib/audit-accounting.ts). The
// latency rounds: one host calling the same echo in turn in sessions of teams whose objects keep all, part or none
// of the audit's work (bench/floor/audit-parts-worker.ts), a block of calls at a time.
import { performance } from "node:perf_hooks";
import { newTraceparent, readTrail, waitForTrail, type Accounting, type TrailReader, type TrailWait } from "./audit-accounting.ts";
import { RawSession } from "./json-rpc.ts";
import { CLK_TCK, machineBusyTicks } from "./proc.ts";
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

/** One team's hosts in a level: their sessions, and what their calls did, added up over the level's turns. */
class LevelHosts {
  readonly answered = new Set<string>();
  /** Each host's last answered call (the trail is probed for these). */
  readonly last = new Map<number, { traceparent: string; sentAt: number }>();
  readonly latencies: number[] = [];
  calls = 0;
  errors = 0;
  lastAnswer = 0;
  ms = 0;
  workerTicks = 0;
  machineTicks = 0;

  readonly sessions: RawSession[];

  private constructor(sessions: RawSession[]) {
    this.sessions = sessions;
  }

  static async open(target: Target, hosts: number): Promise<LevelHosts> {
    return new LevelHosts(await Promise.all(Array.from({ length: hosts }, () => RawSession.open(target.url, target.token, "bench-audit"))));
  }

  /** Every host calls back to back for `durationMs` (a call that starts before the end is waited for). */
  async turn(durationMs: number, workerTicks: () => number, errorSamples: string[]): Promise<void> {
    const [workerStart, machineStart, start] = [workerTicks(), machineBusyTicks(), performance.now()];
    const deadline = start + durationMs;
    await Promise.all(
      this.sessions.map(async (session, host) => {
        while (performance.now() < deadline) {
          const traceparent = newTraceparent();
          const sentAt = Date.now();
          this.calls++;
          try {
            this.latencies.push(await echo(session, traceparent));
            this.answered.add(traceparent);
            this.last.set(host, { traceparent, sentAt });
            this.lastAnswer = Math.max(this.lastAnswer, performance.now());
          } catch (err) {
            this.errors++;
            if (errorSamples.length < 5) errorSamples.push(err instanceof Error ? err.message : String(err));
          }
        }
      }),
    );
    this.ms += performance.now() - start;
    this.workerTicks += workerTicks() - workerStart;
    this.machineTicks += machineBusyTicks() - machineStart;
  }

  figures(trail: TrailWait | undefined): LevelFigures {
    const seconds = this.ms / 1000;
    const workerCores = this.workerTicks / CLK_TCK / seconds;
    return {
      hosts: this.sessions.length,
      seconds,
      calls: this.calls,
      answered: this.answered.size,
      errors: this.errors,
      callsPerSecond: this.answered.size / seconds,
      latency: percentiles(this.latencies),
      ...(trail?.accounting ?? { found: 0, missing: 0, duplicates: 0, strays: 0, notOk: 0 }),
      drainMs: trail?.drainMs ?? Number.NaN,
      trailReads: trail?.reads ?? 0,
      fullReadMs: trail?.fullReadMs ?? 0,
      workerCores,
      machineCores: this.machineTicks / CLK_TCK / seconds,
      workerCpuMsPerCall: ((this.workerTicks / CLK_TCK) * 1000) / Math.max(1, this.answered.size),
    };
  }
}

/**
 * A level of `hosts` concurrent hosts on each of two teams, in `turns` alternating turns of `turnMs` (the baseline's
 * turn first, the audited one's last, so that the wait for the trail starts at the audited calls' end): drift on the
 * shared machine hits both alike. Then the audited team's trail is accounted for (waiting at most `boundMs`).
 */
export async function pairedLevel(opts: {
  audited: Target;
  baseline: Target;
  reader: TrailReader;
  hosts: number;
  turns: number;
  turnMs: number;
  boundMs: number;
  /** CPU ticks the Worker's workerd has used so far. */
  workerTicks: () => number;
  errorSamples: string[];
}): Promise<{ audited: LevelFigures; baseline: LevelFigures }> {
  const [audited, baseline] = await Promise.all([LevelHosts.open(opts.audited, opts.hosts), LevelHosts.open(opts.baseline, opts.hosts)]);
  const since = Date.now();
  for (let turn = 0; turn < opts.turns; turn++) {
    await baseline.turn(opts.turnMs, opts.workerTicks, opts.errorSamples);
    await audited.turn(opts.turnMs, opts.workerTicks, opts.errorSamples);
  }
  const { answered, lastAnswer } = audited;
  const trail = await waitForTrail({ reader: opts.reader, since, answered, lastOfEachHost: [...audited.last.values()], lastAnswer, boundMs: opts.boundMs });
  await Promise.all([...audited.sessions, ...baseline.sessions].map((s) => s.close()));
  return { audited: audited.figures(trail), baseline: baseline.figures(undefined) };
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
