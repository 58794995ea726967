// The reload scenarios (test/shared/reload-scenarios.ts) inside workerd: both eras, server-everything and the era
// fixture's asking upstream on loopback, the admin API through the Worker.
import { env } from "cloudflare:workers";
import { reloadScenarios } from "../shared/reload-scenarios.ts";
import { BASE, adminFetch, replayStats, replayUrl, seedTeam, workerFetch } from "./helpers.ts";

reloadScenarios({
  mcpUrl: (team) => `${BASE}/t/${team}/mcp`,
  fetch: workerFetch,
  seed: seedTeam,
  reload: async (team) => {
    const res = await adminFetch("POST", `/teams/${team}/sessions/reload`);
    if (!res.ok) throw new Error(`reload ${team}: HTTP ${res.status}`);
    return ((await res.json()) as { sessions: number }).sessions;
  },
  everythingUrl: env.EVERYTHING_URL,
  askingUrl: env.LEGACY_INPUT_URL,
  replayUrl,
  deletes: async (route) => (await replayStats(route)).deletes,
});
