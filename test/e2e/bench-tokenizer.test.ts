// The tokenizer benchmark's smoke run (`bench/tokenizer.ts --smoke`: few repetitions, nothing written), so the
// benchmark cannot rot and the Worker's counter keeps agreeing with js-tiktoken on the texts it times.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

describe("bench/tokenizer.ts --smoke", () => {
  it("counts the same as js-tiktoken on the catalog and the tools JSON, times both, and writes nothing", async () => {
    const done = resultsUnchanged("tokenizer");
    const run = await execScript("bench/tokenizer.ts", ["--smoke"], 120_000);
    expect(run.code, run.output).toBe(0);
    const line = run.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
    expect(line, run.output).toBeDefined();
    const figures = JSON.parse(line!.slice("FIGURES ".length)) as { texts: Array<{ name: string; ours: number; theirs: number }>; warm: { loadMs: number } };
    expect(figures.texts.map((t) => t.name)).toEqual(["catalog", "toolsJson"]);
    for (const t of figures.texts) {
      expect(t.ours).toBeGreaterThan(1000);
      expect(t.ours).toBe(t.theirs);
    }
    expect(figures.warm.loadMs).toBeGreaterThan(0);
    expect(done()).toBe(true);
  }, 150_000);
});
