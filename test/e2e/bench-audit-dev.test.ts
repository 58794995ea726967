// `npm run bench:audit-dev -- --smoke` as a child process (asynchronous: nothing here may block), so the benchmark
// cannot rot: through `wrangler dev` it must measure every side of the latency rounds (the bench-only entry's
// baseline team recording nothing, the audited team every call), run its levels without errors, find every answered
// call's entry in the trail once, and write nothing.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

it("bench/audit-dev.ts --smoke accounts for every call's audit entry and measures the audit's added latency", async () => {
  const unchanged = resultsUnchanged("audit-dev");
  const run = await runBench("bench/audit-dev.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const f = figures(run);

  expect(f.errors).toBe(0);
  const sides = Object.fromEntries(f.latency.sides.map((s: any) => [s.name, s]));
  expect(Object.keys(sides)).toEqual(["nothing", "put", "put+log", "all"]);
  for (const side of f.latency.sides) {
    expect(side.latency.n).toBe(f.latency.rounds * f.latency.block);
    expect(Number.isFinite(side.addedP50)).toBe(true);
    expect(side.workerCpuMsPerCall).toBeGreaterThanOrEqual(0);
  }
  // The parts took: the audited side's every call is in its trail, the baseline's trail is empty.
  expect(sides.all.trail).toMatchObject({ found: sides.all.latency.n, missing: 0, duplicates: 0, strays: 0 });
  expect(sides.nothing.trail.found).toBe(0);
  expect(f.levels.length).toBeGreaterThanOrEqual(2);
  for (const { audited, baseline } of f.levels) {
    expect(audited.answered).toBeGreaterThan(0);
    expect(audited).toMatchObject({ errors: 0, found: audited.answered, missing: 0, duplicates: 0, strays: 0, notOk: 0 });
    expect(audited.drainMs).toBeGreaterThanOrEqual(0);
    expect(audited.workerCpuMsPerCall).toBeGreaterThan(0); // the Worker's workerd was found and its CPU read
    expect(baseline).toMatchObject({ errors: 0, hosts: audited.hosts });
    expect(baseline.answered).toBeGreaterThan(0);
  }
  expect(f.sustained.callsPerSecond).toBeGreaterThan(0);
  expect(run.stdout).toContain("## Audit trail under wrangler dev");
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);
