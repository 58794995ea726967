// The `SOAK <label>: …` summary lines the soak prints after its markdown (test/e2e/bench-soak.test.ts reads them).
import { ms } from "../lib/results.ts";
import type { Figures } from "./figures.ts";
import { kinds, num } from "./format.ts";
import { STALL_MS } from "./stalls.ts";

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
    `team index ${a.teamIndex.rows} rows (and ${a.teamIndex.keptRows} usage days, kept on purpose); unreadable files: ${a.sessions.unreadable} session, ${a.teamIndex.unreadable} index; index files ${a.teamIndex.files}`
  );
}

/** The `SOAK …` lines (the smoke test reads them). */
export function printSummary(f: Figures): void {
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
