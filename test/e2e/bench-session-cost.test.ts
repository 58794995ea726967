// `npm run bench:session-cost -- --smoke` as a child process: one token's sessions opened in two tiny steps through
// `wrangler dev` and kept open; every step read (heap, RSS, upstream sessions), the slopes there, nothing written.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

it("bench/session-cost.ts --smoke keeps sessions open, reads what each costs, and writes nothing", async () => {
  const unchanged = resultsUnchanged("session-cost");
  const run = await runBench("bench/session-cost.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const f = figures(run);
  expect(f.errors).toBe(0);
  expect(f.steps.map((s: { sessions: number }) => s.sessions)).toEqual([1, 3, 5]);
  // Each session opened one upstream session per eager upstream (two), and none closed.
  expect(f.steps.map((s: { upstreamSessions: number }) => s.upstreamSessions)).toEqual([2, 6, 10]);
  for (const s of f.steps) expect(s.heapMiB).toBeGreaterThan(1);
  expect(run.stdout).toContain("## Sessions per principal");
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);
