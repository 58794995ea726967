// The semantic steering benchmark's smoke run (`bench/semantic.ts --smoke`: 20 dev queries, nothing written), so it
// cannot rot: every ranking scored, every asset measured, the holdout never named.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

/** hit@1 %, hit@5 % and MRR of a row of the printed quality table. */
function row(out: string, label: string, text: string): number[] {
  const line = out.split("\n").find((l) => l.startsWith(`| ${label} | ${text} | `));
  expect(line, out).toBeDefined();
  return line!.split("|").slice(3, 6).map((cell) => Number.parseFloat(cell.trim()));
}

describe("bench/semantic.ts --smoke", () => {
  it("scores BM25F, the static model, RRF and the blends on dev queries, measures the assets, and writes nothing", async () => {
    const done = resultsUnchanged("semantic");
    const run = await execScript("bench/semantic.ts", ["--smoke"], 150_000);
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toMatch(/^## Semantic stage \(steering, dev set only\)$/m);
    expect(run.stdout).toMatch(/^20 dev queries /m);
    const rows = [["BM25F (today)", "n/a"], ...["static model alone", "RRF (k 60)", "linear 0.5 BM25F + 0.5 cosine"].flatMap((label) => [
      [label, "whole description"],
      [label, "first sentence"],
    ])];
    for (const [label, text] of rows) {
      const [hit1, hit5, mrr] = row(run.stdout, label!, text!);
      expect(hit1! <= hit5! && mrr! > 0 && mrr! <= 1, `${label}, ${text}`).toBe(true);
    }
    expect(run.stdout).toMatch(/^\| assets\/embedder\/potion-base-4m-int8\.bin \| \d{4}\.\d \| \d{4}\.\d \|$/m);
    expect(run.stdout).toMatch(/^\| all assets \| [\d.]+ \| [\d.]+ \|$/m);
    expect(run.stdout).not.toMatch(/holdout\.json/);
    expect(done()).toBe(true);
  }, 180_000);
});
