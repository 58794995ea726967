// The token benchmark's smoke run (`bench/tokens.ts --smoke`: the real proxy under wrangler dev, all 20 corpus servers,
// fewer teams and calls, nothing written), so the benchmark cannot rot and the figures it prints stay in bounds.
import { describe, expect, it } from "vitest";
import { resultsUnchanged, runBench } from "./bench-run.ts";

describe("bench/tokens.ts --smoke", () => {
  it("measures the proxy's tools/list against direct exposure and prints figures within bounds", async () => {
    const done = resultsUnchanged("tokens", ["tokens", "tokens-per-server"]);
    const run = await runBench("bench/tokens.ts");
    expect(run.code, run.output).toBe(0);
    const out = run.stdout;

    // Direct exposure matches the corpus README's count.
    const direct = /direct: (\d+) tokens \(421 tools of 20 servers, summed per server; corpus README total (\d+)/.exec(out);
    expect(direct, out).not.toBeNull();
    expect(Number(direct![1])).toBe(Number(direct![2]));

    // Config-file mode: a real catalog (not emptied), within its 6% goal.
    const config = /config-file mode: (\d+) tokens = ([\d.]+)% of direct \(\d+\); goal ≤ 6%: (met|missed)/.exec(out);
    expect(config, out).not.toBeNull();
    expect(Number(config![2])).toBeGreaterThan(2);
    expect(config![3], out).toBe("met");
    expect(out).toMatch(/^\s+\d+\s+discover_tool description: `<tools>` catalog$/m);

    // Dynamic mode lists the lazy servers and load_mcp, far below config-file mode, within its 1% goal.
    const dynamic = /dynamic mode: (\d+) tokens = ([\d.]+)% of direct; goal ≤ 1%: (met|missed)[^\n]*/.exec(out);
    expect(dynamic, out).not.toBeNull();
    expect(dynamic![0]).not.toContain("INCOMPLETE");
    expect(dynamic![3], out).toBe("met");
    expect(Number(dynamic![2])).toBeLessThanOrEqual(1);
    expect(Number(dynamic![1])).toBeLessThan(Number(config![1]) / 3);
    expect(out).toMatch(/^\s+\d+\s+discover_tool description: `<mcp_servers>` list$/m);

    // One discover_tool answer and one load_mcp listing cost something, and less than what they replace for a server.
    const discover = /discover_tool answer for (\S+): (\d+) tokens of text/.exec(out);
    expect(discover, out).not.toBeNull();
    expect(Number(discover![2])).toBeGreaterThan(0);
    const load = /load_mcp listing for (\S+): (\d+) tokens of text vs (\d+) direct/.exec(out);
    expect(load, out).not.toBeNull();
    expect(Number(load![2])).toBeLessThan(Number(load![3]));

    // A server alone: the proxy beats direct exposure for a mid-sized server.
    const memory = /per server memory: (\d+) tokens vs (\d+) direct = ([\d.]+)%/.exec(out);
    expect(memory, out).not.toBeNull();
    expect(Number(memory![3])).toBeLessThan(100);

    expect(done(), "a smoke run must not write bench/results").toBe(true);
  }, 300_000);
});
