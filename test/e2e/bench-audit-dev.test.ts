// `npm run bench:audit-dev -- --smoke` as a child process (asynchronous: nothing here may block), so the benchmark
// cannot rot: through `wrangler dev` it must measure both sides of the A/B (the bench-only entry's unaudited team
// recording nothing, the audited one every call), run its levels without errors, find every answered call's entry in
// the trail once, and write nothing.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

it("bench/audit-dev.ts --smoke accounts for every call's audit entry and measures the audit's added latency", async () => {
  const unchanged = resultsUnchanged("audit-dev");
  const run = await runBench("bench/audit-dev.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const f = figures(run);

  expect(f.errors).toBe(0);
  const ab = f.latency;
  expect(ab.audited.n).toBe(ab.rounds * ab.block);
  expect(ab.unaudited.n).toBe(ab.rounds * ab.block);
  expect(Number.isFinite(ab.addedP50)).toBe(true);
  // The switch took: the audited side's every call is in its trail, the other side's trail is empty.
  expect(ab.auditedTrail).toMatchObject({ found: ab.audited.n, missing: 0, duplicates: 0, strays: 0 });
  expect(ab.unauditedEntries).toBe(0);
  expect(f.levels.length).toBeGreaterThanOrEqual(2);
  for (const level of f.levels) {
    expect(level.answered).toBeGreaterThan(0);
    expect(level).toMatchObject({ errors: 0, found: level.answered, missing: 0, duplicates: 0, strays: 0, notOk: 0 });
    expect(level.drainMs).toBeGreaterThanOrEqual(0);
  }
  expect(f.sustained.callsPerSecond).toBeGreaterThan(0);
  expect(run.stdout).toContain("## Audit trail under wrangler dev");
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);
