// The budget benchmark's smoke run (`bench/budget.ts --smoke`: 50 and 500 tools, in-process and through
// `wrangler dev`, nothing written), so the benchmark cannot rot and every row it prints stays within the budget.
import { describe, expect, it } from "vitest";
import { execScript, resultsUnchanged } from "./bench-run.ts";

describe("bench/budget.ts --smoke", () => {
  it("keeps every session-start tools/list within the default budget, the proxy's equal to the in-process fit, and writes nothing", async () => {
    const done = resultsUnchanged("budget");
    const run = await execScript("bench/budget.ts", ["--smoke"], 240_000);
    expect(run.code, run.output).toBe(0);
    const proxied = [...run.stdout.matchAll(/^proxy, (config-file|dynamic), (\d+) tools: .*?, (\d+) tokens \((within|OVER) 1500\)$/gm)];
    expect(proxied.length, run.output).toBe(4);
    for (const m of proxied) expect(m[4], m[0]).toBe("within");
    const line = run.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
    expect(line, run.output).toBeDefined();
    const figures = JSON.parse(line!.slice("FIGURES ".length)) as {
      inProcess: Array<{ tokens: number; workerTokens: number; wholeTokens: number; within: boolean; tools: number; mode: string }>;
      proxy: Array<{ sameAsInProcess: boolean }>;
    };
    for (const r of figures.inProcess) {
      expect(r.within).toBe(true);
      expect(r.workerTokens).toBe(r.tokens);
    }
    // 500 eager tools are over the budget whole: the budget is what holds them under it.
    const big = figures.inProcess.find((r) => r.tools === 500 && r.mode === "config-file")!;
    expect(big.wholeTokens).toBeGreaterThan(1500);
    for (const r of figures.proxy) expect(r.sameAsInProcess).toBe(true);
    expect(done()).toBe(true);
  }, 300_000);
});
