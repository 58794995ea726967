// `npm run soak -- --smoke` as a child process (asynchronous: nothing here may block): concurrent sessions through
// `wrangler dev` while the chaos upstream goes down, answers errors and forgets its sessions. No request may fail at
// the transport level, the healthy upstream must never fail, the chaos upstream must (the schedule ran), memory and
// storage must have been read, every session's storage must be gone once its time-to-live has passed, and nothing
// may be written.
import { expect, it } from "vitest";
import { figures, resultsUnchanged, runBench, type BenchRun } from "./bench-run.ts";

/** The number after `SOAK <label>:` in the printed summary. */
function summary(stdout: string, label: string): number {
  const line = stdout.split("\n").find((l) => l.startsWith(`SOAK ${label}:`));
  expect(line, `no "SOAK ${label}:" line`).toBeDefined();
  return Number(/:\s*(\d+)/.exec(line!)?.[1]);
}

/**
 * What the soak printed as its result, for a failure message: its exit code, its `SOAK …` summary block and its
 * own notes (`soak: …` on stderr: what went wrong). A run that never got to its summary shows its whole stderr
 * instead (where the reason is), not a slice of the output.
 */
function soakReport(run: BenchRun): string {
  const block = run.stdout.split("\n").filter((l) => l.startsWith("SOAK "));
  const notes = run.stderr.split("\n").filter((l) => l.startsWith("soak: "));
  if (block.length === 0) return `exit code ${run.code}; no summary was printed. stderr:\n${run.stderr}`;
  return [`exit code ${run.code}`, ...block, ...notes].join("\n");
}

it("bench/soak.ts --smoke: chaos fails, the healthy upstream never does, no transport failures, memory and storage read, storage bounded", async () => {
  const unchanged = resultsUnchanged("soak");
  const run = await runBench("bench/soak.ts");
  try {
    expect(run.code).toBe(0);
    checkRun(run);
  } catch (err) {
    if (err instanceof Error) err.message += `\n\nThe soak's summary:\n${soakReport(run)}`;
    throw err;
  }
  expect(unchanged()).toBe(true); // --smoke writes nothing
}, 300_000);

function checkRun(run: BenchRun): void {
  expect(summary(run.stdout, "transport failures")).toBe(0);
  expect(summary(run.stdout, "healthy errors")).toBe(0);
  expect(summary(run.stdout, "wrong answers")).toBe(0);
  expect(summary(run.stdout, "calls")).toBeGreaterThan(150);

  const f = figures(run);
  expect(f.healthy.calls).toBeGreaterThan(50);
  expect(f.healthy.errors).toBe(0);
  // The schedule ran: the chaos upstream failed while it was down or erring, and came back.
  expect(f.chaos.errors).toBeGreaterThan(0);
  expect(f.chaos.ok).toBeGreaterThan(0);
  expect(f.phases.map((p: { name: string }) => p.name)).toEqual(["down", "rpc-error", "forget"]);
  const rpc = f.phases.find((p: { name: string }) => p.name === "rpc-error");
  expect(rpc.during.chaos.errorsByKind["upstream JSON-RPC error"]).toBeGreaterThan(0);
  expect(f.sessions.started).toBeGreaterThan(f.config.sessions); // sessions ended and new ones started
  // The Worker's workerd was found and its memory read; the persistence folder was measured.
  expect(f.memory.peak).toBeGreaterThan(10);
  expect(f.storage.end).toBeGreaterThan(0);
  // What the proxy keeps was counted in rows: sessions held data during the run, and once every session had ended
  // or outlived its (short) time-to-live, none did and the team index was empty again. The soak counts again until
  // that holds (not after a fixed wait), so a busy machine only makes it wait longer; data still there at its
  // deadline is a leak.
  expect(f.kept.peakSessionObjects).toBeGreaterThan(0);
  expect(f.kept.endOfRun.sessions.files).toBeGreaterThan(0);
  expect(f.kept.afterWait.sessions.holdingData).toBe(0);
  expect(f.kept.peakIndexRows).toBeGreaterThan(0);
  expect(f.kept.afterWait.teamIndex.rows).toBe(0);
  expect(f.kept.afterWait.teamIndex.unreadable).toBe(0);
  expect(f.kept.afterWait.kv.entries).toBeGreaterThan(0);
  expect(f.kept.bounded).toBe(true);
  // Nothing abandoned at the end can be gone before its time-to-live, and the wait ended by the deadline.
  expect(f.kept.settledAfterS).toBeGreaterThanOrEqual(f.config.sessionTtlS);
  expect(f.kept.settledAfterS).toBeLessThanOrEqual(f.config.waitDeadlineS + 5);
  expect(run.stdout).toMatch(/^SOAK storage after the run: nothing kept [\d.]+ s after the last session/m);
  expect(f.proxyRequests).toBeGreaterThan(f.calls);
  // The heap was read more than at the start and the end; the floor ran and its memory was read.
  expect(f.heap.length).toBeGreaterThan(3);
  expect(f.floor.requests).toBeGreaterThan(0);
  expect(f.floor.errors).toBe(0);
  expect(f.floor.rssEndMiB).toBeGreaterThan(10);
  expect(run.stdout).toContain("## Soak");
}
