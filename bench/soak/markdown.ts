// The soak's section of BENCHMARKS.md (bench/results/soak.md): what was run, its tables, and what they show.
import { CORES } from "../lib/proc.ts";
import { ms } from "../lib/results.ts";
import type { Figures, UpstreamFigures } from "./figures.ts";
import { kinds, mib, num, sec } from "./format.ts";
import { MEMORY_FLOOR_MIB_PER_MIN, STORAGE_FLOOR_BYTES_PER_MIN, type SoakOptions } from "./options.ts";
import type { Trend } from "./trend.ts";

export function soakMarkdown(f: Figures, o: SoakOptions): string {
  const lines = ["## Soak", "", intro(f, o), "", ...callTables(f), ...resourceTable(f), ...phaseTable(f), ...analysis(f, o), ""];
  return lines.join("\n");
}

/** What was run, in one paragraph. */
function intro(f: Figures, o: SoakOptions): string {
  const c = f.config;
  return (
    `${c.sessions} concurrent host sessions against \`wrangler dev\` on loopback for ${ms(c.runS / 60, c.runS % 60 === 0 ? 0 : 1)} minutes, each its own SDK ` +
      `\`Client\` over streamable HTTP with the team's bearer token. A session lives ${c.lifetimeS[0]}–${c.lifetimeS[1]} s, then a new ` +
      `one takes its place (every ${c.abandonEvery}th ends without DELETE, as a host that just goes away). Each round calls, in ` +
      "parallel, `healthy/echo` or `healthy/get-sum`, `chaos/read_graph` (read-only, so the proxy may repeat it) and " +
      "`chaos/create_entities` (not idempotent: never repeated), then waits " +
      `${c.thinkMs[0]}–${c.thinkMs[1]} ms. Both upstreams are replay servers in a Node process of their own; \`chaos\` has a ` +
      `${c.chaosTimeoutMs / 1000} s timeout in the team's config. After ${c.warmS} s of calm, \`chaos\` misbehaves for ${c.chaosS} s, ` +
      `then behaves for ${c.calmS} s, one kind of fault after another. Latency is per successful \`use_tool\` call as the host ` +
      "sees it; memory is the RSS of the workerd process running the Worker and every session object (/proc), sampled every " +
      `${o.sampleMs / 1000} s; storage what the proxy keeps (the rows of its Durable Objects and its KV entries, counted every ` +
      `${o.censusMs / 1000} s) and the bytes under \`--persist-to\`. The proxy runs with \`SESSION_TTL_SECONDS=${c.sessionTtlS}\` and ` +
      `\`UPSTREAM_IDLE_SECONDS=${c.upstreamIdleS}\` (a day and two minutes by default), so the clocks that bound its storage and ` +
      "its connections act within the run."
  );
}

/** Calls per upstream, and errors by kind. */
function callTables(f: Figures): string[] {
  const lines: string[] = [];
  const row = (name: string, u: UpstreamFigures) =>
    `| ${name} | ${u.calls} | ${u.ok} | ${u.errors} | ${u.transportFailures} | ${num(u.latency.p50)} | ${num(u.latency.p99)} |`;
  lines.push("| upstream | calls | ok | errors (isError) | transport failures | p50 ms | p99 ms |", "|---|---:|---:|---:|---:|---:|---:|");
  lines.push(row("healthy", f.healthy), row("chaos", f.chaos));
  lines.push(
    `| **all** | ${f.calls} | ${f.ok} | ${f.errors} | ${f.transportFailures} | ${num(f.latency.p50)} | ${num(f.latency.p99)} |`,
    "",
  );

  const allKinds = [...new Set([...Object.keys(f.healthy.errorsByKind), ...Object.keys(f.chaos.errorsByKind)])].sort(
    (a, b) => (f.chaos.errorsByKind[b] ?? 0) + (f.healthy.errorsByKind[b] ?? 0) - ((f.chaos.errorsByKind[a] ?? 0) + (f.healthy.errorsByKind[a] ?? 0)),
  );
  lines.push("Errors by kind (the `isError` texts the host got, classified):", "");
  lines.push("| kind | healthy | chaos |", "|---|---:|---:|");
  for (const k of allKinds) lines.push(`| ${k} | ${f.healthy.errorsByKind[k] ?? 0} | ${f.chaos.errorsByKind[k] ?? 0} |`);
  if (allKinds.length === 0) lines.push("| (none) | 0 | 0 |");
  lines.push("");
  return lines;
}

/** Memory and storage over the run: start, peak, end, after the wait, slopes. */
function resourceTable(f: Figures): string[] {
  const c = f.config;
  const lines: string[] = [];
  const m = f.memory;
  const s = f.storage;
  lines.push(`| resource | start | peak | end of run | after ${c.waitAfterRunS} s idle | slope, middle third | slope, last third | levels off |`);
  lines.push("|---|---:|---:|---:|---:|---:|---:|---|");
  lines.push(
    `| workerd RSS (MiB) | ${num(m.start, 0)} | ${num(m.peak, 0)} | ${num(m.end, 0)} | ${m.afterIdle === undefined ? "—" : num(m.afterIdle, 0)} | ` +
      `${num(m.middleThirdSlopePerMin)} MiB/min | ${num(m.lastThirdSlopePerMin)} MiB/min | ${m.levelsOff ? "yes" : "**no**"} |`,
  );
  const storageRow = (name: string, t: Trend) =>
    `| ${name} | ${mib(t.start)} | ${mib(t.peak)} | ${mib(t.end)} | ${t.afterIdle === undefined ? "—" : mib(t.afterIdle)} | ` +
    `${num(t.middleThirdSlopePerMin / 1024)} KiB/min | ${num(t.lastThirdSlopePerMin / 1024)} KiB/min | ${t.levelsOff ? "yes" : "**no**"} |`;
  const h = f.heapTrend;
  lines.push(
    `| V8 heap of the Worker's isolate, allocated + backing stores (MiB) | ${num(h.start, 0)} | ${num(h.peak, 0)} | ${num(h.end, 0)} | ` +
      `${h.afterIdle === undefined ? "—" : num(h.afterIdle, 0)} | ${num(h.middleThirdSlopePerMin)} MiB/min | ${num(h.lastThirdSlopePerMin)} MiB/min | ` +
      `${h.levelsOff ? "yes" : "**no**"} |`,
  );
  const k = f.kept.trend;
  lines.push(
    `| kept by the proxy: keys and values in its Durable Objects and KV (KiB) | ${num(k.start / 1024)} | ${num(k.peak / 1024)} | ` +
      `${num(k.end / 1024)} | ${k.afterIdle === undefined ? "—" : num(k.afterIdle / 1024)} | ${num(k.middleThirdSlopePerMin / 1024)} KiB/min | ` +
      `${num(k.lastThirdSlopePerMin / 1024)} KiB/min | ${k.levelsOff ? "yes" : "**no**"} |`,
    storageRow("files of the proxy's Durable Objects and KV (MiB)", s),
    storageRow("all of `--persist-to`, wrangler's local stores included (MiB)", f.storageTotal),
    "",
  );
  return lines;
}

/** What the host saw per chaos phase. */
function phaseTable(f: Figures): string[] {
  const lines: string[] = [];
  lines.push(
    "Per chaos phase: calls started in the chaos window, then in the calm window after it (until the next phase). " +
      "\"Recovered\" is the time from the end of the window to the first successful `chaos` call started after it; " +
      "\"last error\" the start of the last failed one in the calm window; \"requests open\" counts the requests the chaos " +
      "upstream had received and not finished answering (a request the proxy gave up on but never aborted stays open).",
    "",
  );
  lines.push(
    "| phase | the chaos upstream… | chaos ok / calls | what the host saw | healthy calls / errors / p99 ms | chaos errors after | recovered | last error | requests open at chaos: end of window → before next phase |",
    "|---|---|---:|---|---:|---|---:|---:|---:|",
  );
  for (const p of f.phases) {
    const d = p.during;
    lines.push(
      `| ${p.name} | ${p.what} | ${d.chaos.ok} / ${d.chaos.calls} | ${kinds(d.chaos.errorsByKind) || "no errors"} | ` +
        `${d.healthy.calls} / ${d.healthy.errors} / ${num(d.healthy.latency.p99, 0)} | ${kinds(p.after.chaos.errorsByKind) || "none"} | ` +
        `${sec(p.firstChaosSuccessAfterS)} | ${sec(p.lastChaosErrorAfterS)} | ${p.chaosInFlightAtEnd ?? "—"} → ${p.chaosInFlightBeforeNext ?? "—"} |`,
    );
  }
  lines.push("");
  return lines;
}

function analysis(f: Figures, o: SoakOptions): string[] {
  return [
    isolation(f),
    "",
    ...pauses(f),
    ...phaseByPhase(f),
    ...errorTexts(f),
    sessions(f),
    "",
    memory(f, o),
    "",
    requestsOpen(f),
    "",
    storage(f, o),
    "",
    machine(f),
  ];
}

function isolation(f: Figures): string {
  const verdict = f.transportFailures === 0 && f.healthyErrors === 0 && f.wrongAnswers === 0 && f.sessions.healthyMissingAtStart === 0;
  return (
    `**Isolation and transport**: ${f.healthy.calls} calls to \`healthy\` got ${f.healthyErrors} errors ` +
      `(p99 ${num(f.healthy.latency.p99, 0)} ms over the run, ${num(f.healthyCalmLatency.p99, 0)} ms outside chaos windows); ` +
      `${f.transportFailures} requests failed at the transport level (the SDK client threw)` +
      (f.transportFailures ? `: ${Object.entries(f.transportByStep).map(([k, n]) => `${n} at ${k}`).join(", ")}` : "") +
      `; ${f.wrongAnswers} answers belonged to another call. ${f.slowHealthy.count} healthy calls took over 1 s ` +
      `(${f.slowHealthy.firstRound} of them in a session's first round). ` +
      (verdict
        ? "The healthy upstream kept serving while the chaos one failed, and every failure reached the host as an `isError` result."
        : "**This is not what the proxy promises** (see the figures above).")
  );
}

/** When slow healthy calls came, and what the processes did meanwhile. */
function pauses(f: Figures): string[] {
  const bursts = f.slowHealthy.bursts;
  if (!bursts.length) return [];
  return [
    `**Pauses**: the ${f.slowHealthy.count} healthy calls over 1 s came in ${bursts.length} burst${bursts.length === 1 ? "" : "s"}: ` +
      bursts
        .map(
          (b) =>
            `at ${ms(b.t, 0)} s (${b.phase === "calm" ? "calm" : `${b.phase} phase`}) ${b.slow} slow healthy calls, while all ` +
            `${b.allCallsInFirstSecond} calls started in that second, to either upstream, took a median ${ms(b.medianMsOfThose, 0)} ms; ` +
            `cores used meanwhile: the Worker's workerd ${b.workerdCores === undefined ? "?" : ms(b.workerdCores, 2)}, wrangler's proxy ` +
            `workerd ${b.proxyWorkerdCores === undefined ? "?" : ms(b.proxyWorkerdCores, 2)}, wrangler (Node) ` +
            `${b.wranglerCores === undefined ? "?" : ms(b.wranglerCores, 2)}; ` +
            `${b.driverStalled || b.upstreamsStalled ? `stalled then: ${[b.driverStalled ? "this process" : "", b.upstreamsStalled ? "the upstreams" : ""].filter(Boolean).join(" and ")}` : "neither this process nor the upstreams stalled"}`,
        )
        .join("; ") +
      ".",
    "",
  ];
}

function phaseByPhase(f: Figures): string[] {
  const out: string[] = [];
  out.push("**What the host saw, phase by phase** (calls started in the chaos window; \"afterwards\": the calm that followed):", "");
  const calmP99 = f.healthyCalmLatency.p99;
  for (const p of f.phases) {
    const d = p.during;
    const after = p.after.chaos;
    out.push(
      `- *${p.name}*: the chaos upstream ${p.what}. Promised: ${p.expect}. Seen: ${d.chaos.ok} of ${d.chaos.calls} chaos calls succeeded` +
        (d.chaos.errors ? `, the others got ${kinds(d.chaos.errorsByKind)}` : "") +
        (d.chaos.latency.n ? ` (successful ones p50 ${num(d.chaos.latency.p50, 0)} ms)` : "") +
        `; afterwards ${after.errors ? `${after.errors} more chaos calls failed (${kinds(after.errorsByKind)}), the last starting ${sec(p.lastChaosErrorAfterS)} after the window` : "no chaos call failed"}` +
        (p.firstChaosSuccessAfterS !== undefined ? `, the first success came ${sec(p.firstChaosSuccessAfterS)} after it` : "") +
        `. Healthy: ${d.healthy.calls} calls, ${d.healthy.errors} errors, p99 ${num(d.healthy.latency.p99, 0)} ms (${num(calmP99, 0)} ms in calm windows).`,
    );
  }
  out.push("");
  return out;
}

/** The text the host got, one example per error kind. */
function errorTexts(f: Figures): string[] {
  const out: string[] = [];
  const texts = Object.entries(f.kindSamples);
  if (texts.length) {
    out.push("The text the host got, one example per kind:", "");
    for (const [kind, text] of texts) out.push(`- ${kind}: \`${text.replace(/`/g, "'")}\``);
    out.push("");
  }
  return out;
}

function sessions(f: Figures): string {
  const sess = f.sessions;
  return (
    `**Sessions**: ${sess.started} started (peak ${sess.peakOpen} open), ${sess.deleted} ended with DELETE, ${sess.abandoned} abandoned; ` +
      `${sess.chaosUnavailableAtStart} began while \`chaos\` could not be connected: such a session lists it as unavailable, and ` +
      "a call to one of its tools tries it again at once (within the reconnect budget), answering why it is unavailable while it stays down" +
      (f.catalogRecovery.errorsAfterOutage
        ? ` (after the outages ended, ${f.catalogRecovery.errorsAfterOutage} calls still got such an answer, the last ` +
          `${ms(f.catalogRecovery.maxSAfterOutage, 1)} s after its outage)`
        : "") +
      ". The upstreams " +
      `saw ${f.upstreamServers.healthy.initializes} sessions opened and ${f.upstreamServers.healthy.deletes} closed on \`healthy\`, ` +
      `${f.upstreamServers.chaos.initializes} opened and ${f.upstreamServers.chaos.deletes} closed on \`chaos\`.`
  );
}

function memory(f: Figures, o: SoakOptions): string {
  const m = f.memory;
  const h = f.heapTrend;
  const proxyKiB = ((m.end - m.start) * 1024) / Math.max(1, f.proxyRequests);
  const fl = f.floor;
  return (
    `**Memory**: the V8 heap of the Worker's isolate, which holds every session object's JavaScript state, went ` +
      `${num(h.start, 0)} → ${num(h.end, 0)} MiB allocated (with ArrayBuffer backing stores; peak ${num(h.peak, 0)}, read every ` +
      `${o.heapMs / 1000} s: ${f.heap.map((x) => `${ms(x.totalMiB + x.backingMiB, 0)}`).join(", ") || "not read"}); over the last third it ` +
      `grew ${num(h.lastThirdSlopePerMin)} MiB/min: ` +
      (h.levelsOff ? "**the proxy's memory levels off**." : "**the proxy's memory is still growing** at the end of the run.") +
      (h.afterIdle !== undefined ? ` ${f.config.waitAfterRunS} s after the last session it was ${num(h.afterIdle, 0)} MiB.` : "") +
      ` The RSS of the workerd process went ${num(m.start, 0)} → ${num(m.end, 0)} MiB (peak ${num(m.peak, 0)}; ` +
      `${num(m.lastThirdSlopePerMin)} MiB/min over the last third), ${ms(proxyKiB, 1)} KiB per HTTP request the hosts sent ` +
      `(${f.proxyRequests}). ` +
      (fl
        ? `The floor, a Worker that only forwards each request to one Durable Object which fetches a plain Node server, under ` +
          `its own \`wrangler dev\` right after the run, grew ${num(fl.rssStartMiB, 0)} → ${num(fl.rssEndMiB, 0)} MiB over ` +
          `${fl.requests} requests (${fl.errors} errors, ${ms(fl.seconds, 0)} s): **${ms(fl.kibPerRequest, 1)} KiB per request**; the ` +
          `proxy's ${ms(proxyKiB, 1)} KiB is ${ms(proxyKiB / Math.max(0.01, fl.kibPerRequest), 2)}× that. Most of the RSS growth is the ` +
          "local runtime's, per request it serves, whatever the Worker does; the JavaScript heap, the part the proxy owns, is the " +
          "figure that has to level off."
        : "The floor could not be measured in this run.")
  );
}

function requestsOpen(f: Figures): string {
  const u = f.upstreamInFlight;
  return (
    `**Requests left open upstream**: the chaos upstream had at most ${u.chaosPeak} requests open at once, ${u.chaosEndOfRun} at the end ` +
      `of the run` +
      (u.chaosAfterIdle !== undefined ? ` and ${u.chaosAfterIdle} after the idle wait` : "") +
      `; the healthy one at most ${u.healthyPeak}, ${u.healthyEndOfRun} at the end. ` +
      "Each request the proxy gave up on without aborting its fetch holds one of its session's 6 upstream connection slots " +
      "until the session ends; a session holding 6 such requests can no longer reach any upstream, the healthy one included, " +
      "and its later calls time out."
  );
}

function storage(f: Figures, o: SoakOptions): string {
  const sess = f.sessions;
  const t = f.storageTotal;
  const kt = f.kept.trend;
  const end = f.kept.endOfRun;
  const after = f.kept.afterWait;
  return (
    `**Storage**: what the proxy keeps, the keys and values in its Durable Objects and its KV entries, went ` +
      `${num(kt.start / 1024)} → ${num(kt.end / 1024)} KiB over the run (peak ${num(kt.peak / 1024)}; ` +
      `${num(kt.lastThirdSlopePerMin / 1024)} KiB/min over the last third). At most ${f.kept.peakSessionObjects} session objects held ` +
      `data at once, and the team index listed at most ${f.kept.peakIndexRows} sessions (peak ${sess.peakOpen} sessions open): the ` +
      "live ones, and those abandoned less than a time-to-live ago " +
      `(\`SESSION_TTL_SECONDS=${f.config.sessionTtlS}\` here). At the end of the run ${end.sessions.holdingData} session objects held ` +
      `${end.sessions.rows} rows (at most ${end.sessions.maxRows} in one) and the team index listed ${end.teamIndex.rows} sessions; ` +
      `then, from one time-to-live after the last session, it was counted again every ${o.waitPollMs / 1000} s until nothing was kept ` +
      `(at most ${f.config.waitDeadlineS} s). ${f.config.waitAfterRunS} s after the last session ${after.sessions.holdingData} session ` +
      `objects held data and the index listed ${after.teamIndex.rows}, leaving ${num(after.dataBytes / 1024)} KiB: the team's ` +
      `${after.kv.entries} KV entries (config, token hash, catalog cache). ` +
      (f.kept.bounded
        ? "**The proxy's storage is bounded**: by the sessions alive and those abandoned within one time-to-live, each deleted when it ends or expires."
        : "**Something outlived its session** (see the counts above).") +
      ` On disk, workerd keeps a file for every object that ever stored anything, even after deleteAll(): ` +
      `${end.sessions.files} session-object files, ${mib(end.sessions.bytesEmpty)} MiB of them wiped ones; the deployed runtime keeps ` +
      `nothing for an object without data. All of \`--persist-to\` went ${mib(t.start)} → ${mib(t.end)} MiB, wrangler's local ` +
      "emulation (its observability trace store, the rate limiter's object) included. Levelling off means the last third of the run " +
      `grows at most ${MEMORY_FLOOR_MIB_PER_MIN} MiB/min (memory) or ${STORAGE_FLOOR_BYTES_PER_MIN / 1024} KiB/min (storage).`
  );
}

function machine(f: Figures): string {
  return (
    `The machine is shared: over the run its ${CORES} cores were ${ms((f.machineBusyCores / CORES) * 100, 0)}% busy, every process ` +
      `included; the Worker's workerd used ${ms(f.workerdCores, 2)} of a core. ` +
      `The proxy logged ${f.proxyLog.unhandled} unhandled errors; workerd printed ${f.proxyLog.uncaught} "uncaught exception" lines.`
  );
}
