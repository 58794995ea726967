// The hang scenarios (test/shared/hang-scenarios.ts) inside workerd, where a test can also count the session's
// upstream request slots.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import type { SessionObject } from "../../src/session/object.ts";
import { hangConfig, hangScenarios } from "../shared/hang-scenarios.ts";
import { BASE, connect, replayControl, replayStats, replayUrl, seedTeam, workerFetch } from "./helpers.ts";

hangScenarios({
  connect: async (c) => {
    const token = await seedTeam(c.team, hangConfig(c, replayUrl));
    return { ...(await connect(c.team, token)), token };
  },
  end: async (c, token, sessionId) => {
    const res = await workerFetch(`${BASE}/t/${c.team}/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    });
    await res.body?.cancel();
    return res.status;
  },
  control: replayControl,
  stats: replayStats,
  slots: (c, sessionId) =>
    runInDurableObject(env.SESSIONS.getByName(`${c.team}/${sessionId}`), (instance: SessionObject) => instance.gate!.inFlight),
});
