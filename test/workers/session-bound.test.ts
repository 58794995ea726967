// A principal's live sessions are bounded (MAX_SESSIONS_PER_PRINCIPAL, here its default): one token opening session
// after session ends its own least recently used idle ones, so the team's index, the upstream sessions and an admin
// reload's fan-out stay bounded; when every one is answering a call the next is refused. Other principals are not affected.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SETTING_DEFAULTS } from "../../src/lib/settings.ts";
import { BASE, addToken, adminFetch, initializeBody, post, releaseGate, replayStats, replayUrl, rpcText, seedTeam, sessionStatus, waitFor, workerFetch } from "./helpers.ts";

const BOUND = SETTING_DEFAULTS.maxSessionsPerPrincipal;
const MODERN = "2026-07-28";

/** A raw initialize (no GET stream, as a host that went away leaves it); the session's id. */
async function start(team: string, token: string): Promise<string> {
  const res = await post(team, initializeBody, { authorization: `Bearer ${token}` });
  expect(res.status, await res.clone().text()).toBe(200);
  await res.body?.cancel();
  return res.headers.get("mcp-session-id")!;
}

/** The session's standalone GET stream, held open until the host lets it go. */
async function holdStream(team: string, token: string, sessionId: string): Promise<{ res: Response; release: () => Promise<void> }> {
  const controller = new AbortController();
  const res = await workerFetch(`${BASE}/t/${team}/mcp`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  return {
    res,
    release: async () => {
      controller.abort();
      await res.body?.cancel().catch(() => {});
    },
  };
}

const listed = (team: string) => env.TEAM_INDEX.getByName(team).list();

describe("live sessions per principal", () => {
  it(`one token opening ${BOUND + 10} sessions keeps ${BOUND}: each past the bound ends its least recently used idle one, its upstream session closed; an admin reload reaches the live ones only`, async () => {
    const team = "caps-many";
    const bystander = await seedTeam(team, { mcp: { eager: { url: replayUrl("caps-eager") } } });
    const token = await addToken(team);
    // Another member's session, the oldest of the team: the token's sessions never end it.
    const theirs = await start(team, bystander);
    const ours: string[] = [];
    for (let i = 0; i < BOUND + 10; i++) {
      const id = await start(team, token);
      // Its first tools/list waits for the eager upstream: every session holds an upstream session.
      expect(await sessionStatus(team, token, id)).toBe(200);
      ours.push(id);
    }
    expect((await listed(team)).sort()).toEqual([theirs, ...ours.slice(10)].sort());
    for (const id of ours.slice(0, 10)) expect(await sessionStatus(team, token, id)).toBe(404);
    expect(await sessionStatus(team, bystander, theirs)).toBe(200);
    for (const id of ours.slice(10)) expect(await sessionStatus(team, token, id)).toBe(200);
    // Each ended session closed its upstream session: the upstream holds one per live session.
    expect(await waitFor(async () => {
      const stats = await replayStats("caps-eager");
      return stats.sessions - stats.deletes === BOUND + 1;
    })).toBe(true);
    const reload = await adminFetch("POST", `/teams/${team}/sessions/reload`);
    expect(await reload.json()).toEqual({ sessions: BOUND + 1 });
  }, 120_000); // thirty sessions one after the other, each with its upstream connect: slow on a busy machine

  it("at the bound, a session whose only use is its host's open GET stream ends for a new one (the least recently used, its stream closed) when none serves nothing", async () => {
    const team = "caps-streams";
    const token = await seedTeam(team, { mcp: { memory: { url: replayUrl("memory") } } });
    const ids: string[] = [];
    const streams: Response[] = [];
    const held: Array<() => Promise<void>> = [];
    for (let i = 0; i < BOUND; i++) {
      const id = await start(team, token);
      const hold = await holdStream(team, token, id);
      held.push(hold.release);
      streams.push(hold.res);
      ids.push(id);
    }
    const next = await start(team, token);
    expect(await sessionStatus(team, token, ids[0]!)).toBe(404);
    expect(await sessionStatus(team, token, ids[1]!)).toBe(200);
    // The ended session's stream ended with it: its host reads to the end (the test's time-out says if it never does).
    const read = streams[0]!.body!.getReader();
    for (let chunk = await read.read(); !chunk.done; chunk = await read.read());
    expect((await listed(team)).sort()).toEqual([...ids.slice(1), next].sort());
    await Promise.all(held.map((release) => release()));
  });

  it("refuses a new session with 429 when every one of the token's sessions is answering a call, naming the bound and DELETE; another token still starts one, and a call answered makes room", async () => {
    const team = "caps-busy";
    const token = await seedTeam(team, { mcp: { up: { url: replayUrl("caps-calls") } } });
    const ids: string[] = [];
    const calls: Array<Promise<string>> = [];
    for (let i = 0; i < BOUND; i++) {
      const id = await start(team, token);
      const headers = { authorization: `Bearer ${token}`, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" };
      // The call waits at the upstream's gate: the session is answering it meanwhile.
      calls.push(post(team, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "use_tool", arguments: { tool_name: "up/read_graph" } } }, headers).then((r) => r.text()));
      ids.push(id);
      expect(await waitFor(async () => ((await replayStats("caps-calls")).methods["tools/call"] ?? 0) >= i + 1)).toBe(true);
    }

    const refused = await post(team, initializeBody, { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    const body = (await refused.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toContain(`may have ${BOUND} (MAX_SESSIONS_PER_PRINCIPAL)`);
    expect(body.error.message).toContain("DELETE");
    expect((await listed(team)).sort()).toEqual([...ids].sort());

    // The bound is the token's: another token of the team starts a session.
    const other = await addToken(team);
    const theirs = await start(team, other);

    // The calls are answered: the sessions serve nothing, and the least recently used ends for the next one.
    expect(await releaseGate("caps-calls")).toBe(BOUND);
    for (const answered of await Promise.all(calls)) expect(answered).toContain("read_graph");
    const next = await start(team, token);
    expect(await sessionStatus(team, token, ids[0]!)).toBe(404);
    expect((await listed(team)).sort()).toEqual([...ids.slice(1), next, theirs].sort());
  });

  it("a 2026-era token's toolsets count as its sessions: load_mcp without a handle past the bound ends the least recently used idle toolset", async () => {
    const team = "caps-toolsets";
    const token = await seedTeam(team, { mcp: { lazy: { url: replayUrl("caps-lazy"), description: "A lazy server." } } });
    const call = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const res = await post(
        team,
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } } },
        { authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name },
      );
      expect(res.status).toBe(200);
      return rpcText(res);
    };
    const handles: string[] = [];
    for (let i = 0; i < BOUND + 3; i++) handles.push(/"toolset":"([A-Za-z0-9_-]{22}\.ts2\.[^"]+)"/.exec(await call("load_mcp", { mcp_name: "lazy" }))![1]!);
    const toolsets = (await listed(team)).filter((id) => id.startsWith("ts."));
    expect(toolsets).toHaveLength(BOUND);
    // The first toolset ended for a newer one: its handle still checks, reaches an empty toolset, and is told to load again.
    const stale = JSON.parse(await call("use_tool", { tool_name: "lazy/read_graph", tool_input: {}, toolset: handles[0] })) as { result: { isError?: boolean; content: Array<{ text: string }> } };
    expect(stale.result.isError).toBe(true);
    expect(stale.result.content[0]!.text).toContain(`is not loaded in this toolset: call load_mcp {"mcp_name":"lazy","toolset":"${handles[0]}"}`);
    // The newest still has its server.
    const fresh = JSON.parse(await call("use_tool", { tool_name: "lazy/read_graph", tool_input: {}, toolset: handles.at(-1) })) as { result: { isError?: boolean } };
    expect(fresh.result.isError).toBeFalsy();
  }, 60_000);
});
