// Fast start from the team's catalog cache, stored configs that no longer validate, idle upstreams closed by the
// object's alarm, abandoned sessions deleted, and config changes reaching live sessions only when asked.
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { kvKeys } from "../../src/config/keys.ts";
import { BASE, addToken, adminFetch, connect, discoverDescription, initializeBody, releaseGate, replayControl, replayStats, replayUrl, seedTeam, sessionStatus, text, waitFor, workerFetch } from "./helpers.ts";

/** Waits until a promise settles or `ms` pass; says which. */
async function settlesWithin<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

describe("catalog cache and fast start", () => {
  it("shows a held eager upstream from the team's cache; its tool calls wait for the real connection", async () => {
    const token = await seedTeam("c-fast", { mcp: { a: { url: replayUrl("cache-a") } } });
    const first = await connect("c-fast", token);
    const description = await discoverDescription(first.client);
    await first.client.close();
    expect(await env.TEAMS.get(kvKeys.catalog("c-fast", "a"))).not.toBeNull();

    await replayControl("hold", "cache-a");
    const second = await connect("c-fast", token);
    // The upstream's initialize is held, yet the catalog is there, from the cache.
    expect(await discoverDescription(second.client)).toBe(description);
    const call = second.client.callTool({ name: "use_tool", arguments: { tool_name: "a/read_graph" } });
    expect(await settlesWithin(call, 300)).toBe(false);
    await releaseGate("cache-a");
    expect((await call).isError).toBeFalsy();
    await second.client.close();
  });

  it("waits for the real catalog when there is no cache entry, and ignores an entry of a changed config", async () => {
    const token = await seedTeam("c-cold", { mcp: { b: { url: replayUrl("cache-b") } } });
    await replayControl("hold", "cache-b");
    const first = await connect("c-cold", token);
    const listing = first.client.listTools();
    expect(await settlesWithin(listing, 400)).toBe(false);
    await releaseGate("cache-b");
    expect((await listing).tools[0]!.description).toContain("b:\n- add_observations:");
    await first.client.close();

    // Same name, another config (a header added): the cached catalog is not this entry's.
    await env.TEAMS.put(kvKeys.config("c-cold"), JSON.stringify({ mcp: { b: { url: replayUrl("cache-b"), headers: { "X-Changed": "1" } } } }));
    await replayControl("hold", "cache-b");
    const second = await connect("c-cold", token);
    const again = second.client.listTools();
    expect(await settlesWithin(again, 400)).toBe(false);
    await releaseGate("cache-b");
    await again;
    await second.client.close();
  });
});

describe("an eager upstream down when the session starts", () => {
  it("is tried again in the background as the session is used, and its tools then join the catalog", async () => {
    const token = await seedTeam("c-outage", { mcp: { late: { url: replayUrl("outage") }, up: { url: replayUrl("memory") } } });
    await replayControl("down", "outage");
    const first = await connect("c-outage", token);
    expect(await discoverDescription(first.client)).toMatch(/late: unavailable — /);
    await first.client.close();
    await replayControl("up", "outage");
    // Pretend the failure is older than the retry interval, then let the object start afresh from storage.
    const stub = env.SESSIONS.getByName(`c-outage/${first.sessionId}`);
    await runInDurableObject(stub, async (_o, state) => {
      const record = (await state.storage.get<{ status: string; reason: string; at?: number }>("upstream:late"))!;
      await state.storage.put("upstream:late", { ...record, at: 0 });
    });
    await evictDurableObject(stub);
    const again = await connect("c-outage", token, first.sessionId);
    let description = "";
    const joined = await waitFor(async () => (description = await discoverDescription(again.client)).includes("late:\n- add_observations:"), { tries: 50, ms: 50 });
    expect(joined, description).toBe(true);
    expect(description).toContain("late:\n- add_observations:");
    expect((await again.client.callTool({ name: "use_tool", arguments: { tool_name: "late/read_graph" } })).isError).toBeFalsy();
    await again.client.close();
  });

  it("is tried again at once when a call names one of its tools: while down the call says why, once back it goes through", async () => {
    const token = await seedTeam("c-outage-now", { mcp: { late: { url: replayUrl("outage-now") }, up: { url: replayUrl("memory") } } });
    await replayControl("down", "outage-now");
    const { client } = await connect("c-outage-now", token);
    expect(await discoverDescription(client)).toMatch(/late: unavailable — /);
    const use = () => client.callTool({ name: "use_tool", arguments: { tool_name: "late/read_graph" } });
    const down = await use();
    expect(down.isError).toBe(true);
    expect(text(down)).toMatch(/^"late\/read_graph" cannot be called now: the server "late" is unavailable \(.+\); it was just tried again\./);
    // Back up: the very next call connects it (no waiting for the background retry) and goes through.
    await replayControl("up", "outage-now");
    const up = await use();
    expect(up.isError, text(up)).toBeFalsy();
    expect((await replayStats("outage-now")).methods["tools/call"]).toBe(1);
    expect(await discoverDescription(client)).toContain("late:\n- add_observations:");
    // A name that is no tool of a configured server still gets the usual answer, and tries nothing.
    const typo = await client.callTool({ name: "use_tool", arguments: { tool_name: "nowhere/read_graph" } });
    expect(text(typo)).toMatch(/^Unknown tool: "nowhere\/read_graph"/);
    await client.close();
  });
});

describe("a stored config that no longer validates", () => {
  it("serves the entries that validate and names the ones that do not, with why", async () => {
    const token = await seedTeam("c-broken", { mcp: { good: { url: replayUrl("memory") } } });
    await env.TEAMS.put(
      kvKeys.config("c-broken"),
      JSON.stringify({ mcp: { good: { url: replayUrl("memory") }, bad: { transport: "stdio", command: "npx" }, typo: { url: replayUrl("memory"), tiemout: 5 } } }),
    );
    const { client } = await connect("c-broken", token);
    const description = await discoverDescription(client);
    expect(description).toContain("good:\n- add_observations:");
    expect(description).toMatch(/bad: unavailable — invalid config entry: stdio servers cannot run at the edge/);
    expect(description).toMatch(/typo: unavailable — invalid config entry: unknown key "tiemout"/);
    expect((await client.callTool({ name: "use_tool", arguments: { tool_name: "good/read_graph" } })).isError).toBeFalsy();
    await client.close();
  });
});

describe("idle and abandoned sessions", () => {
  it("closes idle upstream clients on the object's alarm; the next call reconnects transparently", async () => {
    const token = await seedTeam("c-idle", { mcp: { up: { url: replayUrl("life-idle") } } });
    const { client, sessionId } = await connect("c-idle", token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } });
    await client.close();
    const stub = env.SESSIONS.getByName(`c-idle/${sessionId}`);
    const deletesBefore = (await replayStats("life-idle")).deletes;
    // Backdate the last activity past the idle time, then let the alarm run.
    await runInDurableObject(stub, (_o, state) => state.storage.put("activity", Date.now() - 10 * 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await replayStats("life-idle")).deletes).toBe(deletesBefore + 1);
    // After the idle close the alarm waits for the time-to-live (a day here)…
    const alarmAt = () => runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect((await alarmAt())! - Date.now()).toBeGreaterThan(3600_000);
    const again = await connect("c-idle", token, sessionId);
    expect((await again.client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } })).isError).toBeFalsy();
    // …and using the session again brings it back within one idle period (120 s), so the new client is closed
    // when idle too.
    expect((await alarmAt())! - Date.now()).toBeLessThanOrEqual(120_000);
    await again.client.close();
  });

  it("keeps the upstream clients of a session still answering a call past the idle time; closes them once it is answered", async () => {
    const token = await seedTeam("c-busy", { mcp: { up: { url: replayUrl("life-busy") } } });
    // Plain requests, so no standalone GET stream (which keeps the clients anyway) is open.
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      workerFetch(`${BASE}/t/c-busy/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...headers },
        body: JSON.stringify(body),
      });
    const init = await post(initializeBody);
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.text();
    const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers)).text();
    // The call waits at the upstream (a gate) while the session goes quiet for longer than the idle time.
    const pending = post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "use_tool", arguments: { tool_name: "up/read_graph" } } }, headers).then((r) => r.text());
    expect(await waitFor(async () => ((await replayStats("life-busy")).methods["tools/call"] ?? 0) >= 1)).toBe(true);
    const stub = env.SESSIONS.getByName(`c-busy/${sessionId}`);
    const deletesBefore = (await replayStats("life-busy")).deletes;
    await runInDurableObject(stub, (_o, state) => state.storage.put("activity", Date.now() - 10 * 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await replayStats("life-busy")).deletes).toBe(deletesBefore);
    // Looked at again within one idle period, not only at the time-to-live.
    const alarmAt = () => runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect((await alarmAt())! - Date.now()).toBeLessThanOrEqual(120_000);
    expect(await releaseGate("life-busy")).toBe(1);
    const answered = await pending;
    expect(answered).toContain('\\"tool\\":\\"read_graph\\"');
    expect(answered).not.toContain('"isError":true');
    // Answered and quiet: the next alarm closes the upstream client.
    await runInDurableObject(stub, (_o, state) => state.storage.put("activity", Date.now() - 10 * 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await replayStats("life-busy")).deletes).toBe(deletesBefore + 1);
  });

  it("deletes an abandoned session's storage after its time-to-live; its id is 404 afterwards", async () => {
    const token = await seedTeam("c-ttl", { mcp: { up: { url: replayUrl("memory") } } });
    const { client, sessionId } = await connect("c-ttl", token);
    await client.listTools();
    await client.close();
    const stub = env.SESSIONS.getByName(`c-ttl/${sessionId}`);
    await runInDurableObject(stub, (_o, state) => state.storage.put("activity", Date.now() - 30 * 24 * 3600_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, async (_o, state) => (await state.storage.list()).size)).toBe(0);
    expect(await sessionStatus("c-ttl", token, sessionId)).toBe(404);
  });
});

describe("config changes", () => {
  it("new sessions use a changed config at once; a live session keeps its own until an admin reloads it", async () => {
    const token = await seedTeam("c-change", { mcp: { one: { url: replayUrl("memory") } } });
    const live = await connect("c-change", token);
    expect(await discoverDescription(live.client)).toContain("one:");
    await env.TEAMS.put(kvKeys.config("c-change"), JSON.stringify({ mcp: { two: { url: replayUrl("memory") } } }));
    const fresh = await connect("c-change", await addToken("c-change"));
    expect(await discoverDescription(fresh.client)).toContain("two:");
    expect(await discoverDescription(live.client)).toContain("one:");

    const res = await adminFetch("POST", "/teams/c-change/sessions/reload");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { sessions: number }).sessions).toBe(2);
    const after = await discoverDescription(live.client);
    expect(after).toContain("two:");
    expect(after).not.toContain("one:");
    await live.client.close();
    await fresh.client.close();
  });

  it("reconnects one upstream in every live session of a team", async () => {
    const token = await seedTeam("c-reconnect", { mcp: { up: { url: replayUrl("life-reconnect") } } });
    const { client } = await connect("c-reconnect", token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } });
    const before = (await replayStats("life-reconnect")).methods.initialize ?? 0;
    const res = await adminFetch("POST", "/teams/c-reconnect/upstreams/up/reconnect");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { sessions: number }).sessions).toBe(1);
    expect((await replayStats("life-reconnect")).methods.initialize).toBe(before + 1);
    expect((await client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } })).isError).toBeFalsy();
    await client.close();
  });
});
