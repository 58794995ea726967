// bench/audit-dev.ts's figures and its section of BENCHMARKS.md ("Audit trail under wrangler dev").
import type { LatencyRounds, LevelFigures, SideFigures } from "./audit-drive.ts";
import { table } from "./markdown.ts";
import { CORES } from "./proc.ts";
import { ms } from "./results.ts";

/** One level: the audited team's calls (accounted for in its trail) and the same level on the team that records nothing. */
export interface LevelPair {
  audited: LevelFigures;
  baseline: LevelFigures;
}

export interface AuditDevFigures {
  latency: LatencyRounds;
  levels: LevelPair[];
  /** The audited level with the most calls/s. */
  sustained: LevelFigures;
  errors: number;
  config: { hosts: number[]; turns: number; turnMs: number; drainBoundMs: number; rise: number; rounds: { rounds: number; block: number; warm: number } };
}

/** The goal: what the audit may add to a call's p50. */
export const GOAL_MS = 1;

const KEPT: Record<string, string> = {
  nothing: "nothing (the baseline)",
  put: "the entry's put",
  "put+log": "the put and the `audit` log line",
  all: "everything: put, log line, batches shipped to the team's trail (production)",
};

const drained = (n: number): string => (Number.isNaN(n) ? "not within the bound" : `${ms(n, 0)} ms`);

function latencySection(l: LatencyRounds, warm: number): string {
  const side = (name: string): SideFigures => l.sides.find((s) => s.name === name)!;
  const all = side("all");
  const none = side("nothing");
  const step = (from: string, to: string) => ms(side(to).addedPairedMedian - side(from).addedPairedMedian);
  return `**Added latency per call** (goal ≤ ${GOAL_MS} ms at p50): one host, calls one after another, in blocks of
${l.block} in turn in sessions of four teams, ${l.rounds} rounds in a seeded order, after ${warm} calls on each. All four run
in one \`wrangler dev\`, the same build: the bench serves a bench-only Worker entry
(\`bench/floor/audit-parts-worker.ts\`) in which the session objects of three named teams keep only part of the
audit's work (every side pays the same look-up), and the fourth team is audited as in production. So the difference
is what the audit does for a call: the entry's put that the answer waits for (the object's output gate holds the
answer until the write is durable), its log line, and shipping batches to the team's index beside the next answers
(a block keeps that within its own side). Measured from the host, not by timing \`AuditOutbox.record\` inside the
object: workerd's clock there moves only across I/O, so it cannot see the commit the answer waits for
(\`npm run bench:audit\` times the put that way in the pool).

${table(
  ["what the team's objects keep of the audit", "calls", "p50 ms", "p95 ms", "p99 ms", "p50 − baseline", "median over rounds of block p50 − baseline", "workerd (Worker) CPU ms per call"],
  l.sides.map((s) => [KEPT[s.name] ?? s.name, s.latency.n, ms(s.latency.p50), ms(s.latency.p95), ms(s.latency.p99), ms(s.addedP50), ms(s.addedPairedMedian), ms(s.workerCpuMsPerCall)]),
  ["---", "--:", "--:", "--:", "--:", "--:", "--:", "--:"],
)}

Added by the whole audit at p50: **${ms(all.addedP50)} ms** (paired: ${ms(all.addedPairedMedian)} ms), ${all.addedP50 <= GOAL_MS ? "within" : "**over**"} the
${GOAL_MS} ms goal. By part (differences of the paired medians): the put ${ms(side("put").addedPairedMedian)} ms, the log line
${step("put", "put+log")} ms, shipping ${step("put+log", "all")} ms (differences of differences, noisier than the total: a negative
one is noise). The Worker's workerd spent ${ms(all.workerCpuMsPerCall - none.workerCpuMsPerCall)} ms more CPU per
audited call than per call of the baseline (CPU read from /proc before and after each block: less disturbed by the
shared machine than the wall clock, but blind to the commit the answer waits for). The audited calls' entries: ${all.trail?.found} of ${all.latency.n} in the trail
(missing ${all.trail?.missing}, duplicates ${all.trail?.duplicates}, strays ${all.trail?.strays}); the baseline team's trail: ${none.trail?.found} entries.`;
}

function levelsSection(f: AuditDevFigures): string {
  const s = f.sustained;
  const b = f.levels.find((l) => l.audited.hosts === s.hosts)!.baseline;
  const c = f.config;
  return `**Calls a second with every entry accounted for**: levels of concurrent hosts, each a session of one team token
calling back to back, every call with a traceparent of its own that its entry records. As many hosts of a team whose
objects record nothing ("without audit") take turns with them: ${c.turns} turns of ${c.turnMs / 1000} s each, the baseline's first,
so drift on the shared machine hits both alike. After each level the audited team's trail is read through the admin
API (\`GET /admin/teams/<team>/audit\`, pages of 1000) until it holds an entry of every answered call (bounded at
${c.drainBoundMs / 1000} s), and calls and entries are paired by traceparent: missing is an answered call without an entry,
a duplicate a call with two, a stray an entry of no answered call. "All in the trail after" runs from the last
answer to the read that found them all (an upper bound). Levels rise until two in a row add less than
${Math.round((c.rise - 1) * 100)}% audited calls/s.

${table(
  ["hosts", "calls/s", "calls/s without audit", "calls answered", "entries found", "missing", "duplicates", "strays", "errors", "p50 ms", "p50 ms without", "p99 ms", "all in the trail after", "workerd (Worker) cores", "its CPU ms per call", "without audit", "machine cores"],
  f.levels.map(({ audited: v, baseline: b }) => [
    v.hosts, ms(v.callsPerSecond, 0), ms(b.callsPerSecond, 0), v.answered, v.found, v.missing, v.duplicates, v.strays, v.errors + b.errors,
    ms(v.latency.p50, 1), ms(b.latency.p50, 1), ms(v.latency.p99, 1), drained(v.drainMs), ms(v.workerCores, 2),
    ms(v.workerCpuMsPerCall, 1), ms(b.workerCpuMsPerCall, 1), ms(v.machineCores, 2),
  ]),
  Array(17).fill("--:"),
)}

Sustained: **${ms(s.callsPerSecond, 0)} calls/s** at ${s.hosts} host${s.hosts === 1 ? "" : "s"} (${s.answered} calls in ${ms(s.seconds, 1)} s of turns), ${s.found} entries
found, **${s.missing} missing, ${s.duplicates} duplicates**; the trail held them all ${drained(s.drainMs)} after the last answer.
In the same level's turns the team without audit made ${ms(b.callsPerSecond, 0)} calls/s, its calls costing the Worker's
workerd ${ms(b.workerCpuMsPerCall, 1)} ms of CPU each against ${ms(s.workerCpuMsPerCall, 1)} ms audited.
At that level the Worker's workerd used ${ms(s.workerCores, 2)} of a core and the whole machine ${ms(s.machineCores, 2)} of its
${CORES} (this run's processes and the other work on the shared machine). Locally workerd runs the Worker and every
object of it on one thread, beside wrangler (which carries every log line to its terminal), the upstream and the
driver: when the machine's cores are busy, more hosts only queue. Other work shared the machine during the run (the
machine cores column): calls/s and latencies move with it more than with anything measured here, which is why each
level alternates its two teams' turns and the latency rounds alternate blocks.`;
}

export function renderAuditDev(f: AuditDevFigures): string {
  return `## Audit trail under wrangler dev

What the audit trail costs a call, and the most calls a second this machine sustains with every entry accounted for,
under \`wrangler dev\` on loopback (\`npm run bench:audit-dev\`). The upstream is a replay of server-everything (in a
Node process of its own); every call is its \`echo\` through \`use_tool\` in a 2025 session.

${latencySection(f.latency, f.config.rounds.warm)}

${levelsSection(f)}`;
}
