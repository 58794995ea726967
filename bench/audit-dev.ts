// `npm run bench:audit-dev`: the audit trail under `wrangler dev` (issue 28, point 3), beside bench/audit-load.ts's
// figure from the workerd pool.
//
// 1. What the audit adds to a call: one host calls server-everything's echo (a replay upstream) through use_tool,
//    alternately in a session of an audited team and of a team whose session objects record nothing
//    (bench/floor/unaudited-worker.ts, a bench-only Worker entry: the same build otherwise), a block at a time in a
//    seeded order; medians and their difference.
// 2. The most calls/s the machine sustains with every entry accounted for: levels of concurrent hosts (each a 2025
//    session calling the echo back to back, every call with a traceparent of its own), rising until calls/s stops
//    rising; after each level the team's trail is read through the admin API, every page, until it holds an entry of
//    every answered call (bounded), and calls and entries are paired by traceparent.
//
// `--smoke`: tiny counts, writes nothing. The last line printed is `FIGURES <json>`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { provisionByAdmin } from "../harness/clients.ts";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { startUpstreams, type Upstreams } from "./floor/node-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import type { TrailReader } from "./lib/audit-accounting.ts";
import { auditedLevel, auditLatencyAB, type LatencyAB, type LevelFigures } from "./lib/audit-drive.ts";
import { table } from "./lib/markdown.ts";
import { wranglerProcesses } from "./lib/proc.ts";
import { finishRun, isSmoke, ms } from "./lib/results.ts";

const ROOT = join(import.meta.dirname, "..");
process.chdir(ROOT);

const smoke = isSmoke();
const HOSTS = smoke ? [1, 2] : [1, 2, 4, 8, 16, 32, 64, 128];
const LEVEL_MS = smoke ? 1_500 : 10_000;
/** How long after a level's last answer its entries may take to reach the trail before they count as missing. */
const DRAIN_BOUND_MS = smoke ? 20_000 : 60_000;
/** A level is a new best when it answers this much more than the best before it; two levels in a row without one end the ramp. */
const RISE = 1.05;
const AB = smoke ? { rounds: 3, block: 5, warm: 5 } : { rounds: 80, block: 20, warm: 30 };
const GOAL_MS = 1;
const ADMIN_TOKEN = "bench-admin-token";
const UNAUDITED = "unaudited";
const PROXY_VARS = {
  SESSION_KEY: "bench-session-key-0123456789abcd",
  ADMIN_TOKEN,
  // Every host of a level is a session of one token: the principal's bound must not end any of them.
  MAX_SESSIONS_PER_PRINCIPAL: "1000",
  BENCH_UNAUDITED_TEAM: UNAUDITED,
};
const ECHO = "everything/echo";

interface Figures {
  latency: LatencyAB;
  levels: LevelFigures[];
  /** The level with the most calls/s. */
  sustained: LevelFigures;
  errors: number;
  config: { hosts: number[]; levelMs: number; drainBoundMs: number; ab: typeof AB; goalMs: number };
}

/** Levels of rising concurrency until two in a row answer no more than RISE × the best before them. */
async function ramp(base: string, token: string, proxy: Running, errorSamples: string[]): Promise<LevelFigures[]> {
  const reader: TrailReader = { base, adminToken: ADMIN_TOKEN, team: "audited", tool: ECHO };
  const levels: LevelFigures[] = [];
  let best = 0;
  let flat = 0;
  for (const hosts of HOSTS) {
    const workerPid = () => wranglerProcesses(proxy.child.pid, proxy.port).worker;
    const level = await auditedLevel({ target: { url: `${base}/t/audited/mcp`, token }, reader, hosts, durationMs: LEVEL_MS, boundMs: DRAIN_BOUND_MS, workerPid, errorSamples });
    levels.push(level);
    console.log(
      `audit-dev: ${String(hosts).padStart(3)} hosts: ${ms(level.callsPerSecond, 0)} calls/s, p50 ${ms(level.latency.p50, 1)} / p99 ` +
        `${ms(level.latency.p99, 1)} ms, ${level.answered} answered, ${level.found} in the trail, missing ${level.missing}, ` +
        `duplicates ${level.duplicates}, strays ${level.strays}, errors ${level.errors}, all in the trail ${ms(level.drainMs, 0)} ms after the last answer`,
    );
    flat = level.callsPerSecond > best * RISE ? 0 : flat + 1;
    best = Math.max(best, level.callsPerSecond);
    if (flat >= 2 && !smoke) break;
  }
  return levels;
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-audit-dev-"));
  let upstreams: Upstreams | undefined;
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    upstreams = await startUpstreams({});
    snapshot = snapshotProxy("bench/floor/unaudited-worker.ts");
    proxy = await startWranglerDev({ persistTo: join(dir, "state"), vars: PROXY_VARS, config: snapshot.config });
    const config = { mcp: { everything: { url: upstreams.replay("modelcontextprotocol__server-everything") } } };
    const token = await provisionByAdmin(proxy.url, ADMIN_TOKEN, "audited", config);
    const unauditedToken = await provisionByAdmin(proxy.url, ADMIN_TOKEN, UNAUDITED, config);
    console.log(`audit-dev: proxy up in ${ms(performance.now() - started, 0)} ms`);

    const reader = (team: string): TrailReader => ({ base: proxy!.url, adminToken: ADMIN_TOKEN, team, tool: ECHO });
    const latency = await auditLatencyAB({
      audited: { url: `${proxy.url}/t/audited/mcp`, token },
      unaudited: { url: `${proxy.url}/t/${UNAUDITED}/mcp`, token: unauditedToken },
      auditedReader: reader("audited"),
      unauditedReader: reader(UNAUDITED),
      boundMs: DRAIN_BOUND_MS,
      ...AB,
    });
    console.log(`audit-dev: p50 audited ${ms(latency.audited.p50)} ms, unaudited ${ms(latency.unaudited.p50)} ms, added ${ms(latency.addedP50)} ms (paired ${ms(latency.addedPairedMedian)} ms)`);

    const errorSamples: string[] = [];
    const levels = await ramp(proxy.url, token, proxy, errorSamples);
    for (const sample of errorSamples) console.error(`  error: ${sample}`);
    const sustained = levels.reduce((a, b) => (b.callsPerSecond > a.callsPerSecond ? b : a));
    const errors = levels.reduce((a, l) => a + l.errors, 0);
    const figures: Figures = { latency, levels, sustained, errors, config: { hosts: HOSTS, levelMs: LEVEL_MS, drainBoundMs: DRAIN_BOUND_MS, ab: AB, goalMs: GOAL_MS } };
    const markdown = render(figures);
    console.log(`\n${markdown}\n`);
    console.log(`audit-dev: done in ${ms((performance.now() - started) / 1000, 1)} s`);
    finishRun({ name: "audit-dev", figures, markdown, smoke, wranglerOutput: proxy.output(), errors });
  } finally {
    await Promise.all([proxy?.stop(), upstreams?.stop()]);
    snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

const count = (n: number): string => (Number.isNaN(n) ? "not within the bound" : `${ms(n, 0)} ms`);

function render(f: Figures): string {
  const l = f.latency;
  const s = f.sustained;
  const verdict = l.addedP50 <= GOAL_MS ? "within" : "over";
  return `## Audit trail under wrangler dev

What the audit trail costs a call, and the most calls a second this machine sustains with every entry accounted for,
under \`wrangler dev\` on loopback (\`npm run bench:audit-dev\`). The upstream is a replay of server-everything (in a
Node process of its own); every call is its \`echo\` through \`use_tool\` in a 2025 session.

**Added latency per call** (goal ≤ ${GOAL_MS} ms at p50): one host, calls one after another, alternating in blocks of
${l.block} between a session of an audited team and one of a team whose session objects record nothing, ${l.rounds}
rounds in a seeded order, after ${f.config.ab.warm} calls on each side. Both run in one \`wrangler dev\`, the same build:
the bench serves a bench-only Worker entry (\`bench/floor/unaudited-worker.ts\`) that replaces the outbox's \`record\`
with one doing nothing for the one team its var names, and keeps it for every other team (both sides pay the same
comparison). So the difference is everything the audit does for a call: the entry's put that the answer waits for
(the object's output gate holds the answer until it is durable), its log line, and shipping the batch to the team's
index beside the next answers (a block keeps that within its own side). Measured from the host, not by timing
\`AuditOutbox.record\` inside the object: workerd's clock there moves only across I/O, so it cannot see the disk's
commit the answer waits for (\`npm run bench:audit\` times the put that way in the pool).

${table(
  ["side", "calls", "p50 ms", "p95 ms", "p99 ms"],
  [
    ["audited", l.audited.n, ms(l.audited.p50), ms(l.audited.p95), ms(l.audited.p99)],
    ["audit records nothing", l.unaudited.n, ms(l.unaudited.p50), ms(l.unaudited.p95), ms(l.unaudited.p99)],
  ],
  ["---", "--:", "--:", "--:", "--:"],
)}

Added at p50: **${ms(l.addedP50)} ms** (${verdict} the goal); the median over rounds of the audited block's median minus
the other's: ${ms(l.addedPairedMedian)} ms. The audited calls' entries: ${l.auditedTrail.found} of ${l.audited.n} in the trail
(missing ${l.auditedTrail.missing}, duplicates ${l.auditedTrail.duplicates}); the other team's trail: ${l.unauditedEntries} entries.

**Calls a second with every entry accounted for**: levels of concurrent hosts, each a session of one team token
calling back to back for ${f.config.levelMs / 1000} s, every call with a traceparent of its own that its entry records.
After each level the team's trail is read through the admin API (\`GET /admin/teams/<team>/audit\`, pages of 1000)
until it holds an entry of every answered call (bounded at ${f.config.drainBoundMs / 1000} s), and calls and entries are
paired by traceparent: missing is an answered call without an entry, a duplicate a call with two, a stray an entry
of no answered call. The time until the trail holds them all is measured from the last answer to the read that
found them (an upper bound); levels rise until two in a row add less than ${Math.round((RISE - 1) * 100)}% calls/s.

${table(
  ["hosts", "calls/s", "calls answered", "entries found", "missing", "duplicates", "strays", "errors", "p50 ms", "p99 ms", "all in the trail after", "workerd (Worker) cores", "machine cores"],
  f.levels.map((v) => [
    v.hosts, ms(v.callsPerSecond, 0), v.answered, v.found, v.missing, v.duplicates, v.strays, v.errors, ms(v.latency.p50, 1), ms(v.latency.p99, 1),
    count(v.drainMs), ms(v.workerCores, 2), ms(v.machineCores, 2),
  ]),
  ["--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"],
)}

Sustained: **${ms(s.callsPerSecond, 0)} calls/s** at ${s.hosts} hosts (${s.answered} calls in ${ms(s.seconds, 1)} s), ${s.found}
entries found, **${s.missing} missing, ${s.duplicates} duplicates**; the trail held them all ${count(s.drainMs)} after the
last answer. workerd runs the Worker and every object of it on one thread locally, so calls/s stops rising when that
thread (or the shared machine's two cores) is busy: compare the cores columns.`;
}

await main();
