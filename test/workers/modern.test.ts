// The 2026-07-28 era on the same URL: the v2 SDK client in automatic mode, and raw requests for every error of the
// era's checks. Toolset handles carry load_mcp's servers across requests without a session.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { app } from "../../src/edge/app.ts";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { mintToolsetHandle } from "../../src/edge/mcp/toolset-handle.ts";
import { tokenId } from "../../src/auth/token.ts";
import { LIST_TTL_MS } from "../../src/modern/server.ts";
import { BASE, adminFetch, post, replayStats, replayUrl, rpcText, seedTeam, addToken, text, waitFor, workerFetch } from "./helpers.ts";

const GRAPH = "Knowledge graph memory: store entities, relations and observations.";
const MODERN = "2026-07-28";

/** A v2 client in automatic mode, recording every request it sends and every answer's headers. */
async function modernClient(team: string, token: string, through: typeof workerFetch = workerFetch, query = "") {
  const sent: Array<{ method: string; body: unknown; headers: Headers }> = [];
  const answers: Headers[] = [];
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = request.method === "POST" ? await request.clone().json() : undefined;
    sent.push({ method: request.method, body, headers: request.headers });
    const response = await through(request);
    answers.push(response.headers);
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp${query}`), {
    fetch: recording,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  return { client, sent, answers };
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<{ isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> }>;

/** A raw 2026-era POST: the envelope in `_meta`, the headers derived from the body unless overridden; `query` on the URL. */
function modernPost(team: string, token: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, meta?: Record<string, unknown>, query = "") {
  const envelope = meta ?? { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const name: Record<string, string> = typeof params["name"] === "string" ? { "mcp-name": params["name"] } : {};
  return post(team, { jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: envelope } }, {
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...name,
    ...headers,
  }, query);
}

describe("2026-07-28 clients", () => {
  it("a v2 client in automatic mode negotiates the modern era and gets the meta-tools, the catalog in discover_tool's description, with no session", async () => {
    const token = await seedTeam("mod-basic", { mcp: { memory: { url: replayUrl("memory") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const { client, sent, answers } = await modernClient("mod-basic", token);
    expect(client.getProtocolEra()).toBe("modern");
    expect(sent[0]!.body).toMatchObject({ method: "server/discover" });
    expect(sent.some((s) => (s.body as { method?: string } | undefined)?.method === "initialize")).toBe(false);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    expect(tools[2]!.description).toContain("valid for");
    // The catalog as a 2025 session shows it: eager tools by server, lazy servers with the toolset's instructions.
    expect(tools[0]!.description).toContain("memory:\n- add_observations: Add new observations");
    expect(tools[0]!.description).toContain("<mcp_servers>\nlazy: " + GRAPH);
    expect(tools[0]!.description).toContain("load_mcp with a server's name returns its tools and a toolset handle");
    expect(answers.every((h) => h.get("mcp-session-id") === null)).toBe(true);
    await client.close();
  });

  it("tools/list carries resultType, cache fields and serverInfo, and is byte-identical across connections and after load_mcp", async () => {
    const token = await seedTeam("mod-cache", { mcp: { memory: { url: replayUrl("memory") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const list = async () => rpcText(await modernPost("mod-cache", token, "tools/list"));
    const first = await list();
    const parsed = JSON.parse(first).result;
    expect(parsed.resultType).toBe("complete");
    expect(parsed.cacheScope).toBe("private");
    expect(parsed.ttlMs).toBe(LIST_TTL_MS);
    expect(parsed._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "dynmcp-edge" });
    const { client } = await modernClient("mod-cache", token);
    const loaded = await call(client, "load_mcp", { mcp_name: "lazy" });
    expect(loaded.isError).toBeFalsy();
    expect(await list()).toBe(first);
    // Another token of the same team: the same list.
    const other = await addToken("mod-cache");
    expect(await rpcText(await modernPost("mod-cache", other, "tools/list"))).toBe(first);
    await client.close();
  });

  it("discover_tool without arguments answers the live catalog: eager tools and loadable servers, as text and structured", async () => {
    const token = await seedTeam("mod-cat", { mcp: { memory: { url: replayUrl("memory") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const { client } = await modernClient("mod-cat", token);
    const r = await call(client, "discover_tool", {});
    expect(r.isError).toBeFalsy();
    expect(text(r)).toContain("memory:\n- add_observations: Add new observations");
    expect(text(r)).toContain("<mcp_servers>\nlazy: " + GRAPH);
    expect(text(r)).toContain("load_mcp with a server's name returns its tools and a toolset handle");
    const structured = r.structuredContent as { servers: Array<{ name: string; tools?: string[] }>; loadable: Array<{ name: string }> };
    expect(structured.servers.find((s) => s.name === "memory")?.tools).toContain("read_graph");
    expect(structured.loadable.map((s) => s.name)).toEqual(["lazy"]);
    // Lookup and search as in a session.
    expect(text(await call(client, "discover_tool", { tool_name: "memory/read_graph" }))).toContain("read_graph");
    expect((await call(client, "discover_tool", { query: "knowledge graph" })).structuredContent).toMatchObject({ query: "knowledge graph" });
    expect(text(await call(client, "use_tool", { tool_name: "memory/read_graph", tool_input: {} }))).toContain('"tool":"read_graph"');
    await client.close();
  });

  it("load_mcp returns a toolset handle that a fresh connection passes back to reach the server's tools", async () => {
    const token = await seedTeam("mod-ts", { mcp: { memory: { url: replayUrl("memory") }, lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const a = await modernClient("mod-ts", token);
    // Without a handle: which load_mcp to make.
    const before = await call(a.client, "use_tool", { tool_name: "lazy/read_graph", tool_input: {} });
    expect(before.isError).toBe(true);
    expect(text(before)).toContain('call load_mcp {"mcp_name":"lazy"}');
    const loaded = await call(a.client, "load_mcp", { mcp_name: "lazy" });
    const toolset = loaded.structuredContent?.["toolset"] as string;
    expect(toolset).toMatch(/^[A-Za-z0-9_-]{22}\.ts2\./);
    expect(Object.keys(loaded.structuredContent?.["tools"] as object)).toContain("read_graph");
    expect(text(loaded)).toContain('Its tools, called with use_tool as "lazy/<tool>":\n- add_observations: ');
    // The handle in plain sight: the structured answer's first key, and the text's first line names it.
    expect(Object.keys(loaded.structuredContent ?? {})[0]).toBe("toolset");
    expect(text(loaded).split("\n")[0]).toBe(`Loaded "lazy" into toolset "${toolset}": pass "toolset": "${toolset}" with use_tool and discover_tool to reach its tools.`);
    // A search narrowed to the server without the handle names both ways on, and each works.
    const forgotten = await call(a.client, "discover_tool", { query: "read the graph", server: "lazy" });
    expect(forgotten.isError).toBe(true);
    expect(text(forgotten)).toBe(`The server "lazy" is lazy and not in this request's toolset: pass the \`toolset\` that load_mcp returned, or call load_mcp {"mcp_name":"lazy"}.`);
    const found = await call(a.client, "discover_tool", { query: "read the graph", server: "lazy", toolset });
    expect(found.isError).toBeFalsy();
    expect((found.structuredContent?.["tools"] as Array<{ name: string }>).map((t) => t.name)).toContain("lazy/read_graph");
    // So does the server's index: without the handle the era's hint, with it (as load_mcp's answer says) every tool.
    expect(text(await call(a.client, "discover_tool", { server: "lazy" }))).toBe(text(forgotten));
    expect(text(loaded)).toContain('With that toolset, discover_tool {"server":"lazy"} answers this list again');
    const index = await call(a.client, "discover_tool", { server: "lazy", toolset });
    expect(index.isError).toBeFalsy();
    expect(Object.keys(index.structuredContent?.["tools"] as object)).toEqual(Object.keys(loaded.structuredContent?.["tools"] as object));
    const unknown = await call(a.client, "discover_tool", { server: "nowhere", toolset });
    expect(text(unknown)).toBe('No loaded server is named "nowhere"; loaded: memory, lazy.');
    await a.client.close();
    const b = await modernClient("mod-ts", token);
    const called = await call(b.client, "use_tool", { tool_name: "lazy/read_graph", tool_input: {}, toolset });
    expect(called.isError).toBeFalsy();
    expect(text(called)).toContain('"tool":"read_graph"');
    const catalog = await call(b.client, "discover_tool", { toolset });
    expect(text(catalog)).toContain("lazy:\n- add_observations");
    expect(catalog.structuredContent?.["toolset"]).toBe(toolset);
    // Loading again into the same toolset is idempotent (the same handle, one upstream connection).
    const again = await call(b.client, "load_mcp", { mcp_name: "lazy", toolset });
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent?.["toolset"]).toBe(toolset);
    // Without the handle the principal's catalog still offers the server as loadable.
    expect(text(await call(b.client, "discover_tool", {}))).toContain("<mcp_servers>\nlazy:");
    await b.client.close();
  });

  it("refuses a foreign, tampered, malformed or expired handle with a clear tool error", async () => {
    const token = await seedTeam("mod-bad", { mcp: { lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } });
    const { client } = await modernClient("mod-bad", token);
    const loaded = await call(client, "load_mcp", { mcp_name: "lazy" });
    const toolset = loaded.structuredContent?.["toolset"] as string;
    const refused = async (c: Client, handle: string) => {
      const r = await call(c, "use_tool", { tool_name: "lazy/read_graph", tool_input: {}, toolset: handle });
      expect(r.isError).toBe(true);
      expect(errorKindOf(r)).toEqual({ kind: "invalid_toolset" });
      return text(r);
    };
    // Another token of the same team, and a token of another team.
    const mate = await modernClient("mod-bad", await addToken("mod-bad"));
    expect(await refused(mate.client, toolset)).toContain("not issued to this token");
    const stranger = await modernClient("mod-bad-other", await seedTeam("mod-bad-other", { mcp: { lazy: { url: replayUrl("ts-lazy"), description: GRAPH } } }));
    expect(await refused(stranger.client, toolset)).toContain("not issued to this token");
    // One character changed in the nonce.
    const tampered = toolset.slice(0, 5) + (toolset[5] === "A" ? "B" : "A") + toolset.slice(6);
    expect(await refused(client, tampered)).toContain("not issued to this token");
    expect(await refused(client, "ts1.nonsense")).toContain("malformed");
    // A handle minted an hour and a day ago with the proxy's own key: expired, and says when.
    const who = { team: "mod-bad", tokenId: tokenId(token)! };
    const old = await mintToolsetHandle(env.SESSION_KEY!, who, 3600, Date.now() - 25 * 3600_000);
    expect(await refused(client, old.handle)).toMatch(/expired at \d{4}-\d\d-\d\dT/);
    for (const c of [client, mate.client, stranger.client]) await c.close();
  });

  it("keeps the load semantics per toolset: a failed load is atomic and retried on the same toolset; the third failure evicts", async () => {
    const token = await seedTeam("mod-strikes", { mcp: { broken: { url: replayUrl("ts-fail"), description: "Never loads." } } });
    const { client } = await modernClient("mod-strikes", token);
    const first = await call(client, "load_mcp", { mcp_name: "broken" });
    expect(first.isError).toBe(true);
    expect(errorKindOf(first)).toMatchObject({ kind: "load_failed" });
    const toolset = first.structuredContent?.["toolset"] as string;
    expect(text(first)).toContain(`call load_mcp with toolset "${toolset}"`);
    expect(errorKindOf(await call(client, "load_mcp", { mcp_name: "broken", toolset }))).toMatchObject({ kind: "load_failed" });
    const third = await call(client, "load_mcp", { mcp_name: "broken", toolset });
    expect(errorKindOf(third)).toMatchObject({ kind: "evicted" });
    expect(errorKindOf(await call(client, "load_mcp", { mcp_name: "broken", toolset }))).toMatchObject({ kind: "unknown_server" });
    expect((await replayStats("ts-fail")).requests).toBeGreaterThan(0);
    await client.close();
  });
});

/** A JSON-RPC answer, whether it came as JSON or as the one message of an SSE stream. */
async function answerOf(res: Response): Promise<{ error?: { code: number; message: string; data?: unknown }; result?: unknown }> {
  const body = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(body);
  const data = body.split("\n").filter((l) => l.startsWith("data: ")).at(-1);
  return JSON.parse(data!.slice("data: ".length));
}

describe("2026-07-28 checks", () => {
  it("answers each rung of the era's checks with its code and status", async () => {
    const token = await seedTeam("mod-ladder", { mcp: { memory: { url: replayUrl("memory") } } });
    const error = async (res: Response) => ({ status: res.status, code: (await answerOf(res)).error?.code });
    // Header and body disagree: the method, the version, the tool name.
    expect(await error(await modernPost("mod-ladder", token, "tools/list", {}, { "mcp-method": "prompts/list" }))).toEqual({ status: 400, code: -32020 });
    expect(await error(await modernPost("mod-ladder", token, "tools/call", { name: "use_tool", arguments: {} }, { "mcp-name": "discover_tool" }))).toEqual({ status: 400, code: -32020 });
    // A version nobody serves: -32022 naming the supported ones.
    const unsupported = await modernPost("mod-ladder", token, "tools/list", {}, { "mcp-protocol-version": "2027-01-01" }, {
      "io.modelcontextprotocol/protocolVersion": "2027-01-01",
      "io.modelcontextprotocol/clientCapabilities": {},
    });
    expect(unsupported.status).toBe(400);
    const body = (await unsupported.json()) as { error: { code: number; data: { supported: string[] } } };
    expect(body.error.code).toBe(-32022);
    expect(body.error.data.supported).toContain(MODERN);
    // The envelope without its required client capabilities: -32602.
    expect(await error(await modernPost("mod-ladder", token, "tools/list", {}, {}, { "io.modelcontextprotocol/protocolVersion": MODERN }))).toMatchObject({ code: -32602 });
    // Unknown methods and ping (gone in this era): 404 -32601.
    expect(await error(await modernPost("mod-ladder", token, "no/such"))).toEqual({ status: 404, code: -32601 });
    expect(await error(await modernPost("mod-ladder", token, "ping"))).toEqual({ status: 404, code: -32601 });
    // A resource nobody offers: -32602 in this era (a 2025 session gets -32002), in-band.
    expect(await error(await modernPost("mod-ladder", token, "resources/read", { uri: "memo://nowhere" }, { "mcp-name": "memo://nowhere" }))).toEqual({ status: 200, code: -32602 });
  });

  it("answers server/discover with and without the envelope; the envelope-less answer names both eras' versions", async () => {
    const token = await seedTeam("mod-disc", { mcp: { memory: { url: replayUrl("memory") } } });
    const modern = (await (await modernPost("mod-disc", token, "server/discover")).json()) as { result: Record<string, unknown> };
    expect(modern.result).toMatchObject({ supportedVersions: [MODERN], resultType: "complete", cacheScope: "private" });
    expect(modern.result["capabilities"]).toMatchObject({ tools: { listChanged: true } });
    const bare = await post("mod-disc", { jsonrpc: "2.0", id: 1, method: "server/discover" }, { authorization: `Bearer ${token}` });
    expect(bare.status).toBe(200);
    const result = ((await bare.json()) as { result: { supportedVersions: string[]; cacheScope: string } }).result;
    expect(result.supportedVersions[0]).toBe(MODERN);
    expect(result.supportedVersions).toContain("2025-11-25");
    expect(result.cacheScope).toBe("private");
  });
});

describe("views in the 2026-07-28 era", () => {
  const views = /\?view=meta or \?view=code, or no view/;

  it("refuses ?view=direct with 400 and a JSON-RPC error naming the views it serves, whatever the method", async () => {
    const token = await seedTeam("mod-direct", { mcp: { memory: { url: replayUrl("memory") } } });
    for (const [method, params] of [["tools/list", {}], ["server/discover", {}], ["tools/call", { name: "use_tool", arguments: { tool_name: "memory/read_graph" } }]] as const) {
      const res = await modernPost("mod-direct", token, method, params, {}, undefined, "?view=direct");
      expect(res.status, method).toBe(400);
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.message).toMatch(/^\?view=direct is not served in the 2026-07-28 era/);
      expect(body.error.message).toMatch(views);
    }
    // Where code mode is off, the era serves meta alone, and says so.
    const off = await app.fetch(
      new Request(`${BASE}/t/mod-direct/mcp?view=direct`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } } }),
      }),
      { ...env, CODE_MODE: "off" },
      createExecutionContext(),
    );
    expect(off.status).toBe(400);
    const message = ((await off.json()) as { error: { message: string } }).error.message;
    expect(message).toContain("this era serves ?view=meta (code mode is off on this deployment)");
    expect(message).not.toContain("?view=code");
    // A discover without the envelope names the 2025 versions alone for this URL.
    const bare = await post("mod-direct", { jsonrpc: "2.0", id: 1, method: "server/discover" }, { authorization: `Bearer ${token}` }, "?view=direct");
    const versions = ((await bare.json()) as { result: { supportedVersions: string[] } }).result.supportedVersions;
    expect(versions).toContain("2025-11-25");
    expect(versions).not.toContain(MODERN);
  });

  it("sends an automatic client asking for ?view=direct to a 2025 session, where the direct view is served", async () => {
    const token = await seedTeam("mod-direct-auto", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client, sent } = await modernClient("mod-direct-auto", token, workerFetch, "?view=direct");
    expect(client.getProtocolEra()).toBe("legacy");
    expect(sent.map((s) => (s.body as { method?: string } | undefined)?.method)).toContain("initialize");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("memory__read_graph");
    expect(names).not.toContain("discover_tool");
    await client.close();
  });

  it("serves the meta view to a token or a team config whose view is direct: the host did not ask for it", async () => {
    const token = await seedTeam("mod-direct-team", { view: "direct", mcp: { memory: { url: replayUrl("memory") } } });
    const minted = (await (await adminFetch("POST", "/teams/mod-direct-team/tokens", { view: "direct" })).json()) as { token: string };
    for (const who of [token, minted.token]) {
      const { client } = await modernClient("mod-direct-team", who);
      expect(client.getProtocolEra()).toBe("modern");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
      expect(tools[0]!.description).toContain("memory:\n- add_observations");
      await client.close();
    }
  });
});

describe("MODERN_ERA=off", () => {
  /** The same router, with the 2026 era switched off by its setting. */
  const legacyOnly: typeof workerFetch = async (input, init) =>
    app.fetch(new Request(input, init), { ...env, MODERN_ERA: "off" }, createExecutionContext());

  it("answers a 2026 request as a server of the 2025 versions only, so an automatic client falls back after one probe", async () => {
    const token = await seedTeam("mod-off", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client, sent } = await modernClient("mod-off", token, legacyOnly);
    expect(client.getProtocolEra()).toBe("legacy");
    const methods = sent.map((s) => (s.body as { method?: string } | undefined)?.method);
    expect(methods.filter((m) => m === "server/discover")).toHaveLength(1);
    expect(methods).toContain("initialize");
    // The session works as every 2025 session does: the catalog is discover_tool's description.
    const { tools } = await client.listTools();
    expect(tools[0]!.description).toContain("memory:");
    const raw = await legacyOnly(`${BASE}/t/mod-off/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } } }),
    });
    expect(raw.status).toBe(400);
    const body = (await raw.json()) as { error: { code: number; message: string; data: { supported: string[] } } };
    expect(body.error.code).toBe(-32022);
    expect(body.error.data.supported).not.toContain(MODERN);
    expect(body.error.message).toContain("not enabled");
    await client.close();
  });
});

describe("2026-07-28 cancellation", () => {
  it("closing the answer's stream cancels the upstream call (the era's cancellation), within a bound", async () => {
    const token = await seedTeam("mod-cancel", { mcp: { hang: { url: replayUrl("fwd-hang"), timeout: 30_000 } } });
    const counts = async () => {
      const { methods } = await replayStats("fwd-hang");
      return { calls: methods["tools/call"] ?? 0, cancels: methods["notifications/cancelled"] ?? 0 };
    };
    const before = await counts();
    const res = await modernPost("mod-cancel", token, "tools/call", { name: "use_tool", arguments: { tool_name: "hang/read_graph", tool_input: {} } });
    // The object's handler streams (SSE) from the start: the headers come before the upstream answers.
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(await waitFor(async () => (await counts()).calls > before.calls)).toBe(true);
    expect((await counts()).cancels).toBe(before.cancels);
    await res.body!.cancel();
    expect(await waitFor(async () => (await counts()).cancels > before.cancels)).toBe(true);
  });
});

describe("2026-07-28 request metadata", () => {
  it("passes the host's trace context and log level on to the upstream call, and never its own envelope", async () => {
    const token = await seedTeam("mod-meta", { mcp: { memory: { url: replayUrl("mod-meta") } } });
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const res = await modernPost("mod-meta", token, "tools/call", { name: "use_tool", arguments: { tool_name: "memory/read_graph", tool_input: {} } }, {}, {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/logLevel": "warning",
      traceparent,
    });
    expect(res.status).toBe(200);
    await res.text();
    const [call] = (await replayStats("mod-meta")).calls;
    expect(call?.meta).toMatchObject({ traceparent, "io.modelcontextprotocol/logLevel": "warning" });
    expect(JSON.stringify(call?.meta)).not.toContain("clientCapabilities");
  });
});
