// `npm run bench:load -- --smoke` as a child process (asynchronous: nothing here may block): concurrent sessions
// through `wrangler dev` must all succeed, the figures must be there (throughput, p99, workerd's memory), and
// nothing may be written.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

it("bench/load.ts --smoke runs concurrent sessions without errors and reports throughput, p99 and memory", async () => {
  const unchanged = resultsUnchanged("load");
  const run = await runBench("bench/load.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const f = figures(run);

  expect(f.errors).toBe(0);
  expect(f.levels.length).toBeGreaterThanOrEqual(2);
  for (const level of f.levels) {
    expect(level.errors).toBe(0);
    expect(level.sessions).toBeGreaterThan(0);
    expect(level.peakOpenSessions).toBe(level.concurrency);
    expect(level.callsPerSecond).toBeGreaterThan(0);
    expect(level.latency.p99).toBeGreaterThan(0);
    expect(level.byKind.use_tool.n).toBeGreaterThan(0);
  }
  // The Worker's workerd process was found in wrangler's process tree and its memory read from /proc.
  expect(f.peakWorkerdRssMiB).toBeGreaterThan(10);
  expect(run.stdout).toContain("## Load");
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);
