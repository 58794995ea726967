// Authentication, session ownership and isolation, DELETE, and survival of eviction, through the real Worker entry.
import { env } from "cloudflare:workers";
import { createExecutionContext, evictDurableObject, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { configJsonSchema } from "../../src/config/json-schema.ts";
import { hashToken } from "../../src/auth/token.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { authenticate } from "../../src/edge/mcp/auth.ts";
import { app } from "../../src/edge/app.ts";
import {
  BASE,
  addToken,
  adminFetch,
  connect,
  discoverDescription,
  initializeBody,
  post,
  releaseGate,
  replayStats,
  replayUrl,
  seedTeam,
  sessionStatus,
  text,
  waitFor,
  workerFetch,
} from "./helpers.ts";

const memoryConfig = () => ({ mcp: { memory: { url: replayUrl("memory") } } });

async function sessionCount(): Promise<number> {
  return (await listDurableObjectIds(env.SESSIONS)).length;
}

describe("authentication", () => {
  it("answers 401 alike for a missing, malformed, wrong, foreign token and an unknown team, creating nothing", async () => {
    const token = await seedTeam("auth-a", memoryConfig());
    const other = await seedTeam("auth-b", memoryConfig());
    const before = await sessionCount();
    const wrongSecret = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    const attempts: Array<[string, Record<string, string>]> = [
      ["auth-a", {}],
      ["auth-a", { authorization: "Bearer nonsense" }],
      ["auth-a", { authorization: `Basic ${token}` }],
      ["auth-a", { authorization: `Bearer ${wrongSecret}` }],
      ["auth-a", { authorization: `Bearer ${other}` }],
      ["no-such-team", { authorization: `Bearer ${token}` }],
      ["Bad Team!", { authorization: `Bearer ${token}` }],
    ];
    const bodies = new Set<string>();
    for (const [team, headers] of attempts) {
      const res = await post(encodeURIComponent(team), initializeBody, headers);
      expect(res.status, `${team} ${JSON.stringify(headers)}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="/);
      bodies.add(await res.text());
    }
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0]!)).toMatchObject({ error: "unauthorized" });
    expect(await sessionCount()).toBe(before);
  });

  it("stores only a hash of each token", async () => {
    expect((await adminFetch("PUT", "/teams/hashed/config", memoryConfig())).status).toBe(200);
    const minted = await adminFetch("POST", "/teams/hashed/tokens", {});
    expect(minted.status).toBe(201);
    const { id, token } = (await minted.json()) as { id: string; token: string };
    // The secret is everything after the id; base64url, so it may itself contain "_".
    const secret = /^dmt_[0-9a-f]{16}_([A-Za-z0-9_-]{43})$/.exec(token)?.[1];
    expect(secret, token).toBeDefined();
    // The minted token works, so what is stored is enough to check it.
    const used = await post("hashed", initializeBody, { authorization: `Bearer ${token}` });
    expect(used.status).toBe(200);
    await used.text();
    const tokenKeys = (await env.TEAMS.list({ prefix: kvKeys.tokenPrefix("hashed") })).keys;
    expect(tokenKeys.map((k) => k.name)).toEqual([kvKeys.token("hashed", id)]);
    const record = JSON.parse((await env.TEAMS.get(kvKeys.token("hashed", id)))!) as { hash?: unknown };
    expect(record.hash).toBe(await hashToken(token));
    const all = (await env.TEAMS.list({ prefix: "team/hashed/" })).keys;
    expect(all.length).toBeGreaterThanOrEqual(2); // the config and the token
    for (const key of all) {
      expect(key.name).not.toContain(secret!);
      expect(JSON.stringify(key.metadata ?? null)).not.toContain(secret!);
      expect(await env.TEAMS.get(key.name), key.name).not.toContain(secret!);
    }
  });

  it("hashes a token once while its lookup is cached; another token with the same id is still hashed and refused", async () => {
    const token = await seedTeam("auth-known", memoryConfig());
    const id = /^dmt_([0-9a-f]{16})_/.exec(token)![1]!;
    const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    const digest = vi.spyOn(crypto.subtle, "digest");
    try {
      // Caching on (the tests' env turns it off for the router): the first check hashes, the next ones do not.
      for (let i = 0; i < 3; i++) expect(await authenticate(env.TEAMS, "auth-known", `Bearer ${token}`, 30)).toEqual({ team: "auth-known", tokenId: id, subject: { kind: "token", id } });
      expect(digest).toHaveBeenCalledTimes(1);
      expect(await authenticate(env.TEAMS, "auth-known", `Bearer ${forged}`, 30)).toBeNull();
      expect(digest).toHaveBeenCalledTimes(2);
      // Another team's lookup is its own: the token is not that team's.
      expect(await authenticate(env.TEAMS, "auth-other", `Bearer ${token}`, 30)).toBeNull();
      // Caching off: every check hashes.
      await authenticate(env.TEAMS, "auth-known", `Bearer ${token}`, 0);
      await authenticate(env.TEAMS, "auth-known", `Bearer ${token}`, 0);
      expect(digest).toHaveBeenCalledTimes(5);
    } finally {
      digest.mockRestore();
    }
  });
});

describe("session routing", () => {
  it("rejects a non-initialize request without a session id with 400", async () => {
    const token = await seedTeam("routing", memoryConfig());
    const res = await post("routing", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringContaining("Mcp-Session-Id") } });
    const bad = await post("routing", "{not json", { authorization: `Bearer ${token}` });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("answers initialize at once, while an eager upstream is still connecting; tools/list waits for it", async () => {
    const token = await seedTeam("quick", { mcp: { held: { url: replayUrl("init-gate") } } });
    const res = await post("quick", initializeBody, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const sessionId = res.headers.get("mcp-session-id")!;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{22}\.s2\.[A-Za-z0-9_-]{22}$/);
    expect(await res.text()).toContain('"serverInfo"');
    // The upstream has not answered its initialize (it is held), yet the host has its answer.
    const listing = post("quick", { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      authorization: `Bearer ${token}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    }).then((r) => r.text());
    expect(await waitFor(async () => ((await replayStats("init-gate")).methods.initialize ?? 0) > 0)).toBe(true);
    expect(await releaseGate("init-gate")).toBe(1);
    expect(await listing).toContain("held:\\n- add_observations:");
  });

  it("gives 404 for a session id of another team or of another token of the same team, without waking an object", async () => {
    const tokenA = await seedTeam("iso-a", memoryConfig());
    const tokenB = await seedTeam("iso-b", memoryConfig());
    const tokenA2 = await addToken("iso-a");
    const { client, sessionId } = await connect("iso-a", tokenA);
    await client.listTools();
    const before = await sessionCount();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const headers = (token: string) => ({ authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
    for (const [team, token] of [["iso-b", tokenB], ["iso-a", tokenA2]] as const) {
      const res = await post(team, list, headers(token));
      expect(res.status).toBe(404);
    }
    const forged = await post("iso-a", list, { ...headers(tokenA), "mcp-session-id": `${sessionId.slice(0, 22)}.AAAAAAAAAAAAAAAAAAAAAA` });
    expect(forged.status).toBe(404);
    expect(await sessionCount()).toBe(before);
    // The owner still has it.
    expect((await post("iso-a", list, headers(tokenA))).status).toBe(200);
    await client.close();
  });

  it("ends a session on DELETE: its id answers 404 afterwards, the upstream session is closed, its storage is gone", async () => {
    const token = await seedTeam("ender", { mcp: { memory: { url: replayUrl("sess-ender") } } });
    const { client, transport, sessionId } = await connect("ender", token);
    await client.listTools();
    const stub = env.SESSIONS.getByName(`ender/${sessionId}`);
    expect(await runInDurableObject(stub, async (_o, state) => (await state.storage.list()).size)).toBeGreaterThan(0);
    const deletesBefore = (await replayStats("sess-ender")).deletes;
    await transport.terminateSession();
    expect(await sessionStatus("ender", token, sessionId)).toBe(404);
    expect((await replayStats("sess-ender")).deletes).toBe(deletesBefore + 1);
    expect(await runInDurableObject(stub, async (_o, state) => (await state.storage.list()).size)).toBe(0);
  });

  it("answers notifications/initialized in the router (202, the object not asked), still 404 for a foreign id", async () => {
    const token = await seedTeam("noticed", memoryConfig());
    const { client, transport, sessionId } = await connect("noticed", token);
    const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
    const headers = { authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    // The session is ended: its object answers 404 to anything that reaches it, so a 202 can only be the router's.
    await transport.terminateSession();
    expect(await sessionStatus("noticed", token, sessionId)).toBe(404);
    expect((await post("noticed", initialized, headers)).status).toBe(202);
    // The session id is checked first, as for every request.
    const other = await seedTeam("noticed-b", memoryConfig());
    expect((await post("noticed-b", initialized, { ...headers, authorization: `Bearer ${other}` })).status).toBe(404);
    // Any other notification still goes to the object.
    expect((await post("noticed", { jsonrpc: "2.0", method: "notifications/roots/list_changed" }, headers)).status).toBe(404);
    await client.close();
  });

  it("refuses GET and DELETE without a session id", async () => {
    const token = await seedTeam("getter", memoryConfig());
    for (const method of ["GET", "DELETE"]) {
      const res = await workerFetch(`${BASE}/t/getter/mcp`, { method, headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
      expect(res.status).toBe(400);
    }
  });

  it("takes a host that hangs up on its GET stream for what it is: no error line, no 500", async () => {
    const token = await seedTeam("hangup", memoryConfig());
    const { client, sessionId } = await connect("hangup", token);
    const errors = vi.spyOn(console, "error");
    try {
      const gone = new AbortController();
      gone.abort();
      const res = await app.fetch(
        new Request(`${BASE}/t/hangup/mcp`, {
          headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
          signal: gone.signal,
        }),
        env,
        createExecutionContext(),
      );
      expect(res.status).not.toBe(500);
      expect(errors.mock.calls.flat().join("\n")).not.toContain('"unhandled"');
    } finally {
      errors.mockRestore();
      await client.close();
    }
  });
});

describe("public routes", () => {
  it("serves the config JSON Schema generated from the zod schema, and health", async () => {
    const res = await workerFetch(`${BASE}/config.schema.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(configJsonSchema());
    expect(await (await workerFetch(`${BASE}/health`)).json()).toEqual({ ok: true });
    const missing = await workerFetch(`${BASE}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
  });
});

describe("durability", () => {
  it("keeps a session working after its object is evicted, reconnecting the upstream lazily", async () => {
    const token = await seedTeam("durable", { mcp: { memory: { url: replayUrl("sess-durable") }, everything: { url: env.EVERYTHING_URL } } });
    const first = await connect("durable", token);
    const description = await discoverDescription(first.client);
    expect(description).toContain("memory:");
    const sessionsBefore = (await replayStats("sess-durable")).sessions;

    // The host goes away (its GET stream would keep the object up, as it should), then the object is evicted.
    await first.client.close();
    await evictDurableObject(env.SESSIONS.getByName(`durable/${first.sessionId}`));

    // A new client object resuming the same session id: nothing in memory survives on either side.
    const again = await connect("durable", token, first.sessionId);
    expect(await discoverDescription(again.client)).toBe(description);
    // Listing after eviction came from storage: no new upstream session yet.
    expect((await replayStats("sess-durable")).sessions).toBe(sessionsBefore);
    const found = await again.client.callTool({ name: "discover_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(text(found)).toContain("Tool: memory/read_graph");
    const r = await again.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(JSON.parse(text(r))).toEqual({ tool: "read_graph", arguments: {} });
    const sum = await again.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 1, b: 2 } } });
    expect(text(sum)).toContain("3");
    expect((await replayStats("sess-durable")).sessions).toBe(sessionsBefore + 1);
  });
});
