// The 2026-07-28 era's tools/list in the meta view: discover_tool's description carries the team's catalog as a 2025
// session's does (eager tools, lazy servers under <mcp_servers> with the toolset's instructions), within the team's
// budget, the same bytes for every client and principal of the same view, and `ttlMs` no longer than the catalog
// cache's freshness. When an object of the team reads an eager upstream anew and finds its tools changed (the
// upstream's list_changed, or its catalog past that freshness), the list changes for every principal and the team's
// listen streams hear notifications/tools/list_changed; load_mcp never changes it.
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { tokenId } from "../../src/auth/token.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { LIST_TTL_MS } from "../../src/modern/server.ts";
import { CATALOG_FRESH_MS } from "../../src/store/catalog-cache.ts";
import { RETRY_FAILED_MS } from "../../src/upstream/startup.ts";
import { BASE, addToken, connect, discoverDescription, hostPaid, replayUrl, seedTeam, waitFor, workerFetch } from "./helpers.ts";

const GRAPH = "Knowledge graph memory: store entities, relations and observations.";

type Listed = { raw: string; tools: Array<{ name: string; description?: string }>; ttlMs: number };

/** A v2 client in automatic mode of its own (no state shared with any other), keeping the raw text of each answer to tools/list. */
async function modernClient(team: string, token: string) {
  const lists: Array<Promise<string>> = [];
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp`), {
    fetch: async (input, init) => {
      const response = await workerFetch(new Request(input, init));
      if (typeof init?.body === "string" && (JSON.parse(init.body) as { method?: string }).method === "tools/list") lists.push(response.clone().text());
      return response;
    },
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "list-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  /** One tools/list: the answer's message as it came (the data of its SSE message), and what it says. */
  const list = async (): Promise<Listed> => {
    await client.listTools();
    const body = await lists.at(-1)!;
    const raw = body.split("\n").find((l) => l.startsWith("data: "))!.slice("data: ".length);
    const result = (JSON.parse(raw) as { result: { tools: Listed["tools"]; ttlMs: number } }).result;
    return { raw, tools: result.tools, ttlMs: result.ttlMs };
  };
  return { client, list };
}

/** One tools/list by a client made for it and closed after. */
async function listedBy(team: string, token: string): Promise<Listed> {
  const { client, list } = await modernClient(team, token);
  try {
    return await list();
  } finally {
    await client.close();
  }
}

/** The team's listen stream, as a v2 client holds it: the tools list changes it hears. */
async function listening(team: string, token: string) {
  const { client } = await modernClient(team, token);
  const heard: unknown[] = [];
  client.setNotificationHandler("notifications/tools/list_changed", (n) => void heard.push(n));
  const subscription = await client.listen({ toolsListChanged: true });
  return { heard, close: async () => (await subscription.close(), await client.close()) };
}

/** A block of a catalog text (`<tools>…</tools>`), or "" when it has none. */
const block = (text: string, tag: string) => new RegExp(`^<${tag}>\\n[\\s\\S]*?\\n</${tag}>$`, "m").exec(text)?.[0] ?? "";

const description = (listed: Listed) => listed.tools[0]!.description!;

/** A tools/call straight to a growing replay route (no proxy in between): the route adds a tool the proxy is not told of. */
async function growBehindTheProxy(route: string): Promise<void> {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await fetch(replayUrl(route), {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } } }),
  });
  await init.text();
  const session = init.headers.get("mcp-session-id")!;
  const call = await fetch(replayUrl(route), {
    method: "POST",
    headers: { ...headers, "mcp-session-id": session },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_graph", arguments: {} } }),
  });
  expect(await call.text()).toContain("grew");
}

describe("the 2026-07-28 tools/list carries the team's catalog", () => {
  it("as a 2025 session's description does, the same bytes for two clients of one token and for another token; load_mcp changes nothing", async () => {
    const token = await seedTeam("ml-same", { mcp: { memory: { url: replayUrl("list-mem") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const a = await modernClient("ml-same", token);
    const b = await modernClient("ml-same", token);
    const first = await a.list();
    expect((await b.list()).raw).toBe(first.raw);
    expect((await listedBy("ml-same", await addToken("ml-same"))).raw).toBe(first.raw);
    expect(first.tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    expect(first.ttlMs).toBe(LIST_TTL_MS);
    expect(LIST_TTL_MS).toBeLessThanOrEqual(CATALOG_FRESH_MS);
    expect((await hostPaid())(first.tools)).toBeLessThanOrEqual(1500);
    // The catalog a 2025 session of the team shows: the same eager tools, the same lazy servers.
    const session = await connect("ml-same", token);
    const legacy = await discoverDescription(session.client);
    await session.client.close();
    expect(block(description(first), "tools")).toContain("memory:\n- add_observations: Add new observations");
    expect(block(description(first), "tools")).toBe(block(legacy, "tools"));
    expect(block(description(first), "mcp_servers")).toBe(block(legacy, "mcp_servers"));
    expect(description(first)).toContain("load_mcp with a server's name returns its tools and a toolset handle; pass toolset to discover_tool and use_tool");

    // A load goes into a toolset: the list stays as it was, for this client and the other.
    const loaded = (await a.client.callTool({ name: "load_mcp", arguments: { mcp_name: "lazy" } })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(loaded.isError).toBeFalsy();
    expect(loaded.structuredContent?.["toolset"]).toMatch(/^[A-Za-z0-9_-]{22}\.ts2\./);
    expect((await a.list()).raw).toBe(first.raw);
    expect((await b.list()).raw).toBe(first.raw);
    await Promise.all([a.client.close(), b.client.close()]);
  });

  it("keeps the whole list within the team's budget, the largest server shortened first", async () => {
    const servers = { gitlab: { url: replayUrl("gitlab") }, kubernetes: { url: replayUrl("kubernetes") }, memory: { url: replayUrl("list-mem") } };
    const token = await seedTeam("ml-budget", { mcp: servers });
    const listed = await listedBy("ml-budget", token);
    expect((await hostPaid())(listed.tools)).toBeLessThanOrEqual(1500);
    expect(description(listed)).toMatch(/^gitlab \(118 tools, names only\): |^gitlab: 118 tools — /m);
    expect(description(listed)).toContain("discover_tool with server alone lists one's tools");
    expect((await listedBy("ml-budget", await addToken("ml-budget"))).raw).toBe(listed.raw);
  });

  it("tells clients to keep a list that shows an upstream unavailable no longer than the next retry", async () => {
    const token = await seedTeam("ml-down", { mcp: { memory: { url: replayUrl("list-mem") }, gone: { url: "http://127.0.0.1:1/mcp" } } });
    const listed = await listedBy("ml-down", token);
    expect(description(listed)).toMatch(/^gone: unavailable — /m);
    expect(listed.ttlMs).toBe(RETRY_FAILED_MS);
  });
});

describe("the 2026-07-28 tools/list follows the team's eager catalogs", () => {
  it("an upstream's list_changed read anew by one principal's object changes every principal's list and reaches the listen streams", async () => {
    const token = await seedTeam("ml-grow", { mcp: { grow: { url: replayUrl("list-grow") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const other = await addToken("ml-grow");
    const before = await listedBy("ml-grow", token);
    expect((await listedBy("ml-grow", other)).raw).toBe(before.raw);
    expect(description(before)).not.toContain("- added_");
    const stream = await listening("ml-grow", token);

    // The call makes the upstream add a tool and say so (list_changed, on the call's stream).
    const { client } = await modernClient("ml-grow", token);
    const called = (await client.callTool({ name: "use_tool", arguments: { tool_name: "grow/read_graph", tool_input: {} } })) as { isError?: boolean };
    expect(called.isError).toBeFalsy();
    await client.close();
    expect(await waitFor(() => stream.heard.length >= 1)).toBe(true);

    const after = await listedBy("ml-grow", token);
    expect(description(after)).toMatch(/^- added_\d+: Added by a call$/m);
    // The other principal's object takes the team's newer reading: the same bytes.
    expect((await listedBy("ml-grow", other)).raw).toBe(after.raw);
    // Told once, however many objects read the same change.
    expect(stream.heard).toHaveLength(1);
    await stream.close();
  });

  it("a catalog past the cache's freshness is read anew at the next list, served as it was meanwhile; a change reaches the listen streams", async () => {
    const token = await seedTeam("ml-stale", { mcp: { stale: { url: replayUrl("list-stale") } } });
    const before = await listedBy("ml-stale", token);
    const stream = await listening("ml-stale", token);
    // The upstream changes without telling anyone the proxy could hear.
    await growBehindTheProxy("list-stale");
    // What CATALOG_FRESH_MS passing does: the team's reading of it is that old, and the principal's object has let its
    // runtime go (an idle object does; its records stay in storage).
    // The team's reading as the 2026 era's objects make it (keyed by the client capabilities they declare upstream).
    const keys = (await env.TEAMS.list({ prefix: `${kvKeys.catalog("ml-stale", "stale")}/` })).keys.map((k) => k.name);
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    const entry = JSON.parse((await env.TEAMS.get(key))!) as Record<string, unknown>;
    const long = new Date(Date.now() - 2 * CATALOG_FRESH_MS).toISOString();
    await env.TEAMS.put(key, JSON.stringify({ ...entry, savedAt: long, checkedAt: long }));
    await evictDurableObject(env.SESSIONS.getByName(`ml-stale/p.${tokenId(token)}`));

    expect((await listedBy("ml-stale", token)).raw).toBe(before.raw);
    expect(await waitFor(() => stream.heard.length >= 1)).toBe(true);
    expect(description(await listedBy("ml-stale", token))).toMatch(/^- added_\d+: Added by a call$/m);
    // The team's reading is current again.
    const renewed = JSON.parse((await env.TEAMS.get(key))!) as { checkedAt: string };
    expect(Date.now() - Date.parse(renewed.checkedAt)).toBeLessThan(CATALOG_FRESH_MS);
    await stream.close();
  });
});
