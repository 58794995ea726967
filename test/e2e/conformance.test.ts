// The official MCP conformance suite against the proxy, as `npm run conformance` runs it: as a server in single-MCP
// mode (the script starts the upstreams, our fixture and a real server-everything, wrangler dev and the token
// forwarders itself), and as the OAuth client of its upstreams (the suite's client auth/* scenarios, each run by
// harness/conformance-auth-client.ts against the same wrangler dev). Here it only has to end green (every failure
// listed in the run's baseline, no stale entry) and say what passed in each run.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLIENT_BASELINE, CLIENT_SUITES, CLIENT_TITLE, readBaseline, serverTitle } from "../../scripts/conformance.ts";
import { ROOT, execScript } from "./bench-run.ts";

const BASELINE = join(ROOT, "conformance", "expected-failures.yml");
const BASELINE_EVERYTHING = join(ROOT, "conformance", "expected-failures-everything.yml");

/** One summary block of the script's output (a server run's, by its upstream, or the client runs'), to the next block. */
function summary(output: string, title: string): string {
  const header = `=== dynmcp conformance summary (${title}) ===`;
  const start = output.indexOf(header);
  if (start < 0) return "";
  const rest = output.slice(start + header.length);
  const end = rest.search(/\n=== |\nconformance suite exit code/);
  return end < 0 ? rest : rest.slice(0, end);
}

/** A summary's list: `passed: n` then `  ✓ scenario…` lines, `expected failures: n` then `  ~ …`. */
function section(block: string, title: string, mark: string): string[] {
  const start = block.indexOf(`\n${title}: `);
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of block.slice(start + 1).split("\n").slice(1)) {
    if (!line.startsWith(`  ${mark} `)) break;
    names.push(line.slice(4).split(/[\s:]/)[0]!);
  }
  return names;
}

/** Every baseline entry failed in this run (the suite would call a passing one stale) and carries a reason of a known group. */
function expectBaselineMet(block: string, file: string, groups: RegExp, list: "server" | "client" = "server"): void {
  const baseline = readBaseline(file, list);
  expect(section(block, "expected failures", "~").sort()).toEqual([...baseline.keys()].sort());
  for (const [scenario, reason] of baseline) expect(reason, scenario).toMatch(groups);
}

describe("MCP conformance suite against the proxy (single-MCP mode; the client auth scenarios)", () => {
  // About 50 s on a busy two-core machine (35 s for the server runs, 15 to 25 for the client ones); the bound leaves
  // room for a slower machine, and the script stops each run of the suite on its own long before it.
  it("passes every scenario outside each run's baseline, each listed failure with its reason", { timeout: 200_000 }, async () => {
    // Asynchronous on purpose (never spawnSync): the runs take a while and must not block the test process.
    const { code, output } = await execScript(join("scripts", "conformance.ts"), [], 195_000);
    expect(code, output.slice(-6000)).toBe(0);
    // Two server runs, then one run of the suite per client suite.
    expect(output.split("Baseline check passed: all failures are expected.").length - 1).toBe(2 + CLIENT_SUITES.length);
    expect(output).not.toContain("UNEXPECTED failures");
    expect(output).not.toContain("STALE baseline entries");

    // In front of our fixture, which offers every fixture the suite names.
    const fixture = summary(output, serverTitle("the fixture upstream"));
    const passed = section(fixture, "passed", "✓");
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
    expectBaselineMet(fixture, BASELINE, /^\([abc]\) \S/);
    // The tool scenarios the suite can only call by bare name work through use_tool.
    expect(output).toMatch(/parity: (\d+)\/\1 ok/);

    // In front of a real server-everything, which lists no test://watched-resource: subscribing to it goes to the
    // upstream all the same (issue 12), and it accepts.
    const everything = summary(output, serverTitle("server-everything"));
    const passedEverything = section(everything, "passed", "✓");
    for (const scenario of ["server-initialize", "ping", "tools-list", "logging-set-level", "resources-list", "resources-subscribe", "resources-unsubscribe", "prompts-list"]) {
      expect(passedEverything, `${scenario} should pass against server-everything`).toContain(scenario);
    }
    expectBaselineMet(everything, BASELINE_EVERYTHING, /^\([ad]\) \S/);

    // The proxy as the OAuth client of an upstream: discovery (protected resource metadata from the 401 or the
    // well-known paths, RFC 8414 metadata), scopes, dynamic registration, each token endpoint authentication method,
    // a pre-registered client, PKCE S256 and resource indicators, refresh tokens only when offered.
    const client = summary(output, CLIENT_TITLE);
    const passedClient = section(client, "passed", "✓");
    for (const scenario of [
      "auth/metadata-default",
      "auth/metadata-var1",
      "auth/metadata-var2",
      "auth/metadata-var3",
      "auth/scope-from-www-authenticate",
      "auth/scope-from-scopes-supported",
      "auth/scope-omitted-when-undefined",
      "auth/scope-retry-limit",
      "auth/token-endpoint-auth-basic",
      "auth/token-endpoint-auth-post",
      "auth/token-endpoint-auth-none",
      "auth/pre-registration",
      "auth/resource-mismatch",
      "auth/offline-access-scope",
      "auth/offline-access-not-supported",
    ]) {
      expect(passedClient, `${scenario} should pass`).toContain(scenario);
    }
    expectBaselineMet(client, CLIENT_BASELINE, /^\([ef]\) \S/, "client");
  });
});
