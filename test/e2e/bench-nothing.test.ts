// The nothing-useful benchmark's smoke run (`bench/nothing.ts --smoke`: 20 dev queries, nothing written), so it cannot
// rot: every signal and the shipped rule scored stage off and on, the answer's tokens measured, the holdout never named.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

describe("bench/nothing.ts --smoke", () => {
  it("scores each signal and the shipped rule on dev queries, both stages, measures the answer's tokens, and writes nothing", async () => {
    const done = resultsUnchanged("nothing");
    const run = await execScript("bench/nothing.ts", ["--smoke"], 150_000);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(/^## Nothing useful \(search's judgement of its hits\)$/m);
    expect(run.stdout).toMatch(/on the 20 DEV queries only/);
    for (const stage of ["off", "static"]) {
      const line = run.stdout.split("\n").find((l) => l.startsWith(`| ${stage} | USEFULNESS: `));
      expect(line, run.stdout).toBeDefined();
      const rates = line!.split("|").slice(3, 6).map((cell) => Number.parseFloat(cell));
      expect(rates.every((r) => r >= 0 && r <= 100), line).toBe(true);
    }
    expect(run.stdout).toMatch(/^\| static \| best cosine alone < [\d.]+ \|/m);
    expect(run.stdout).toMatch(/^\| (off|static) \| \d+ \| \d+ \| \d+ \|$/m);
    expect(run.stdout).not.toMatch(/holdout\.json/);
    expect(done()).toBe(true);
  }, 180_000);
});
