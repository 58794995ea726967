// `npm run bench:latency -- --smoke` as a child process (asynchronous: nothing here may block), so the benchmark
// cannot rot: it must start its upstreams, the proxy and the floor, measure every variant without an error, and
// write nothing.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

it("bench/latency.ts --smoke measures the proxy, the direct calls and the floor, without errors", async () => {
  const unchanged = resultsUnchanged("latency");
  const run = await runBench("bench/latency.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const f = figures(run);

  expect(f.errorCount).toBe(0);
  for (const key of ["directReplay", "proxiedReplay", "directEverything", "proxiedEverything"]) {
    expect(f.calls[key].n).toBeGreaterThan(0);
    expect(f.calls[key].p50).toBeGreaterThan(0);
    expect(f.calls[key].p99).toBeGreaterThanOrEqual(f.calls[key].p50);
  }
  for (const key of ["node", "worker", "do", "kvDo", "cryptoDo", "doStorage", "doFetch", "readBodyDo"]) {
    expect(f.floor[key].p50).toBeGreaterThan(0);
  }
  // A call through a Worker, a Durable Object and a second hop cannot beat the direct one.
  expect(f.calls.proxiedReplay.p50).toBeGreaterThan(f.calls.directReplay.p50);
  expect(Number.isFinite(f.floorGap)).toBe(true);
  expect(typeof f.goal.met).toBe("boolean");
  expect(f.sessionStart.proxied.p50).toBeGreaterThan(0);
  expect(f.sessionStart.direct.p50).toBeGreaterThan(0);
  expect(f.loadMcp).not.toHaveProperty("skipped");
  expect(f.loadMcp.proxied.p50).toBeGreaterThan(0);
  expect(f.loadMcp.direct.p50).toBeGreaterThan(0);
  expect(run.stdout).toContain("## Latency overhead");
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);
