// What one principal may hold, through `wrangler dev` with small bounds: one token opening session after session (each
// initializing the team's eager upstream) keeps MAX_SESSIONS_PER_PRINCIPAL of them, its least recently used idle ones
// ended, so an admin reload reaches that many; sessions whose hosts only hold a GET stream end for a new one too, and
// with every one answering a call the next is refused. A v2 client's listen streams
// are bounded per token while another token of the team still listens, and each ends gracefully at its lifetime.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { E2E_SECRETS_KEY, provisionByAdmin } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { waitFor } from "../shared/wait.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";

const ADMIN_TOKEN = "e2e-caps-admin";
const SESSIONS = 3;
const STREAMS = 2;
const LIFETIME_S = 5;
const TEAM = "caps";

let stack: DevStack;
let token: string;
let mate: string;
const proxyUrl = () => `http://127.0.0.1:${stack.port}`;

beforeAll(async () => {
  stack = await startDevStack({
    name: "caps",
    replay: {
      eager: { catalog: loadCorpus("modelcontextprotocol__server-memory") },
      // Calls wait at its gate until the test releases them: a session answering one is in use.
      gated: { catalog: loadCorpus("modelcontextprotocol__server-memory"), faults: { "tools/call": { kind: "gate" } } },
    },
    vars: {
      SESSION_KEY: "e2e-session-key",
      SECRETS_KEY: E2E_SECRETS_KEY,
      ADMIN_TOKEN,
      MAX_SESSIONS_PER_PRINCIPAL: String(SESSIONS),
      LISTEN_STREAMS_PER_PRINCIPAL: String(STREAMS),
      LISTEN_STREAM_MAX_SECONDS: String(LIFETIME_S),
    },
    provision: () => {},
  });
  const config = { mcp: { eager: { url: stack.replay.url("eager") }, gated: { url: stack.replay.url("gated") } } };
  token = await provisionByAdmin(proxyUrl(), ADMIN_TOKEN, TEAM, config);
  mate = await provisionByAdmin(proxyUrl(), ADMIN_TOKEN, TEAM, config, "mate");
}, 120_000);

afterAll(() => stack?.stop());

/** A raw 2025 request; `session` once there is one. */
function send(as: string, body: unknown, session?: string, method = "POST"): Promise<Response> {
  return fetch(stack.mcpUrl(TEAM), {
    method,
    headers: {
      authorization: `Bearer ${as}`,
      accept: "application/json, text/event-stream",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const initialize = (as: string) =>
  send(as, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e-caps", version: "1" } } });

/** A session started as a host that then goes away leaves it: initialize, and a tools/list that waits for the eager upstream. */
async function start(as: string): Promise<string> {
  const res = await initialize(as);
  expect(res.status, await res.clone().text()).toBe(200);
  await res.body?.cancel();
  const id = res.headers.get("mcp-session-id")!;
  expect(await status(as, id)).toBe(200);
  return id;
}

async function status(as: string, session: string): Promise<number> {
  const res = await send(as, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
  await res.text();
  return res.status;
}

async function reload(): Promise<number> {
  const res = await fetch(`${proxyUrl()}/admin/teams/${TEAM}/sessions/reload`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return ((await res.json()) as { sessions: number }).sessions;
}

describe("sessions per principal", () => {
  it(`one token starting ${SESSIONS * 3} sessions keeps ${SESSIONS}: the oldest end with their upstream sessions, an admin reload reaches ${SESSIONS}; hosts holding streams make room, all answering calls, the next is refused`, async () => {
    // The route's stats are one live object: its figures are copied.
    const { sessions: opened, deletes: closed } = stack.replay.stats("eager");
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS * 3; i++) ids.push(await start(token));
    for (const id of ids.slice(0, -SESSIONS)) expect(await status(token, id)).toBe(404);
    const live = ids.slice(-SESSIONS);
    for (const id of live) expect(await status(token, id)).toBe(200);
    expect(await reload()).toBe(SESSIONS);
    expect(await waitFor(() => {
      const after = stack.replay.stats("eager");
      return after.sessions - opened - (after.deletes - closed) === SESSIONS;
    }, { tries: 100, ms: 50 })).toBe(true);

    // Every live session's host holds its GET stream, and none answers a call: the next starts, the oldest ending
    // with its stream.
    const streams = await Promise.all(live.map((id) => send(token, undefined, id, "GET")));
    for (const stream of streams) expect(stream.status).toBe(200);
    const newest = await start(token);
    expect(await status(token, live[0]!)).toBe(404);
    await streams[0]!.text();
    await Promise.all(streams.slice(1).map((s) => s.body?.cancel()));

    // Every live session answering a call (held at the upstream's gate): the next is refused, naming the bound.
    const busy = [...live.slice(1), newest];
    const before = stack.replay.stats("gated").methods["tools/call"] ?? 0;
    const calls = busy.map((id) =>
      send(token, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "use_tool", arguments: { tool_name: "gated/read_graph" } } }, id).then((r) => r.text()),
    );
    expect(await waitFor(() => (stack.replay.stats("gated").methods["tools/call"] ?? 0) - before === SESSIONS, { tries: 200, ms: 50 })).toBe(true);
    const refused = await initialize(token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`may have ${SESSIONS} (MAX_SESSIONS_PER_PRINCIPAL)`);
    // Another token of the team is not held back.
    expect((await initialize(mate)).status).toBe(200);
    // A host ends its session with DELETE: room for the next.
    expect((await send(token, undefined, busy[0], "DELETE")).status).toBe(200);
    expect((await initialize(token)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${stack.replay.port}/__release/gated`, { method: "POST" })).status).toBe(200);
    // The calls of the sessions still live are answered (the one whose host ended its session went with it).
    for (const answered of (await Promise.all(calls)).slice(1)) expect(answered).toContain("read_graph");
  });
});

describe("listen streams per principal", () => {
  const modernClient = async (as: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl(TEAM)), { requestInit: { headers: { Authorization: `Bearer ${as}` } } });
    const client = new Client({ name: "e2e-caps-listener", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    return client;
  };

  it(`a token holds ${STREAMS} streams, the next refused while another token listens; each ends gracefully at ${LIFETIME_S} s and the host listens again`, async () => {
    const client = await modernClient(token);
    const other = await modernClient(mate);
    const held = [];
    for (let i = 0; i < STREAMS; i++) held.push(await client.listen({ toolsListChanged: true }));
    const refused = await client.listen({ toolsListChanged: true }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).message).toContain(`already holds ${STREAMS} listen streams`);
    const theirs = await other.listen({ toolsListChanged: true });
    expect(theirs.honoredFilter).toEqual({ toolsListChanged: true });

    // The server ends each at its lifetime with the listen request's result: the client hears a graceful close.
    expect(await Promise.all(held.map((s) => s.closed))).toEqual(held.map(() => "graceful"));
    const again = await client.listen({ toolsListChanged: true });
    expect(again.honoredFilter).toEqual({ toolsListChanged: true });
    await Promise.all([again.close(), theirs.close()]);
    await Promise.all([client.close(), other.close()]);
  });
});
