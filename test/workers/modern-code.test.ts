// The code view in the 2026-07-28 era: a v2 client in automatic mode (it probes server/discover, so it speaks the
// stateless era) asking `?view=code`, or holding a token minted for it, gets search, describe and execute from the
// principal's code object: its programs load lazy servers there (kept for the principal's later requests, apart from
// its meta-tools object), and a call that needs consent pauses the run for `approve` (the era has no elicitation on a
// request's stream). The team config's default view applies as it does to sessions. With code mode off the view is
// refused as for a session.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/errors.ts";
import { app } from "../../src/http/app.ts";
import { adminFetch, BASE, replayStats, replayUrl, seedTeam, text, workerFetch } from "./helpers.ts";

const MODERN = "2026-07-28";
const LAZY = "A knowledge graph of the team's people and projects.";

async function modernClient(team: string, token: string, query = "", capabilities: Record<string, unknown> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp${query}`), {
    fetch: (input, init) => workerFetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown> };
const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<Result>;
const inits = async (route: string) => (await replayStats(route)).methods.initialize ?? 0;

describe("the code view for 2026-07-28 clients", () => {
  it("lists search, describe and execute for ?view=code; a program loads a lazy server in the principal's code object, kept for later requests", async () => {
    const token = await seedTeam("mc-basic", { mcp: { memory: { url: replayUrl("code-modern") }, people: { url: replayUrl("code-modern-lazy"), description: LAZY } } });
    const client = await modernClient("mc-basic", token, "?view=code");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);
    expect(tools[2]!.description).toMatch(/^- people: A knowledge graph of the team's people and projects$/m);
    expect(text(await call(client, "search", { query: "add observations to entities" }))).toMatch(/^memory\.add_observations: /);
    expect(text(await call(client, "describe", { path: "memory.read_graph" }))).toMatch(/^declare const memory: \{/);

    const before = await inits("code-modern-lazy");
    const program = "const a = await memory.read_graph();\nconst b = await people.read_graph();\nreturn [a.tool, b.tool];";
    const ran = await call(client, "execute", { code: program });
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(text(ran)).toBe('["read_graph","read_graph"]');
    expect(await inits("code-modern-lazy")).toBe(before + 1);
    await client.close();

    // Another connection of the same token: the same code object, the lazy server still loaded.
    const again = await modernClient("mc-basic", token, "?view=code");
    expect(text(await call(again, "execute", { code: "return (await people.read_graph()).tool;" }))).toBe('"read_graph"');
    expect(await inits("code-modern-lazy")).toBe(before + 1);
    await again.close();

    // The same token without the view: the meta-tools, whose object never loaded the lazy server.
    const meta = await modernClient("mc-basic", token);
    expect((await meta.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    const unloaded = await call(meta, "use_tool", { tool_name: "people/read_graph", tool_input: {} });
    expect(unloaded.isError).toBe(true);
    expect(text(unloaded)).toContain('load_mcp {"mcp_name":"people"}');
    await meta.close();
  });

  it("takes the token's view; a call that needs consent pauses the run even for a host that declares elicitation, and approve resumes it", async () => {
    const token = await seedTeam("mc-consent", { approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    const minted = (await (await adminFetch("POST", "/teams/mc-consent/tokens", { view: "code" })).json()) as { token: string };
    const client = await modernClient("mc-consent", minted.token, "", { elicitation: { form: {} } });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);
    const calls = async () => (await replayStats("code-modern")).calls.map((c) => c.name);
    const before = (await calls()).length;
    const program = "await memory.read_graph();\nconst gone = await memory.delete_entities({ entityNames: ['x'] });\nreturn gone.tool;";
    const paused = await call(client, "execute", { code: program });
    expect(paused.isError).toBe(true);
    expect(errorKindOf(paused)).toMatchObject({ kind: "program_failed", cause: "approval" });
    const id = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(paused))?.[1];
    expect(id).toBeDefined();
    expect((await calls()).slice(before)).toEqual(["read_graph"]);
    // Resumed from a new connection: the paused run waits in the principal's code object.
    await client.close();
    const later = await modernClient("mc-consent", minted.token);
    const resumed = await call(later, "execute", { code: program, approve: id });
    expect(resumed.isError, text(resumed)).toBeFalsy();
    expect(text(resumed)).toBe('"delete_entities"');
    expect((await calls()).slice(before)).toEqual(["read_graph", "delete_entities"]);
    await later.close();
  });

  it("takes the team config's default view when neither the URL nor the token names one; either of them still wins", async () => {
    const token = await seedTeam("mc-default", { view: "code", mcp: { memory: { url: replayUrl("code-modern") } } });
    const client = await modernClient("mc-default", token);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);
    const ran = await call(client, "execute", { code: "return (await memory.read_graph()).tool;" });
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(text(ran)).toBe('"read_graph"');
    await client.close();

    const asked = await modernClient("mc-default", token, "?view=meta");
    expect((await asked.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    await asked.close();
    const minted = (await (await adminFetch("POST", "/teams/mc-default/tokens", { view: "meta" })).json()) as { token: string };
    const byToken = await modernClient("mc-default", minted.token);
    expect((await byToken.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    await byToken.close();

    // The default changed: the next request follows it (TOKEN_CACHE_SECONDS is 0 here; deployed, within that bound).
    await seedTeam("mc-default", { mcp: { memory: { url: replayUrl("code-modern") } } });
    const after = await modernClient("mc-default", token);
    expect((await after.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    await after.close();
  });

  const listRequest = (team: string, token: string, query: string) =>
    new Request(`${BASE}/t/${team}/mcp${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } },
      }),
    });

  it("refuses ?view=code, and a team default of code, with 400 where code mode is off, naming why", async () => {
    const token = await seedTeam("mc-off", { mcp: { memory: { url: replayUrl("code-modern") } } });
    const off = { ...env, CODE_MODE: "off" };
    const res = await app.fetch(listRequest("mc-off", token, "?view=code"), off, createExecutionContext());
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringMatching(/^Code mode is off on this deployment .* the view asked for, "code", is not served; use "meta" or "direct"\.$/) } });

    const byDefault = await seedTeam("mc-off-default", { view: "code", mcp: { memory: { url: replayUrl("code-modern") } } });
    const refused = await app.fetch(listRequest("mc-off-default", byDefault, ""), off, createExecutionContext());
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringMatching(/the team config's view, "code", is not served/) } });
    // Asking for another view still works there.
    const meta = await app.fetch(listRequest("mc-off-default", byDefault, "?view=meta"), off, createExecutionContext());
    expect(meta.status).toBe(200);
  });
});
