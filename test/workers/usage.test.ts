// Token accounting per team through the real runtime: sessions that list, search, look up, load and call, flushed
// to the team's index (at start, at the end, on the alarm of an evicted object), read through the admin API.
// Tokens are counted with the Worker's own counter (see hostPaid in helpers.ts).
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { tokenId } from "../../src/auth/token.ts";
import { loadTokenCounter } from "../../src/catalog/tokenizer.ts";
import { adminFetch, connect, hostPaid, loadMcp, replayUrl, seedTeam, text, waitFor } from "./helpers.ts";

const counter = await loadTokenCounter(env.ASSETS);
const tokens = (s: string) => counter.count(s);
/** What a host pays for a tools/list (shared/corpus/README.md, "host tokens"). */
const paid = await hostPaid();

/** Words that only tool arguments carry: none may be stored anywhere. */
const CANARY = "zebracanary";

interface Figures {
  sessions: number;
  direct: number;
  listed: number;
  answers: { lookups: number; searches: number; loads: number; executes: number };
  calls: { lookups: number; searches: number; loads: number; tools: number; executes: number };
}
interface Report {
  team: string;
  days: Array<Figures & { day: string }>;
  totals: Figures & { sent: number; saved: number; ratio: number | null };
}

async function usage(team: string, query = ""): Promise<Report> {
  const res = await adminFetch("GET", `/teams/${team}/usage${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** Waits until the team's report satisfies `done` (flushes run beside the answers), and returns it. */
async function usageWhen(team: string, done: (r: Report) => boolean): Promise<Report> {
  let report = await usage(team);
  await waitFor(async () => done((report = await usage(team))), { tries: 50, ms: 40 });
  return report;
}

const storageText = (stub: DurableObjectStub) =>
  runInDurableObject(stub, async (_o, state) => JSON.stringify([...(await state.storage.list())]));

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

const config = {
  mcp: {
    memory: { url: replayUrl("memory") },
    kube: { url: replayUrl("kubernetes"), description: "Kubernetes cluster: pods, deployments, services." },
  },
};

describe("usage per team", () => {
  it("records what a session could reach and what it was sent, by kind, and keeps no argument anywhere", async () => {
    const token = await seedTeam("usage-a", config);
    const { client, transport, sessionId } = await connect("usage-a", token);
    const first = (await client.listTools()).tools;
    const lookup = await client.callTool({ name: "discover_tool", arguments: { tool_name: "memory/read_graph" } });
    const search = await client.callTool({ name: "discover_tool", arguments: { query: `entities ${CANARY} observations` } });
    const load = await loadMcp(client, "kube");
    expect(load.isError, text(load)).toBeFalsy();
    const second = (await client.listTools()).tools;
    await client.listTools(); // the same list again: not counted again
    const call = await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/search_nodes", tool_input: { query: CANARY } } });
    expect(call.isError, text(call)).toBeFalsy();

    // Before the end: the session keeps numbers only.
    const session = env.SESSIONS.getByName(`usage-a/${sessionId}`);
    expect(await waitFor(async () => (await storageText(session)).includes('"tools":1'), { tries: 50, ms: 20 })).toBe(true);
    expect(await storageText(session)).not.toContain(CANARY);

    await transport.terminateSession();
    await client.close();
    const report = await usageWhen("usage-a", (r) => r.totals.calls.tools === 1);
    expect(report.team).toBe("usage-a");
    expect(report.days.map((d) => d.day)).toEqual([today()]);
    const day = report.days[0]!;
    expect(day.sessions).toBe(1);
    expect(day.calls).toEqual({ lookups: 1, searches: 1, loads: 1, tools: 1, executes: 0 });
    expect(day.listed).toBe(paid(first) + paid(second));
    expect(day.answers).toEqual({ lookups: tokens(text(lookup)), searches: tokens(text(search)), loads: tokens(text(load)), executes: 0 });
    // Everything the session reached (memory and, once loaded, kube) as direct definitions costs more than what it was sent.
    expect(day.direct).toBeGreaterThan(day.listed);
    expect(day.listed).toBeGreaterThan(0);
    const sent = day.listed + day.answers.lookups + day.answers.searches + day.answers.loads;
    expect(report.totals).toMatchObject({ sessions: 1, direct: day.direct, sent, saved: day.direct - sent });
    expect(report.totals.ratio).toBeCloseTo(sent / day.direct, 4);

    // The team's index: the session's entry is gone, one day of numbers is left (the team's and its token's share),
    // no argument text anywhere.
    const index = await runInDurableObject(env.TEAM_INDEX.getByName("usage-a"), async (_o, state) => [...(await state.storage.list())]);
    expect(index.map(([key]) => key)).toEqual([`usage-by:${today()}:t:${tokenId(token)}`, `usage:${today()}`]);
    expect(JSON.stringify(index)).not.toContain(CANARY);
    expect(JSON.stringify(report)).not.toContain(CANARY);
    // The ended session's storage is wiped, its unsent figures with it.
    expect(await runInDurableObject(session, async (_o, state) => (await state.storage.list()).size)).toBe(0);
  });

  it("counts a direct-view session's tool calls, and its lists as every definition it could reach", async () => {
    await seedTeam("usage-direct", { mcp: { memory: { url: replayUrl("memory") } } });
    const minted = await adminFetch("POST", "/teams/usage-direct/tokens", { view: "direct" });
    expect(minted.status, await minted.clone().text()).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    const { client, transport } = await connect("usage-direct", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("memory__search_nodes");
    // A raw request: the SDK client would check the replayed answer against the tool's output schema.
    const call = await client.request({ method: "tools/call", params: { name: "memory__search_nodes", arguments: { query: CANARY } } }, CallToolResultSchema);
    expect(call.isError, text(call)).toBeFalsy();
    const unknown = await client.callTool({ name: "memory__no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
    await transport.terminateSession();
    await client.close();
    const report = await usageWhen("usage-direct", (r) => r.totals.calls.tools === 1 && r.totals.sessions === 1);
    // One call of a tool the session has; the unknown name is not a tool call.
    expect(report.totals.calls).toEqual({ lookups: 0, searches: 0, loads: 0, tools: 1, executes: 0 });
    expect(report.totals.listed).toBe(report.totals.direct);
    expect(report.totals.direct).toBeGreaterThan(0);
    expect(JSON.stringify(report)).not.toContain(CANARY);
  });

  it("adds up the sessions of a team, and drops days past the kept window as new ones come", async () => {
    const token = await seedTeam("usage-b", { mcp: { memory: { url: replayUrl("memory") } } });
    // A day from long ago, as if left from before: the next addition deletes it.
    const index = env.TEAM_INDEX.getByName("usage-b");
    await runInDurableObject(index, (_o, state) => state.storage.put("usage:2020-01-01", { ...zero(), sessions: 7 }));
    const lists: number[] = [];
    for (let i = 0; i < 2; i++) {
      const { client, transport } = await connect("usage-b", token);
      lists.push(paid((await client.listTools()).tools));
      await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
      await transport.terminateSession();
      await client.close();
    }
    const report = await usageWhen("usage-b", (r) => r.totals.calls.tools === 2);
    expect(report.days).toHaveLength(1);
    expect(report.totals.sessions).toBe(2);
    expect(report.totals.calls).toEqual({ lookups: 0, searches: 0, loads: 0, tools: 2, executes: 0 });
    // Each session was sent its list: both count.
    expect(report.totals.listed).toBe(lists[0]! + lists[1]!);
    expect(report.totals.direct).toBeGreaterThan(0);
    expect(await runInDurableObject(index, (_o, state) => state.storage.get("usage:2020-01-01"))).toBeUndefined();
  });

  it("loses no count when the session object is evicted before its figures were sent", async () => {
    const token = await seedTeam("usage-c", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client, sessionId } = await connect("usage-c", token);
    const listed = paid((await client.listTools()).tools);
    await client.callTool({ name: "discover_tool", arguments: { tool_name: "memory/read_graph" } });
    await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    await client.close();
    const stub = env.SESSIONS.getByName(`usage-c/${sessionId}`);
    // Nothing went out yet (not at initialize, where the team's index is busy adding the session, and not within the
    // minute of activity): it all waits in the session's storage.
    expect(await waitFor(async () => (await storageText(stub)).includes('"tools":1'), { tries: 50, ms: 20 })).toBe(true);
    const atStart = await usage("usage-c");
    expect(atStart.totals.sessions).toBe(0);
    expect(atStart.totals.calls.tools).toBe(0);

    await evictDurableObject(stub);
    // A fresh instance: its alarm sends what the evicted one left in storage.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = await usage("usage-c");
    expect(after.totals).toMatchObject({ sessions: 1, listed, calls: { lookups: 1, searches: 0, loads: 0, tools: 1 } });
    expect(after.totals.direct).toBeGreaterThan(0);
    expect(after.totals.answers.lookups).toBeGreaterThan(0);

    // Resumed and ended, the session adds nothing twice (direct included: its catalogs did not grow).
    const again = await connect("usage-c", token, sessionId);
    await again.transport.terminateSession();
    await again.client.close();
    expect((await usage("usage-c")).totals).toEqual(after.totals);
  });

  it("answers the days asked for (1–90, default 30); refuses other values readably; 404 for an unknown team", async () => {
    await seedTeam("usage-d", { mcp: { memory: { url: replayUrl("memory") } } });
    const index = env.TEAM_INDEX.getByName("usage-d");
    await runInDurableObject(index, async (_o, state) => {
      await state.storage.put(`usage:${daysAgo(10)}`, { ...zero(), sessions: 3, direct: 1000, listed: 100 });
      await state.storage.put(`usage:${daysAgo(40)}`, { ...zero(), sessions: 5 });
    });
    expect((await usage("usage-d")).days.map((d) => d.day)).toEqual([daysAgo(10)]);
    expect((await usage("usage-d", "?days=5")).days).toEqual([]);
    expect((await usage("usage-d", "?days=90")).days.map((d) => d.day)).toEqual([daysAgo(40), daysAgo(10)]);
    const report = await usage("usage-d", "?days=11");
    expect(report.totals).toMatchObject({ sessions: 3, direct: 1000, listed: 100, sent: 100, saved: 900, ratio: 0.1 });
    expect((await usage("usage-d", "?days=5")).totals).toMatchObject({ sessions: 0, direct: 0, sent: 0, saved: 0, ratio: null });

    for (const bad of ["0", "91", "abc", "1.5", "", "-3", "1000"]) {
      const res = await adminFetch("GET", `/teams/usage-d/usage?days=${bad}`);
      expect(res.status, bad).toBe(400);
      const body = (await res.json()) as { error: string; issues: Array<{ path: string; message: string }> };
      expect(body.error).toBe("invalid_query");
      expect(body.issues[0]).toEqual({ path: "days", message: "days is a whole number from 1 to 90" });
    }

    const unknown = await adminFetch("GET", "/teams/usage-nobody/usage");
    const config = await adminFetch("GET", "/teams/usage-nobody/config");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(await config.json());
    expect((await adminFetch("GET", "/teams/usage-d/usage", undefined, {})).status).toBe(401);
    // The route is in the OpenAPI document.
    const doc = (await (await adminFetch("GET", "/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(doc.paths["/admin/teams/{team}/usage"]).toBeDefined();
  });
});

function zero(): Figures {
  return {
    sessions: 0,
    direct: 0,
    listed: 0,
    answers: { lookups: 0, searches: 0, loads: 0, executes: 0 },
    calls: { lookups: 0, searches: 0, loads: 0, tools: 0, executes: 0 },
  };
}
