// The scale benchmark's smoke run (`bench/scale.ts --smoke`: 10 and 100 upstreams in-process, 10 through the real
// proxy under wrangler dev, few repetitions, nothing written), so the benchmark cannot rot and its figures stay sane.
import { describe, expect, it } from "vitest";
import { resultsUnchanged, runBench } from "./bench-run.ts";

describe("bench/scale.ts --smoke", () => {
  it("renders synthetic catalogs in-process and through the proxy and prints figures that grow as they should", async () => {
    const done = resultsUnchanged("scale", ["scale", "scale-time"]);
    const run = await runBench("bench/scale.ts");
    expect(run.code, run.output).toBe(0);
    const out = run.stdout;

    const size = (n: number) => {
      const m = new RegExp(
        `in-process, ${n} upstreams \\((\\d+) tools\\): render ([\\d.]+) ms; (\\d+) tokens \\(([\\d.]+) per tool; dynamic mode (\\d+)\\); ` +
          `index ([\\d.]+) ms; lookup ([\\d.]+) µs; discover answer ([\\d.]+) µs; unknown name ([\\d.]+) ms`,
      ).exec(out);
      expect(m, out).not.toBeNull();
      const [, tools, render, tokens, perTool, lazy, index, lookup, known, unknown] = m!.map(Number);
      return { tools: tools!, render: render!, tokens: tokens!, perTool: perTool!, lazy: lazy!, index: index!, lookup: lookup!, known: known!, unknown: unknown! };
    };
    const s10 = size(10);
    const s100 = size(100);
    expect(s10.tools).toBe(263);
    expect(s100.tools).toBe(2105);
    // A catalog line keeps a name and a useful description: neither empty nor the full description.
    for (const s of [s10, s100]) {
      expect(s.perTool).toBeGreaterThan(8);
      expect(s.perTool).toBeLessThan(30);
      expect(s.lazy).toBeLessThan(s.tokens);
      expect(Number.isFinite(s.render) && Number.isFinite(s.lookup) && Number.isFinite(s.known)).toBe(true);
    }
    // Tokens grow with the tools, about linearly.
    const growth = s100.tokens / s10.tokens;
    expect(growth).toBeGreaterThan(5);
    expect(growth).toBeLessThan(12);

    const crossing = /config-file mode: the description alone passes 20000 tokens at (\d+) upstreams/.exec(out);
    expect(crossing, out).not.toBeNull();
    expect(Number(crossing![1])).toBeGreaterThan(10);
    expect(Number(crossing![1])).toBeLessThanOrEqual(100);

    // Through the proxy: the same description as in-process, and a discover_tool call that answers.
    const proxy = /proxy, 10 upstreams: first tools\/list (\d+) ms[^;]*; discover_tool p50 ([\d.]+) ms[^;]*; description (\d+) tokens/.exec(out);
    expect(proxy, out).not.toBeNull();
    expect(Number(proxy![3])).toBe(s10.tokens);
    expect(Number(proxy![2])).toBeLessThan(5_000);
    expect(out).not.toContain("WARNING");

    expect(done(), "a smoke run must not write bench/results or bench/charts").toBe(true);
  }, 300_000);
});
