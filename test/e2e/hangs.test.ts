// The hang scenarios (test/shared/hang-scenarios.ts) end to end: `wrangler dev` serving, teams seeded through its
// admin API, the SDK client over real HTTP, the hanging upstreams on loopback.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startWranglerDev, type Running } from "../../harness/processes.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import { E2E_SECRETS_KEY, connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { HANG_CASES, hangConfig, hangRoutes, hangScenarios } from "../shared/hang-scenarios.ts";

const ADMIN_TOKEN = "e2e-admin";

let dir: string;
let replay: ReplayServer;
let proxy: Running;
const tokens = new Map<string, string>();
const mcpUrl = (team: string) => `${proxy.url}/t/${team}/mcp`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-hangs-"));
  const state = join(dir, "state");
  const memory = loadCorpus("modelcontextprotocol__server-memory");
  replay = await startReplayServer({ memory: { catalog: memory }, ...hangRoutes(memory) });
  proxy = await startWranglerDev({ persistTo: state, vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN } });
  await Promise.all(HANG_CASES.map(async (c) => tokens.set(c.team, await provisionByAdmin(proxy.url, ADMIN_TOKEN, c.team, hangConfig(c, replay.url)))));
});

afterAll(async () => {
  await Promise.all([proxy?.stop(), replay?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const control = async (action: string, route: string) => {
  const res = await fetch(`http://127.0.0.1:${replay.port}/__${action}/${route}`, { method: "POST" });
  if (!res.ok) throw new Error(`replay control ${action} ${route}: HTTP ${res.status} ${await res.text()}`);
};

hangScenarios({
  connect: async (c) => {
    const token = tokens.get(c.team)!;
    return { ...(await connectClient(mcpUrl(c.team), token)), token };
  },
  end: async (c, token, sessionId) => {
    const res = await fetch(mcpUrl(c.team), {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    });
    await res.body?.cancel();
    return res.status;
  },
  control,
  stats: async (route) => replay.stats(route),
});
