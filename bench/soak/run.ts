// One soak run, top to bottom: the upstreams and the proxy up; the hosts and the chaos schedule for the run's length
// while everything is measured; the wait until the proxy keeps nothing; the floor; then the figures printed and
// written. A watchdog stops everything when the run hangs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startWranglerDev, type Running } from "../../harness/processes.ts";
import { provisionTeam } from "../../harness/clients.ts";
import { snapshotProxy, type ProxySnapshot } from "../floor/proxy-snapshot.ts";
import { CLK_TCK, machineBusyTicks } from "../lib/proc.ts";
import { finishRun, ms } from "../lib/results.ts";
import { countUntilNothingKept } from "./census.ts";
import { runChaos, schedule, type PhaseSpec } from "./chaos.ts";
import { now, startClock } from "./clock.ts";
import { soakFigures, type RunRecord } from "./figures.ts";
import { runFloor } from "./floor.ts";
import { soakMarkdown } from "./markdown.ts";
import { Monitor, type Sample } from "./monitor.ts";
import { CHAOS_TIMEOUT_MS, type SoakOptions } from "./options.ts";
import { newTotals, runHosts, type Totals } from "./sessions.ts";
import { watchStalls, type Stall } from "./stalls.ts";
import { printSummary } from "./summary.ts";
import { collectStats, noUpstreamSessions, startUpstreams, type Upstreams } from "./upstreams.ts";
import { workerPid } from "./worker.ts";

const ROOT = join(import.meta.dirname, "..", "..");

/** What runs during the soak; each is there once started, and stopped at the end. */
interface Services {
  upstreams?: Upstreams;
  snapshot?: ProxySnapshot;
  proxy?: Running;
}

/** The services up, and what the hosts need. */
interface Setup {
  upstreams: Upstreams;
  proxy: Running;
  /** The team's MCP endpoint and bearer token. */
  url: string;
  token: string;
  phases: PhaseSpec[];
}

export async function runSoak(o: SoakOptions): Promise<void> {
  process.chdir(ROOT);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-soak-"));
  const services: Services = {};
  const cleanup = async () => {
    await Promise.all([services.proxy?.stop(), services.upstreams?.stop()]);
    services.snapshot?.remove();
    rmSync(dir, { recursive: true, force: true });
  };
  const watchdog = setTimeout(() => {
    console.error(`soak: still running after ${o.watchdogMs / 1000} s; stopping everything`);
    void cleanup().finally(() => process.exit(2));
  }, o.watchdogMs);
  watchdog.unref();
  try {
    const setup = await startServices(o, dir, services, started);
    const record = await soak(o, setup, dir);
    publish(o, record, started);
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

/** The upstream process, the team provisioned in a fresh state folder, and `wrangler dev` on a copy of src/. */
async function startServices(o: SoakOptions, dir: string, services: Services, started: number): Promise<Setup> {
  const state = join(dir, "state");
  const upstreams = (services.upstreams = await startUpstreams());
  const token = provisionTeam(dir, state, "soak", {
    mcp: {
      healthy: { url: `${upstreams.healthyBase}/healthy/mcp` },
      chaos: { url: `${upstreams.chaosBase}/chaos/mcp`, timeout: CHAOS_TIMEOUT_MS },
    },
  });
  services.snapshot = snapshotProxy();
  const proxy = (services.proxy = await startWranglerDev({
    persistTo: state,
    vars: { SESSION_KEY: "soak", SESSION_TTL_SECONDS: String(o.sessionTtlS), UPSTREAM_IDLE_SECONDS: String(o.upstreamIdleS) },
    config: services.snapshot.config,
  }));
  const url = `${proxy.url}/t/soak/mcp`;
  const phases = schedule(o);
  console.log(
    `soak: proxy up in ${ms(performance.now() - started, 0)} ms (workerd pid ${workerPid(proxy) ?? "?"}); ${o.sessions} sessions for ` +
      `${o.runMs / 1000} s; chaos phases: ${phases.map((p) => p.name).join(", ")}`,
  );
  return { upstreams, proxy, url, token, phases };
}

/** The run and what follows it: the wait until the proxy keeps nothing, the readings after it, the floor. */
async function soak(o: SoakOptions, setup: Setup, dir: string): Promise<RunRecord> {
  const state = join(dir, "state");
  const monitor = new Monitor(o, setup.proxy, setup.upstreams, state);
  const run = await runSessions(o, setup, monitor);
  // The end of the run: taken a moment after runS, so it is what every figure "at the end of the run" reads.
  const { endSample, keptEndOfRun } = await monitor.endOfRun();
  const wait = await countUntilNothingKept(o, state, monitor.kept);
  const afterIdle = await monitor.sample();
  await monitor.readHeap();
  const floor = await runFloor(dir, Math.min(o.floorMaxRequests, run.totals.proxyRequests), o.sessions);
  const stalls = await run.stalls();
  return {
    options: o,
    phases: setup.phases,
    totals: run.totals,
    windows: run.windows,
    samples: monitor.samples,
    heap: monitor.heap,
    kept: monitor.kept,
    runS: run.runS,
    endSample,
    keptEndOfRun,
    wait,
    afterIdle,
    machineBusyCores: run.machineBusyCores,
    workerdCores: run.workerdCores,
    stalls,
    upstreamServers: run.upstreamServers,
    floor,
    wranglerOutput: setup.proxy.output(),
  };
}

/** What the run itself recorded; `stalls` stops watching this process's and reads both processes' stalls. */
interface SessionsRun extends Pick<RunRecord, "totals" | "windows" | "runS" | "machineBusyCores" | "workerdCores" | "upstreamServers"> {
  stalls: () => Promise<RunRecord["stalls"]>;
}

/** The run: the clock starts, the hosts call tools for `runMs` while the chaos schedule runs and the monitor reads. */
async function runSessions(o: SoakOptions, setup: Setup, monitor: Monitor): Promise<SessionsRun> {
  const { upstreams } = setup;
  startClock();
  const runStartEpoch = Date.now();
  const driverStalls = watchStalls();
  const ticksAtStart = machineBusyTicks();
  const workerTicksAtStart = monitor.workerTicks();
  const { heapLoop } = await monitor.start();
  const totals = newTotals();
  const upstreamServers = noUpstreamSessions();
  const chaos = runChaos(o, upstreams, setup.phases, () => collectStats(upstreams, upstreamServers));
  const progress = setInterval(() => printProgress(totals, monitor.samples.at(-1)), o.progressMs);
  const [windows] = await Promise.all([chaos, heapLoop, runHosts({ options: o, url: setup.url, token: setup.token, runEnd: o.runMs, totals })]);
  const runS = now() / 1000;
  // CPU over the run, read as it ends (the readings below take time of their own).
  const machineBusyCores = (machineBusyTicks() - ticksAtStart) / CLK_TCK / runS;
  const workerdCores = (monitor.workerTicks() - workerTicksAtStart) / CLK_TCK / runS;
  clearInterval(progress);
  await collectStats(upstreams, upstreamServers);
  monitor.stop();
  const sinceStart = (list: Stall[]) => list.map((x) => ({ t: (x.at - runStartEpoch) / 1000, ms: x.ms })).filter((x) => x.t >= 0);
  const stalls = async () => {
    driverStalls.stop();
    return { driver: sinceStart(driverStalls.stalls), upstreams: sinceStart(await upstreams.stalls().catch(() => [])) };
  };
  return { totals, windows, runS, machineBusyCores, workerdCores, upstreamServers, stalls };
}

function printProgress(totals: Totals, last: Sample | undefined): void {
  const ev = totals.events;
  const errs = ev.filter((e) => !e.ok);
  console.log(
    `soak: ${ms(now() / 1000, 0).padStart(4)} s  ${ev.length} calls, ${errs.filter((e) => e.upstream === "chaos").length} chaos errors, ` +
      `${errs.filter((e) => e.upstream === "healthy").length} healthy errors, ${totals.transportFailures} transport failures, ` +
      `${totals.open} open, workerd ${ms(last?.rssMiB ?? 0, 0)} MiB, storage ${ms((last?.proxyBytes ?? 0) / 2 ** 20, 1)} MiB (all ${ms((last?.storageBytes ?? 0) / 2 ** 20, 1)} MiB)`,
  );
}

/**
 * Prints the markdown, the `SOAK` summary and the FIGURES line, and writes the results (unless a smoke run).
 * Failures are the finding: the figures are written all the same (finishRun refuses only a reloaded Worker), and
 * the exit code is 1.
 */
function publish(o: SoakOptions, record: RunRecord, started: number): void {
  const figures = soakFigures(record);
  const markdown = soakMarkdown(figures, o);
  console.log(`\n${markdown}\n`);
  printSummary(figures);
  console.log(`soak: done in ${ms((performance.now() - started) / 1000, 1)} s`);
  finishRun({ name: "soak", figures, markdown, smoke: o.smoke, wranglerOutput: record.wranglerOutput, printed: { samples: undefined } });
  const failed = figures.transportFailures > 0 || figures.healthyErrors > 0 || figures.wrongAnswers > 0;
  if (failed || record.totals.sessionsHealthyMissing > 0 || !figures.kept.bounded) process.exitCode = 1;
}
