// The selection benchmark's smoke run (`bench/selection.ts --smoke`: 20 queries of each set over the corpus and 2,000
// tools, nothing written), so the benchmark cannot rot and the search keeps beating the plain BM25 baseline.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

/** hit@1, hit@5 and MRR of a row of the printed table. */
function row(out: string, label: string): number[] {
  const line = out.split("\n").find((l) => l.startsWith(`| ${label} | `));
  expect(line, out).toBeDefined();
  return line!.split("|").slice(4, 7).map((cell) => Number(cell.trim()));
}

describe("bench/selection.ts --smoke", () => {
  it("scores the search and the baseline on dev and holdout queries, the search ahead, and writes nothing", async () => {
    const done = resultsUnchanged("selection");
    const run = await execScript("bench/selection.ts", ["--smoke"], 150_000);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(/^## Tool selection$/m);
    for (const set of ["dev", "holdout"]) {
      const ours = row(run.stdout, `search.ts, ${set}`);
      const baseline = row(run.stdout, `baseline BM25, ${set}`);
      for (const figure of [...ours, ...baseline]) expect(figure).toBeGreaterThanOrEqual(0);
      expect(ours[2]!).toBeGreaterThan(baseline[2]!);
      expect(ours[1]!).toBeGreaterThanOrEqual(baseline[1]!);
    }
    // The agent's path and the index sizes are reported.
    expect(run.stdout).toMatch(/^\| \*\*the path\*\* \| \*\*[\d,]+\*\* \|/m);
    expect(run.stdout).toMatch(/^\| 5\d \| \d+ \| [\d.]+ ms \| \d+ KiB \|/m);
    expect(done()).toBe(true);
  }, 180_000);
});
