// The official MCP conformance suite against the proxy (single-MCP mode), as `npm run conformance` runs it: the
// script starts the fixture upstream, wrangler dev and the token forwarder itself; here it only has to end green
// (every failure listed in conformance/expected-failures.yml, no stale entry) and say what passed.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBaseline } from "../../scripts/conformance.ts";
import { ROOT, execScript } from "./bench-run.ts";

const BASELINE = join(ROOT, "conformance", "expected-failures.yml");

/** The script's own summary block: `passed: n` then `  ✓ scenario…` lines, `expected failures: n` then `  ~ …`. */
function section(output: string, title: string, mark: string): string[] {
  const start = output.indexOf(`\n${title}: `);
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of output.slice(start + 1).split("\n").slice(1)) {
    if (!line.startsWith(`  ${mark} `)) break;
    names.push(line.slice(4).split(/[\s:]/)[0]!);
  }
  return names;
}

describe("MCP conformance suite through the proxy (single-MCP mode)", () => {
  it("passes every scenario outside the expected-failures baseline, each listed failure with its reason", { timeout: 120_000 }, async () => {
    // Asynchronous on purpose (never spawnSync): the run takes a while and must not block the test process.
    const { code, output } = await execScript(join("scripts", "conformance.ts"), [], 115_000);
    expect(code, output.slice(-6000)).toBe(0);
    expect(output).toContain("Baseline check passed: all failures are expected.");
    expect(output).not.toContain("UNEXPECTED failures");
    expect(output).not.toContain("STALE baseline entries");

    const passed = section(output, "passed", "✓");
    for (const scenario of [
      "server-initialize",
      "ping",
      "tools-list",
      "server-sse-multiple-streams",
      "logging-set-level",
      "completion-complete",
      "resources-list",
      "resources-read-text",
      "resources-read-binary",
      "resources-templates-read",
      "resources-subscribe",
      "resources-unsubscribe",
      "prompts-list",
      "prompts-get-simple",
      "prompts-get-with-args",
      "prompts-get-embedded-resource",
      "prompts-get-with-image",
    ]) {
      expect(passed, `${scenario} should pass`).toContain(scenario);
    }

    // Every baseline entry failed in this run (the suite would call a passing one stale) and carries a reason.
    const baseline = readBaseline(BASELINE);
    expect(section(output, "expected failures", "~").sort()).toEqual([...baseline.keys()].sort());
    for (const [scenario, reason] of baseline) expect(reason, scenario).toMatch(/^\([abc]\) \S/);

    // The tool scenarios the suite can only call by bare name work through use_tool.
    expect(output).toMatch(/parity: (\d+)\/\1 ok/);
  });
});
