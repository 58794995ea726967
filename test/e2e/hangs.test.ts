// The hang scenarios (test/shared/hang-scenarios.ts) end to end: `wrangler dev` serving, teams seeded through its
// admin API, the SDK client over real HTTP, the hanging upstreams on loopback.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startWranglerDev, type Running } from "../../scripts/lib/processes.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../fixtures/replay-server.ts";
import { HANG_CASES, hangConfig, hangRoutes, hangScenarios } from "../shared/hang-scenarios.ts";
import { E2E_SECRETS_KEY, connectClient } from "./helpers.ts";

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
  await Promise.all(HANG_CASES.map(async (c) => tokens.set(c.team, await provision(c.team, hangConfig(c, replay.url)))));
});

/** Stores a team's config and mints a token through the admin API; returns the token. */
async function provision(team: string, config: unknown): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
  const put = await fetch(`${proxy.url}/admin/teams/${team}/config`, { method: "PUT", headers, body: JSON.stringify(config) });
  if (!put.ok) throw new Error(`config of ${team}: HTTP ${put.status} ${await put.text()}`);
  const minted = await fetch(`${proxy.url}/admin/teams/${team}/tokens`, { method: "POST", headers, body: "{}" });
  if (!minted.ok) throw new Error(`token of ${team}: HTTP ${minted.status} ${await minted.text()}`);
  return ((await minted.json()) as { token: string }).token;
}

afterAll(async () => {
  await Promise.all([proxy?.stop(), replay?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const control = async (action: string, route: string) => {
  await fetch(`http://127.0.0.1:${replay.port}/__${action}/${route}`, { method: "POST" });
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
