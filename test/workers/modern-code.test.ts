// The code view in the 2026-07-28 era: a v2 client in automatic mode (it probes server/discover, so it speaks the
// stateless era) asking `?view=code`, or holding a token minted for it, gets search, describe and execute from the
// principal's code object: its programs load lazy servers there (kept for the principal's later requests, apart from
// its meta-tools object), and a call that needs consent asks a host that declares elicitation in an input_required
// round (the era has no elicitation on a request's stream), or else pauses the run for `approve`. The team config's
// default view applies as it does to sessions. With code mode off the view is refused as for a session.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { app } from "../../src/edge/app.ts";
import { addToken, adminFetch, BASE, post, replayStats, replayUrl, seedTeam, text, workerFetch } from "./helpers.ts";

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

/** A raw 2026 tools/call of execute (a host declaring form elicitation), answered as JSON or as an SSE stream's last message. */
async function rawExecute(team: string, token: string, code: string, extra: Record<string, unknown> = {}, args: Record<string, unknown> = {}) {
  const res = await post(
    team,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "execute", arguments: { code, ...args }, ...extra, _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } } },
    },
    { authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "execute" },
  );
  const body = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? JSON.parse(body.split("\n").filter((l) => l.startsWith("data: ")).at(-1)!.slice(6))
    : JSON.parse(body);
  return json as { result?: Record<string, unknown>; error?: { code: number; message: string } };
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

  it("takes the token's view; a host that declares elicitation is asked in an input_required round: yes makes the call, no throws in the program", async () => {
    await seedTeam("mc-ask", { approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    const minted = (await (await adminFetch("POST", "/teams/mc-ask/tokens", { view: "code" })).json()) as { token: string };
    const client = await modernClient("mc-ask", minted.token, "", { elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      return asked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);
    const calls = async () => (await replayStats("code-modern")).calls.map((c) => [c.name, (c.arguments as { entityNames?: string[] }).entityNames?.[0]]);
    const before = (await calls()).length;
    const program = [
      "await memory.read_graph();",
      "const first = await memory.delete_entities({ entityNames: ['a'] });",
      "let second;",
      "try { await memory.delete_entities({ entityNames: ['b'] }); } catch (e) { second = e.message; }",
      "return { first: first.tool, second };",
    ].join("\n");
    // One callTool: the SDK answers each round with its elicitation handler and retries with the proxy's state.
    const ran = await call(client, "execute", { code: program });
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(JSON.parse(text(ran))).toEqual({ first: "delete_entities", second: "The user did not allow memory.delete_entities; it was not called." });
    expect(asked).toEqual([
      'A program wants to call memory.delete_entities with {"entityNames":["a"]}. Allow this call?',
      'A program wants to call memory.delete_entities with {"entityNames":["b"]}. Allow this call?',
    ]);
    // Each call made once, across the rounds: the kept results were served to the resumed runs.
    expect((await calls()).slice(before)).toEqual([
      ["read_graph", undefined],
      ["delete_entities", "a"],
    ]);
    await client.close();
  });

  it("a host without elicitation: the run pauses, and approve resumes it from a new connection; each call made once", async () => {
    await seedTeam("mc-consent", { approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    const minted = (await (await adminFetch("POST", "/teams/mc-consent/tokens", { view: "code" })).json()) as { token: string };
    const client = await modernClient("mc-consent", minted.token);
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

  it("refuses a consent round's state for other code or another token's with -32602, and one used twice; the genuine answer still resumes", async () => {
    const token = await seedTeam("mc-round", { view: "code", approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    const program = "return (await memory.delete_entities({ entityNames: ['r'] })).tool;";
    const first = await rawExecute("mc-round", token, program);
    const round = first.result as { resultType: string; inputRequests: Record<string, { method: string; params: { mode?: string; message?: string } }>; requestState: string };
    expect(round.resultType).toBe("input_required");
    expect(round.inputRequests["consent"]).toMatchObject({ method: "elicitation/create", params: { mode: "form", message: expect.stringContaining("memory.delete_entities") } });
    const yes = { inputResponses: { consent: { action: "accept", content: { allow: true } } }, requestState: round.requestState };
    expect((await rawExecute("mc-round", token, "return 1;", yes)).error?.code).toBe(-32602);
    expect((await rawExecute("mc-round", await addToken("mc-round"), program, yes)).error?.code).toBe(-32602);
    const done = await rawExecute("mc-round", token, program, yes);
    expect(text(done.result)).toBe('"delete_entities"');
    const again = await rawExecute("mc-round", token, program, yes);
    expect(text(again.result)).toMatch(/^No program paused as "pr_[^"]+" waits in this session/);
    expect((await replayStats("code-modern")).calls.filter((c) => (c.arguments as { entityNames?: string[] }).entityNames?.[0] === "r")).toHaveLength(1);
  });

  it("resumes a run paused by a consent round only with the round's answer: approve with the id read off the requestState is refused", async () => {
    const token = await seedTeam("mc-round-approve", { view: "code", approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    const program = "return (await memory.delete_entities({ entityNames: ['stolen'] })).tool;";
    const round = (await rawExecute("mc-round-approve", token, program)).result as { resultType: string; requestState: string };
    expect(round.resultType).toBe("input_required");
    // The state is signed, not sealed: anyone holding it reads the paused run's id, as the tester did.
    const body = round.requestState.slice(3, round.requestState.lastIndexOf("."));
    const decoded = atob(body.replace(/-/g, "+").replace(/_/g, "/"));
    const id = /"(pr_[A-Za-z0-9_-]+)"/.exec(decoded)?.[1];
    expect(id).toBeDefined();
    const stolen = await rawExecute("mc-round-approve", token, program, {}, { approve: id });
    expect((stolen.result as { isError?: boolean }).isError).toBe(true);
    expect(text(stolen.result)).toContain("only that answer resumes it");
    const made = async () => (await replayStats("code-modern")).calls.filter((c) => (c.arguments as { entityNames?: string[] }).entityNames?.[0] === "stolen");
    expect(await made()).toHaveLength(0);
    // The user's own answer still resumes it, once.
    const yes = { inputResponses: { consent: { action: "accept", content: { allow: true } } }, requestState: round.requestState };
    expect(text((await rawExecute("mc-round-approve", token, program, yes)).result)).toBe('"delete_entities"');
    expect(await made()).toHaveLength(1);
  });

  it("asks again when a retry brings no answer, takes a cancel as a no, and past 8 rounds answers with the approve id", async () => {
    const token = await seedTeam("mc-rounds", { view: "code", approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-modern") } } });
    type Round = { resultType: string; inputRequests: Record<string, { params: { message?: string } }>; requestState: string };
    const yes = (state: string) => ({ inputResponses: { consent: { action: "accept", content: { allow: true } } }, requestState: state });
    // A retry with the state and no answer: asked again, the run still waiting.
    const one = "return (await memory.delete_entities({ entityNames: ['q'] })).tool;";
    const first = (await rawExecute("mc-rounds", token, one)).result as Round;
    const again = (await rawExecute("mc-rounds", token, one, { requestState: first.requestState })).result as Round;
    expect(again.resultType).toBe("input_required");
    expect(again.inputRequests["consent"]!.params.message).toContain('{"entityNames":["q"]}');
    expect(text((await rawExecute("mc-rounds", token, one, yes(again.requestState))).result)).toBe('"delete_entities"');
    // A cancel is a no: the program gets the refusal.
    const caught = "try { await memory.delete_entities({ entityNames: ['c'] }); return 'made'; } catch (e) { return e.message; }";
    const asked = (await rawExecute("mc-rounds", token, caught)).result as Round;
    const cancelled = await rawExecute("mc-rounds", token, caught, { inputResponses: { consent: { action: "cancel" } }, requestState: asked.requestState });
    expect(text(cancelled.result)).toBe('"The user did not allow memory.delete_entities; it was not called."');
    // Nine calls that each need consent: eight rounds, then the approve id (a host SDK may stop after ten rounds).
    const many = "for (let i = 0; i < 9; i++) await memory.delete_entities({ entityNames: ['m' + i] });\nreturn 'all';";
    let answer = await rawExecute("mc-rounds", token, many);
    let rounds = 0;
    while ((answer.result as Round | undefined)?.resultType === "input_required") {
      rounds++;
      answer = await rawExecute("mc-rounds", token, many, yes((answer.result as Round).requestState));
    }
    expect(rounds).toBe(8);
    const id = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(answer.result))?.[1];
    expect(id, text(answer.result)).toBeDefined();
    expect(text((await rawExecute("mc-rounds", token, many, {}, { approve: id })).result)).toBe('"all"');
    const made = (await replayStats("code-modern")).calls.map((c) => (c.arguments as { entityNames?: string[] }).entityNames?.[0]).filter((n) => n?.startsWith("m"));
    expect(made).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]);
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
    expect(await res.json()).toMatchObject({ error: { message: expect.stringMatching(/^Code mode is off on this deployment .* the view asked for, "code", is not served; use "meta" \(a 2025 session, opened with initialize, also serves "direct"\)\.$/) } });

    const byDefault = await seedTeam("mc-off-default", { view: "code", mcp: { memory: { url: replayUrl("code-modern") } } });
    const refused = await app.fetch(listRequest("mc-off-default", byDefault, ""), off, createExecutionContext());
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringMatching(/the team config's view, "code", is not served/) } });
    // Asking for another view still works there.
    const meta = await app.fetch(listRequest("mc-off-default", byDefault, "?view=meta"), off, createExecutionContext());
    expect(meta.status).toBe(200);
  });
});
