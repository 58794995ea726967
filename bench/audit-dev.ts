// `npm run bench:audit-dev`: the audit trail under `wrangler dev` (issue 28, point 3), beside bench/audit-load.ts's
// figure from the workerd pool.
//
// 1. What the audit adds to a call: one host calls server-everything's echo (a replay upstream) through use_tool in
//    turn in sessions of four teams, a block at a time in a seeded order: one audited as in production, and three whose
//    session objects keep only part of the audit's work (bench/floor/audit-parts-worker.ts, a bench-only Worker entry:
//    the same build otherwise): nothing (the baseline), the put alone, the put and the log line; medians and their
//    differences.
// 2. The most calls/s the machine sustains with every entry accounted for: levels of concurrent hosts (each a 2025
//    session calling the echo back to back, every call with a traceparent of its own), rising until calls/s stops
//    rising; after each level the team's trail is read through the admin API, every page, until it holds an entry of
//    every answered call (bounded), and calls and entries are paired by traceparent. The same hosts take turns with as
//    many on the team that records nothing, for the calls/s the same path makes without its audit.
//
// `--smoke`: tiny counts, writes nothing. `--render`: the section written again from the recorded figures, no run.
// The last line printed is `FIGURES <json>`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { provisionByAdmin } from "../harness/clients.ts";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { renderAuditDev, type AuditDevFigures, type LevelPair } from "./lib/audit-dev-report.ts";
import { startUpstreams, type Upstreams } from "./floor/node-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import type { TrailReader } from "./lib/audit-accounting.ts";
import { latencyRounds, pairedLevel, type Side } from "./lib/audit-drive.ts";
import { readStat, wranglerProcesses } from "./lib/proc.ts";
import { RESULTS_DIR, finishRun, isSmoke, ms } from "./lib/results.ts";

const ROOT = join(import.meta.dirname, "..");
process.chdir(ROOT);

const smoke = isSmoke();
const HOSTS = smoke ? [1, 2] : [1, 2, 4, 8, 16, 32, 64, 128];
/** Each level: this many turns of each team, the baseline's first (so 2 × turns × turnMs in all). */
const TURNS = smoke ? { turns: 1, turnMs: 1_500 } : { turns: 4, turnMs: 2_500 };
/** How long after the last answer the entries may take to reach the trail before they count as missing. */
const DRAIN_BOUND_MS = smoke ? 20_000 : 60_000;
/** A level is a new best when it answers this much more than the best before it; two levels in a row without one end the ramp. */
const RISE = 1.05;
const ROUNDS = smoke ? { rounds: 3, block: 5, warm: 5 } : { rounds: 120, block: 10, warm: 30 };
const ADMIN_TOKEN = "bench-admin-token";
/** The teams of the latency rounds and what each one's objects keep of the audit (the first is the baseline). */
const TEAMS = [
  { team: "no-audit", kept: "nothing" },
  { team: "audit-put", kept: "put" },
  { team: "audit-put-log", kept: "put+log" },
  { team: "audited", kept: "all" },
] as const;
const PROXY_VARS = {
  SESSION_KEY: "bench-session-key-0123456789abcd",
  ADMIN_TOKEN,
  // Every host of a level is a session of one team token: the principal's bound must not end any of them.
  MAX_SESSIONS_PER_PRINCIPAL: "1000",
  BENCH_AUDIT_PARTS: TEAMS.filter((t) => t.kept !== "all").map((t) => `${t.team}=${t.kept}`).join(","),
};
const ECHO = "everything/echo";

/** Levels of rising concurrency until two in a row answer no more than RISE × the best before them. */
async function ramp(proxy: Running, tokens: Map<string, string>, workerTicks: () => number, errorSamples: string[]): Promise<LevelPair[]> {
  const target = (team: string) => ({ url: `${proxy.url}/t/${team}/mcp`, token: tokens.get(team)! });
  const reader: TrailReader = { base: proxy.url, adminToken: ADMIN_TOKEN, team: "audited", tool: ECHO };
  const levels: LevelPair[] = [];
  let best = 0;
  let flat = 0;
  for (const hosts of HOSTS) {
    const pair = await pairedLevel({ audited: target("audited"), baseline: target("no-audit"), reader, hosts, ...TURNS, boundMs: DRAIN_BOUND_MS, workerTicks, errorSamples });
    levels.push(pair);
    const { audited, baseline } = pair;
    console.log(
      `audit-dev: ${String(hosts).padStart(3)} hosts: ${ms(audited.callsPerSecond, 0)} calls/s audited (${ms(baseline.callsPerSecond, 0)} without), ` +
        `p50 ${ms(audited.latency.p50, 1)} / p99 ${ms(audited.latency.p99, 1)} ms, ${audited.answered} answered, ${audited.found} in the trail, ` +
        `missing ${audited.missing}, duplicates ${audited.duplicates}, strays ${audited.strays}, errors ${audited.errors + baseline.errors}, ` +
        `all in the trail ${ms(audited.drainMs, 0)} ms after the last answer`,
    );
    flat = audited.callsPerSecond > best * RISE ? 0 : flat + 1;
    best = Math.max(best, audited.callsPerSecond);
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
    snapshot = snapshotProxy("bench/floor/audit-parts-worker.ts");
    proxy = await startWranglerDev({ persistTo: join(dir, "state"), vars: PROXY_VARS, config: snapshot.config });
    const config = { mcp: { everything: { url: upstreams.replay("modelcontextprotocol__server-everything") } } };
    const tokens = new Map<string, string>();
    for (const { team } of TEAMS) tokens.set(team, await provisionByAdmin(proxy.url, ADMIN_TOKEN, team, config));
    console.log(`audit-dev: proxy up in ${ms(performance.now() - started, 0)} ms`);

    const reader = (team: string): TrailReader => ({ base: proxy!.url, adminToken: ADMIN_TOKEN, team, tool: ECHO });
    const sides: Side[] = TEAMS.map(({ team, kept }) => ({
      name: kept,
      target: { url: `${proxy!.url}/t/${team}/mcp`, token: tokens.get(team)! },
      ...(kept === "all" ? { trail: { reader: reader(team), expect: "every call" as const } } : {}),
      ...(kept === "nothing" ? { trail: { reader: reader(team), expect: "none" as const } } : {}),
    }));
    const worker = wranglerProcesses(proxy.child.pid, proxy.port).worker;
    const workerTicks = () => (worker === undefined ? 0 : (readStat(worker)?.ticks ?? 0));
    if (worker === undefined) throw new Error("the workerd process that runs the Worker was not found");
    const latency = await latencyRounds({ sides, boundMs: DRAIN_BOUND_MS, workerTicks, ...ROUNDS });
    for (const side of latency.sides) console.log(`audit-dev: ${side.name}: p50 ${ms(side.latency.p50)} ms, added ${ms(side.addedP50)} ms (paired ${ms(side.addedPairedMedian)} ms)`);

    const errorSamples: string[] = [];
    const levels = await ramp(proxy, tokens, workerTicks, errorSamples);
    for (const sample of errorSamples) console.error(`  error: ${sample}`);
    const sustained = levels.map((l) => l.audited).reduce((a, b) => (b.callsPerSecond > a.callsPerSecond ? b : a));
    const errors = levels.reduce((a, l) => a + l.audited.errors + l.baseline.errors, 0);
    const figures: AuditDevFigures = {
      latency,
      levels,
      sustained,
      errors,
      config: { hosts: HOSTS, ...TURNS, drainBoundMs: DRAIN_BOUND_MS, rise: RISE, rounds: ROUNDS },
    };
    const markdown = renderAuditDev(figures);
    console.log(`\n${markdown}\n`);
    console.log(`audit-dev: done in ${ms((performance.now() - started) / 1000, 1)} s`);
    finishRun({ name: "audit-dev", figures, markdown, smoke, wranglerOutput: proxy.output(), errors });
  } finally {
    await Promise.all([proxy?.stop(), upstreams?.stop()]);
    snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `--render`: bench/results/audit-dev.md written again from bench/results/audit-dev.json (no run). */
if (process.argv.includes("--render")) {
  const { measured, figures } = JSON.parse(readFileSync(join(RESULTS_DIR, "audit-dev.json"), "utf8")) as { measured: string; figures: AuditDevFigures };
  writeFileSync(join(RESULTS_DIR, "audit-dev.md"), `${renderAuditDev(figures).trim()}\n\n_Measured ${measured}._\n`);
} else {
  await main();
}
