// The checkpoint benchmark's smoke run (`bench/checkpoints.ts --smoke`: two repetitions, nothing written), so the
// benchmark cannot rot: both proxies answer every program alike, and each figure is there.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

describe("bench/checkpoints.ts --smoke", () => {
  it("runs each program with and without checkpoints, gets the same answers, and writes nothing", async () => {
    const done = resultsUnchanged("checkpoints");
    const run = await execScript("bench/checkpoints.ts", ["--smoke"], 240_000);
    expect(run.code, run.output).toBe(0);
    const line = run.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
    expect(line, run.output).toBeDefined();
    const figures = JSON.parse(line!.slice("FIGURES ".length)) as { firstExecuteMs: { on: number; off: number }; programs: Array<{ name: string; onMs: number; offMs: number }> };
    expect(figures.programs.map((p) => p.name)).toEqual(["trivial", "tight loop (3M turns)", "100k small calls", "5 tool calls"]);
    for (const p of figures.programs) {
      expect(p.onMs).toBeGreaterThan(0);
      expect(p.offMs).toBeGreaterThan(0);
    }
    expect(figures.firstExecuteMs.on).toBeGreaterThan(0);
    expect(done()).toBe(true);
  }, 300_000);
});
