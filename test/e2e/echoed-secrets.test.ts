// Under `wrangler dev`: a team whose upstreams tell back the headers they were sent (harness/echo-upstream.ts, a 2026
// one and a 2025 one on loopback, eager, and a lazy one), with the team's secrets (stored with the team CLI) in
// them. A member takes every view as a 2025 host and as a 2026 host (test/shared/echo-tour.ts); no answer, wrangler's
// output (the Worker's log lines) or file of the local state (KV and Durable Object storage, sqlite and blobs)
// holds a secret in any form, and what the upstreams echoed reads `[withheld]`.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, provisionTeam, teamCli } from "../../harness/clients.ts";
import { startEchoUpstream } from "../../harness/echo-upstream.ts";
import type { ModernUpstream } from "../../harness/modern-upstream.ts";
import { ECHO_SECRETS, echoConfig, leaksIn, missingEchoes, legacyTour, modernTour } from "../shared/echo-tour.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";

const TEAM = "echoed";
let stack: DevStack;
let echoes: ModernUpstream[] = [];
let token: string;

beforeAll(async () => {
  echoes = await Promise.all([startEchoUpstream("modern"), startEchoUpstream("legacy")]);
  const [modern, legacy] = echoes as [ModernUpstream, ModernUpstream];
  stack = await startDevStack({
    name: "echoed",
    replay: {},
    vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY },
    provision: ({ dir, state }) => {
      // The secrets first: `team put` refuses a config that references a secret the team does not have.
      for (const [name, value] of Object.entries(ECHO_SECRETS)) {
        const stored = teamCli(["secret", "put", TEAM, name, "--persist-to", state], {}, `${value}\n`);
        if (stored.status !== 0) throw new Error(`team secret put failed: ${stored.stderr}`);
      }
      token = provisionTeam(dir, state, TEAM, echoConfig(modern.url, legacy.url));
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all(echoes.map((e) => e.close()));
});

/** Every file of the proxy's local state, as text (sqlite databases, their journals, KV's blobs). */
function stateFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString("latin1"));
}

async function expectWithheld(texts: string[]): Promise<void> {
  const all = texts.join("\n");
  expect(missingEchoes(all)).toEqual([]);
  expect(leaksIn(all)).toEqual([]);
  // The upstreams were sent the secrets: what came back is the proxy's doing.
  expect(echoes[0]!.headers("tools/call")?.["x-api-key"] ?? echoes[1]!.headers("tools/call")?.["x-api-key"]).toBe(ECHO_SECRETS.ECHO_KEY);
  expect(leaksIn(stack.proxy.output())).toEqual([]);
  // The literal credential is in the team's config as written (KV, the session records): the secrets are not.
  const stored = stateFiles(stack.state);
  expect(stored.some((file) => file.includes("[withheld]"))).toBe(true);
  expect(leaksIn(stored.join("\n"), Object.values(ECHO_SECRETS))).toEqual([]);
}

describe("an upstream that echoes the team's secrets, under wrangler dev", () => {
  const url = (query: string) => stack.mcpUrl(TEAM, query);
  const plainFetch = (input: string | URL, init?: RequestInit) => fetch(input, init);
  for (const view of ["meta", "direct", "code"] as const) {
    it(`2025 host, ${view} view: no answer, log line or stored file holds a secret`, async () => {
      await expectWithheld(await legacyTour(url, token, plainFetch, view));
    });
  }
  for (const view of ["meta", "code"] as const) {
    it(`2026-07-28 host, ${view} view: no answer, log line or stored file holds a secret`, async () => {
      await expectWithheld(await modernTour(url, token, plainFetch, view));
    });
  }
});
