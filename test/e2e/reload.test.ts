// The reload scenarios (test/shared/reload-scenarios.ts) end to end: `wrangler dev` serving, teams seeded and reloaded
// through its admin API, the SDK clients of both eras over real HTTP, server-everything, the era fixture's asking
// upstream and the replay server on loopback.
import { afterAll, beforeAll } from "vitest";
import { E2E_SECRETS_KEY, provisionByAdmin } from "../../harness/clients.ts";
import { startModernUpstream, type ModernUpstream } from "../../harness/modern-upstream.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { reloadRoutes, reloadScenarios } from "../shared/reload-scenarios.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";

const ADMIN_TOKEN = "e2e-admin";
let stack: DevStack;
/** A 2025-only upstream whose `confirm` asks the user (an elicitation/create on the session's stream). */
let asking: ModernUpstream;

beforeAll(async () => {
  [stack, asking] = await Promise.all([
    startDevStack({
      name: "reload",
      replay: reloadRoutes(loadCorpus("modelcontextprotocol__server-memory")),
      vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN },
      provision: () => {},
    }),
    startModernUpstream("legacy"),
  ]);
}, 120_000);

afterAll(() => Promise.all([stack?.stop(), asking?.close()]));

reloadScenarios({
  mcpUrl: (team) => stack.mcpUrl(team),
  fetch: (input, init) => fetch(input, init),
  seed: (team, config) => provisionByAdmin(stack.proxy.url, ADMIN_TOKEN, team, config),
  reload: async (team) => {
    const res = await fetch(`${stack.proxy.url}/admin/teams/${team}/sessions/reload`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (!res.ok) throw new Error(`reload ${team}: HTTP ${res.status}`);
    return ((await res.json()) as { sessions: number }).sessions;
  },
  get everythingUrl() {
    return stack.everything.url;
  },
  get askingUrl() {
    return asking.url;
  },
  replayUrl: (route) => stack.replay.url(route),
  deletes: async (route) => stack.replay.stats(route).deletes,
});
