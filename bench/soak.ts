// Soak (issue 7): many MCP sessions calling tools through the proxy for minutes while one upstream misbehaves on a
// schedule. Loopback only, bounded in sessions and time, stops by itself.
//
//   - Upstreams: two replay servers (harness/replay-server.ts) in a Node process of their own, started from
//     this file with `--upstreams`: "healthy" (server-everything's catalog) and "chaos" (server-memory's). This
//     process drives the chaos route's schedule: faults are swapped over IPC, down/up/forget go through the
//     replay server's control endpoints.
//   - Proxy: `wrangler dev` serving a copy of src/ taken at start (bench/floor/proxy-snapshot.ts), its state in a
//     fresh --persist-to folder, the team provisioned with the team CLI.
//   - Hosts: concurrent sessions, each its own SDK Client over streamable HTTP with the bearer token. A session
//     lives 20–60 s (every 4th is abandoned without DELETE, as hosts that vanish do), then a new one takes its
//     place. Each round calls, in parallel: healthy/echo or healthy/get-sum, chaos/read_graph (read-only: safe to
//     repeat) and chaos/create_entities (not idempotent: never repeated), then thinks for 1.5–3 s.
//   - Figures: calls, errors by kind (the isError texts classified), transport failures to the proxy (thrown by
//     the SDK client: must be 0), p50/p99 of successful calls, per chaos phase what the host saw; the RSS of the
//     workerd running the Worker, the V8 heap of its isolate, what the proxy keeps (rows of its Durable Objects
//     and KV entries) and the bytes under --persist-to over time, with their slopes over the middle and the last
//     third of the run; after the run, what is still kept once every abandoned session is past its time-to-live
//     (counted again until nothing is, or a generous deadline passes); then the floor Worker's RSS growth for as
//     many requests, under its own wrangler dev.
//
// `--minutes N` (default 4), `--sessions N` (default 40), `--ttl S` (SESSION_TTL_SECONDS, default 60), `--idle S`
// (UPSTREAM_IDLE_SECONDS, default 15), `--smoke` (~20 s, 6 sessions, three phases, writes nothing). The last line
// printed is `FIGURES <json>`. Exit code 1 when a transport failure, an error on the healthy upstream or a wrong
// answer was seen, or when a session's storage was still there at the deadline after its time-to-live (the figures
// are still written: they are the finding); also when wrangler reloaded the Worker during a full run, which then
// writes nothing.
//
// The pieces, in bench/soak/:
//   options.ts          the flags and the timings and limits that follow from them
//   run.ts              one run, top to bottom (everything below is called from there)
//   upstreams.ts        starting the upstream process and talking to it; upstream-server.ts is that process
//   chaos.ts            the chaos upstream's schedule: what each phase does and promises, and the loop running it
//   sessions.ts         what one simulated host does, and the tally of every call it made
//   monitor.ts          the readings during the run: RSS, CPU, storage bytes, open requests, heap, census
//   worker.ts           the Worker's workerd: its pid, its CPU, the V8 heap of its isolate
//   census.ts           what the proxy keeps: Durable Object rows, KV entries, folder bytes; the wait after the run
//   floor.ts            the floor Worker's RSS per request, after the run
//   figures.ts          the figures (FIGURES line, bench/results/soak.json); trend.ts their slopes
//   summary.ts          the `SOAK …` lines; markdown.ts the section of BENCHMARKS.md; format.ts their number formats
//   clock.ts, stalls.ts the run's clock and waits; event-loop stalls
import { join } from "node:path";
import { runScript } from "../harness/processes.ts";
import { soakOptions } from "./soak/options.ts";
import { runSoak } from "./soak/run.ts";
import { serveUpstreams } from "./soak/upstream-server.ts";

if (process.argv.includes("--upstreams")) {
  await serveUpstreams();
} else {
  const options = soakOptions(process.argv);
  await runSoak(options);
  // A full run's section joins BENCHMARKS.md.
  if (!options.smoke && (await runScript(join(import.meta.dirname, "report.ts"))) !== 0) process.exitCode = 1;
}
