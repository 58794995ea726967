// The code view through the real Worker, session object and Dynamic Worker sandbox: chosen by ?view=code, the token
// or the team config; search ranks as discover_tool does; describe answers declarations; execute runs a program whose
// calls go the way use_tool's do (filters, pins, secrets, lazy loads, strikes, timeouts), against loopback upstreams.
import { env, exports } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { CallToolResultSchema, ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { loadTokenCounter } from "../../src/catalog/tokenizer.ts";
import { app } from "../../src/edge/app.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { sandboxProbe } from "../shared/sandbox-probe.ts";
import { BASE, adminFetch, connectAt, initializeBody, mutateTool, replayStats, replayUrl, seedTeam, text, waitFor, type Connected } from "./helpers.ts";

/** A tools/call through a raw request: replayed answers carry no structuredContent for an output schema to hold against. */
const call = (session: Connected, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  session.client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema) as Promise<CallToolResult>;
const search = (s: Connected, query: string, extra: Record<string, unknown> = {}) => call(s, "search", { query, ...extra });
const describeApi = (s: Connected, path: string) => call(s, "describe", { path });
const execute = (s: Connected, code: string) => call(s, "execute", { code });
const names = (result: { tools: Array<{ name: string }> }) => result.tools.map((t) => t.name);

describe("choosing the code view", () => {
  it("lists exactly search, describe and execute for ?view=code; execute names every namespace, lazy ones too", async () => {
    const token = await seedTeam("cv-list", {
      mcp: { memory: { url: replayUrl("code-a") }, "my-graph": { url: replayUrl("code-lazy"), description: "Team knowledge graph. Load for people and projects." } },
    });
    const s = await connectAt("cv-list", token, "?view=code");
    const { tools } = await s.client.listTools();
    expect(names({ tools })).toEqual(["search", "describe", "execute"]);
    const executeTool = tools.find((t) => t.name === "execute")!;
    expect(executeTool.description).toContain("- memory");
    expect(executeTool.description).toMatch(/^- my_graph: Team knowledge graph$/m);
    expect(executeTool.inputSchema).toMatchObject({ type: "object", properties: { code: { type: "string" } }, required: ["code"] });
    // Listing opened nothing lazy.
    expect((await replayStats("code-lazy")).methods.initialize ?? 0).toBe(0);
    await s.client.close();
  });

  it("fits execute's namespaces to the team's catalog budget; a namespace left unnamed is still found and callable", async () => {
    // 120 lazy servers (nothing opens until a program calls one): whole lines would cost some 3,000 tokens.
    const mcp: Record<string, { url: string; description: string }> = {};
    for (let i = 0; i < 120; i++) mcp[`graph${i}`] = { url: replayUrl("code-lazy"), description: `Knowledge graph number ${i} of the team, kept for its projects and people.` };
    mcp.graph119!.description = "Payroll ledger of the finance department.";
    const token = await seedTeam("cv-budget", { catalog_budget: 600, mcp });
    const s = await connectAt("cv-budget", token, "?view=code");
    const { tools } = await s.client.listTools();
    const description = tools.find((t) => t.name === "execute")!.description!;
    const named = /Namespaces \(loaded on first use\): (.*), and (\d+) more: search finds them and their methods\.$/.exec(description);
    expect(named, description).not.toBeNull();
    const shown = named![1]!.split(", ");
    expect(shown.slice(0, 3)).toEqual(["graph0", "graph1", "graph2"]);
    expect(shown.length + Number(named![2])).toBe(120);
    expect(description).not.toContain("Knowledge graph");
    // The same config lists the same bytes in another session.
    const again = await connectAt("cv-budget", token, "?view=code");
    expect((await again.client.listTools()).tools).toEqual(tools);
    // The last, unnamed, is found by search and called from a program (loaded then).
    // Nothing loaded does it, so the answer says so and names it among the closest, not loaded yet.
    expect(text(await search(s, "payroll ledger"))).toContain("- graph119 (not loaded): Payroll ledger of the finance department");
    expect(text(await execute(s, "return (await graph119.read_graph()).tool;"))).toBe('"read_graph"');
    await Promise.all([s.client.close(), again.client.close()]);
  });

  it("takes the token's view, then the team config's; the URL wins over both", async () => {
    await seedTeam("cv-default", { view: "code", mcp: { memory: { url: replayUrl("memory") } } });
    const token = (await (await adminFetch("POST", "/teams/cv-default/tokens", {})).json()) as { token: string };
    const byTeam = await connectAt("cv-default", token.token, "");
    expect(names(await byTeam.client.listTools())).toEqual(["search", "describe", "execute"]);
    await byTeam.client.close();
    const byUrl = await connectAt("cv-default", token.token, "?view=meta");
    expect(names(await byUrl.client.listTools())).toEqual(["discover_tool", "use_tool"]);
    await byUrl.client.close();

    await seedTeam("cv-token", { mcp: { memory: { url: replayUrl("memory") } } });
    const minted = (await (await adminFetch("POST", "/teams/cv-token/tokens", { view: "code" })).json()) as { token: string; view: string };
    expect(minted.view).toBe("code");
    const byToken = await connectAt("cv-token", minted.token, "");
    expect(names(await byToken.client.listTools())).toEqual(["search", "describe", "execute"]);
    await byToken.client.close();
    // The config's view is validated like the rest of it.
    const bad = await adminFetch("PUT", "/teams/cv-token/config", { view: "everything", mcp: { memory: { url: replayUrl("memory") } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('\\"code\\"');
  });

  it("refuses the code view with a 400 where code mode is off, naming the setting; other views go on", async () => {
    const token = await seedTeam("cv-off", { mcp: { memory: { url: replayUrl("memory") } } });
    const initialize = (query: string, over: Record<string, unknown>) =>
      app.fetch(
        new Request(`${BASE}/t/cv-off/mcp${query}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
          body: JSON.stringify(initializeBody),
        }),
        // A fresh env object for the router (settings are parsed per env object); the session object keeps its own.
        { ...env, ...over },
        createExecutionContext(),
      );
    for (const over of [{ CODE_MODE: "off" }, { LOADER: undefined }]) {
      const off = await initialize("?view=code", over);
      expect(off.status).toBe(400);
      expect(((await off.json()) as { error: { message: string } }).error.message).toMatch(/Code mode is off on this deployment .*CODE_MODE=off/);
      expect((await initialize("?view=meta", over)).status).toBe(200);
    }
  });
});

describe("search and describe", () => {
  it("ranks as discover_tool's search does, under code paths, and offers matching lazy namespaces", async () => {
    const token = await seedTeam("cv-search", {
      mcp: { memory: { url: replayUrl("memory") }, people: { url: replayUrl("code-lazy"), description: "Directory of people and their teams." } },
    });
    const code = await connectAt("cv-search", token, "?view=code");
    const meta = await connectAt("cv-search", token, "?view=meta");
    for (const query of ["add observations to entities", "delete relations", "search nodes"]) {
      const found = text(await search(code, query)).split("\n\n")[0]!.split("\n");
      const ranked = (await call(meta, "discover_tool", { query })).structuredContent as { tools: Array<{ name: string }> };
      expect(found.map((line) => line.split(":")[0])).toEqual(ranked.tools.map((t) => t.name.replace("memory/", "memory.")));
    }
    const people = text(await search(code, "people directory teams"));
    // No loaded API does it: said first, the lazy namespace that matches named first among the closest, with the call
    // that shows a namespace's methods.
    expect(people.split("\n")[0]).toBe('No loaded API does what "people directory teams" asks.');
    expect(people).toContain('Closest servers (see a server\'s APIs with describe {"path": "<namespace>"}):\n- people (not loaded): Directory of people and their teams');
    // Narrowed to one namespace; a lazy one is loaded first (as describe and execute load it) and searched; a name
    // that is no namespace is an error naming those that are loaded.
    expect(text(await search(code, "graph", { server: "memory", limit: 2 })).split("\n")).toHaveLength(2);
    const connectsBefore = (await replayStats("code-lazy")).methods.initialize ?? 0;
    const lazyHits = await search(code, "graph", { server: "people" });
    expect(lazyHits.isError).toBeFalsy();
    const lazyPaths = text(lazyHits).split("\n").map((line) => line.split(":")[0]!);
    expect(lazyPaths.length).toBeGreaterThan(0);
    expect(lazyPaths.every((path) => path.startsWith("people."))).toBe(true);
    expect((await replayStats("code-lazy")).methods.initialize).toBe(connectsBefore + 1);
    const unknown = await search(code, "graph", { server: "nowhere" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toBe('No loaded namespace is named "nowhere"; loaded: memory, people.');
    const invalid = await call(code, "search", { query: "" });
    expect(errorKindOf(invalid)).toEqual({ kind: "invalid_arguments" });
    await Promise.all([code.client.close(), meta.client.close()]);
  });

  it("describes a method, a namespace and a lazy namespace (loading it), and answers unknown paths with the closest", async () => {
    const token = await seedTeam("cv-describe", {
      mcp: { memory: { url: replayUrl("memory") }, lazy_graph: { url: replayUrl("code-lazy"), description: "Another graph." } },
    });
    const s = await connectAt("cv-describe", token, "?view=code");
    const method = text(await describeApi(s, "memory.add_observations"));
    expect(method).toMatch(/^declare const memory: \{\n/);
    expect(method).toContain("add_observations(input: {");
    expect(method).toMatch(/\): Promise<\{[^]*\}>;\n\};$/);
    expect(method).not.toContain("read_graph");

    // A whole namespace answers its index: every method a line, then the describe that declares methods.
    const whole = text(await describeApi(s, "memory"));
    expect(whole).not.toContain("declare const");
    for (const m of ["read_graph: Read the entire knowledge graph", "search_nodes: ", "delete_entities: "]) expect(whole).toContain(`\n- memory.${m}`);
    const next = /^Declarations: describe (\{.*\}) \(method paths, comma-separated\)\.$/m.exec(whole);
    expect(next?.[1]).toBe('{"path":"memory.add_observations, memory.create_entities"}');
    // The describe it names declares those methods.
    const declared = text(await call(s, "describe", JSON.parse(next![1]!) as Record<string, unknown>));
    expect(declared).toMatch(/^declare const memory: \{\n/);
    expect(declared).toContain("  add_observations(input: {");
    expect(declared).toContain("  create_entities(input: {");

    const before = (await replayStats("code-lazy")).methods.initialize ?? 0;
    const lazy = text(await describeApi(s, "lazy_graph"));
    expect(lazy).toMatch(/^lazy_graph: Another graph \(9 methods\)\n- lazy_graph\.add_observations: /);
    expect(lazy).toContain("\n- lazy_graph.open_nodes: ");
    expect((await replayStats("code-lazy")).methods.initialize).toBe(before + 1);
    // Loaded for the session: its tools are searchable now, and describing again opens nothing.
    expect(text(await search(s, "open nodes"))).toContain("lazy_graph.open_nodes");
    await describeApi(s, "lazy_graph.read_graph");
    expect((await replayStats("code-lazy")).methods.initialize).toBe(before + 1);

    const typo = await describeApi(s, "memory.add_observation");
    expect(errorKindOf(typo)).toEqual({ kind: "unknown_tool" });
    expect(text(typo)).toMatch(/^Unknown tool: "memory\.add_observation"\. Available tools \(closest first\): memory\.add_observations/);
    expect(text(await describeApi(s, "nope"))).toBe('Unknown namespace "nope". The namespaces are: memory, lazy_graph.');
    await s.client.close();
  });

  it("describes several paths at once: one declaration per namespace, a line for each path that found nothing", async () => {
    const token = await seedTeam("cv-many", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const s = await connectAt("cv-many", token, "?view=code");
    const many = text(await describeApi(s, "memory.read_graph, memory.search_nodes everything.get_sum,memory.nope"));
    expect(many.match(/^declare const memory: \{$/gm)).toHaveLength(1);
    expect(many.match(/^declare const everything: \{$/gm)).toHaveLength(1);
    expect(many.indexOf("  read_graph(")).toBeLessThan(many.indexOf("  search_nodes("));
    expect(many).toContain("  get_sum(input: {");
    expect(many).toMatch(/\n\nUnknown tool: "memory\.nope"\. Available tools \(closest first\): memory\.open_nodes/);
    const tooMany = await describeApi(s, Array.from({ length: 21 }, (_, i) => `memory.m${i}`).join(","));
    expect(text(tooMany)).toBe("Invalid arguments for describe: path: at most 20 paths at once, not 21.");
    expect(errorKindOf(await describeApi(s, " , "))).toEqual({ kind: "invalid_arguments" });
    await s.client.close();
  });

  it("answers a namespace of 118 methods with its index: every method named, within 2,500 tokens", async () => {
    const token = await seedTeam("cv-index", { mcp: { gitlab: { url: replayUrl("gitlab") } } });
    const s = await connectAt("cv-index", token, "?view=code");
    const index = text(await describeApi(s, "gitlab"));
    const counter = await loadTokenCounter(env.ASSETS);
    expect(counter.count(index)).toBeLessThanOrEqual(2_500);
    const methods = index.split("\n").flatMap((l) => /^- gitlab\.([^:]+)/.exec(l)?.[1] ?? []);
    expect(methods).toHaveLength(118);
    expect(methods).toContain("merge_merge_request");
    expect(index).not.toContain("more methods");
    await s.client.close();
  });

  it("describes briefly by default, saying what it shortened, and whole with full: true", async () => {
    const token = await seedTeam("cv-brief", { mcp: { gitlab: { url: replayUrl("gitlab") } } });
    const s = await connectAt("cv-brief", token, "?view=code");
    const brief = text(await describeApi(s, "gitlab.merge_merge_request"));
    const whole = text(await call(s, "describe", { path: "gitlab.merge_merge_request", full: true }));
    expect(brief).toContain(" …");
    expect(brief).toMatch(/\n\nDescriptions ending in … are shortened; describe with full: true gives them whole\.$/);
    expect(whole).not.toContain("are shortened");
    expect(whole).toContain("Merge a merge request. Use this only after checking the merge request approval");
    expect(brief).toMatch(/^  \/\*\* Merge a merge request … @destructive \*\/$/m);
    expect(whole.length).toBeGreaterThan(brief.length);
    // The types are the same either way.
    const types = (t: string) => t.replace(/\/\*\*[^]*?\*\/\n?/g, "").replace(/\n\nDescriptions[^]*$/, "").replace(/\s+/g, " ");
    expect(types(brief)).toBe(types(whole));
    await s.client.close();
  });

  it("keeps tools the config denies or a changed pin withholds out of search, describe and programs", async () => {
    const token = await seedTeam("cv-policy", {
      pin_tools: true,
      mcp: { memory: { url: replayUrl("memory"), tools: { deny: ["delete_*"] } }, pinned: { url: replayUrl("code-pin") } },
    });
    const first = await connectAt("cv-policy", token, "?view=code");
    expect(text(await describeApi(first, "pinned"))).toContain("- pinned.read_graph: ");
    await first.client.close();
    const changed = await mutateTool("code-pin");

    const s = await connectAt("cv-policy", token, "?view=code");
    expect(text(await search(s, "delete entities"))).not.toContain("memory.delete_entities");
    expect(text(await describeApi(s, "memory"))).not.toContain("delete_");
    expect(errorKindOf(await describeApi(s, "memory.delete_entities"))).toEqual({ kind: "unknown_tool" });
    // The session may first show the team's cached catalog (the approved definitions), then the upstream's own.
    const declared = new RegExp(`^- pinned\\.${changed}: `, "m");
    expect(await waitFor(async () => !declared.test(text(await describeApi(s, "pinned"))))).toBe(true);
    expect(errorKindOf(await describeApi(s, `pinned.${changed}`))).toEqual({ kind: "unknown_tool" });

    const callsBefore = (await replayStats("code-pin")).calls.length;
    const denied = await execute(s, "async () => { await memory.delete_entities({ entityNames: ['x'] }); }");
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/^The program failed \(error\) at line 1:\d+: Unknown tool: "memory\.delete_entities"\./);
    const withheld = await execute(s, `async () => pinned.${changed}({})`);
    expect(text(withheld)).toContain(`Unknown tool: "pinned.${changed}"`);
    expect((await replayStats("code-pin")).calls.length).toBe(callsBefore);
    await s.client.close();
  });
});

describe("execute", () => {
  it("runs one program that calls two upstreams and combines their results", async () => {
    const token = await seedTeam("cv-exec", { mcp: { memory: { url: replayUrl("code-a") }, everything: { url: env.EVERYTHING_URL } } });
    const s = await connectAt("cv-exec", token, "?view=code");
    const calls = (await replayStats("code-a")).calls.length;
    const result = await execute(
      s,
      [
        "async () => {",
        "  const sum = await everything.get_sum({ a: 2, b: 3 });",
        "  const found = await memory.search_nodes({ query: 'alice' });",
        "  console.log('sum was', sum);",
        "  return { sum, tool: found.tool, query: found.arguments.query };",
        "}",
      ].join("\n"),
    );
    expect(result.isError).toBeFalsy();
    const [json, ...rest] = text(result).split("\n");
    const value = JSON.parse(json!) as { sum: unknown; tool: string; query: string };
    expect(String(value.sum)).toContain("5");
    expect(value).toMatchObject({ tool: "search_nodes", query: "alice" });
    expect(rest.join("\n")).toMatch(/^\nconsole:\nsum was .*5/);
    const received = (await replayStats("code-a")).calls.slice(calls);
    expect(received).toEqual([{ name: "search_nodes", arguments: { query: "alice" } }]);
    await s.client.close();
  });

  it("calls a tool by the upstream's own name as well as by its method (everything[\"get-sum\"]), and describes it by either", async () => {
    const token = await seedTeam("cv-own-name", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const s = await connectAt("cv-own-name", token, "?view=code");
    const result = await execute(s, 'const a = await everything["get-sum"]({ a: 2, b: 3 });\nconst b = await everything.get_sum({ a: 4, b: 5 });\nreturn [a, b];');
    expect(result.isError, text(result)).toBeFalsy();
    const [a, b] = JSON.parse(text(result).split("\n")[0]!) as [unknown, unknown];
    expect(String(a)).toContain("5");
    expect(String(b)).toContain("9");
    const described = text(await describeApi(s, "everything.get-sum"));
    expect(described).toContain("get_sum(input: {");
    // A name that is neither still gets the closest paths, in the identifier form.
    const unknown = await execute(s, 'return await everything["get-summ"]({ a: 1, b: 1 });');
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("everything.get_sum");
    await s.client.close();
  });

  it("loads a lazy upstream at a program's first call of it; one that never loads costs a strike per program, then is evicted", async () => {
    const token = await seedTeam("cv-lazy", {
      mcp: {
        memory: { url: replayUrl("memory") },
        later: { url: replayUrl("code-lazy"), description: "Loaded from code." },
        broken: { url: replayUrl("code-fail"), description: "Never loads." },
      },
    });
    const s = await connectAt("cv-lazy", token, "?view=code");
    const before = (await replayStats("code-lazy")).methods.initialize ?? 0;
    const loaded = await execute(s, "const a = await later.read_graph();\nconst b = await later.read_graph();\nreturn [a.tool, b.tool];");
    expect(text(loaded)).toBe('["read_graph","read_graph"]');
    expect((await replayStats("code-lazy")).methods.initialize).toBe(before + 1);

    for (let strike = 1; strike <= 3; strike++) {
      const failed = await execute(s, "try { await broken.read_graph(); } catch (e) { return String(e.message); }");
      expect(failed.isError).toBeFalsy();
      expect(text(failed)).toMatch(strike < 3 ? /database is down/ : /no longer be offered.*database is down/s);
    }
    const gone = await execute(s, "return await broken.read_graph();");
    expect(text(gone)).toMatch(/Unknown tool: "broken\.read_graph"/);
    await s.client.close();
  });

  it("refuses the network inside the sandbox and reaches no secret, binding or storage", async () => {
    const secret = "sk-code-mode-0123456789-secret";
    expect((await adminFetch("PUT", "/teams/cv-sec/secrets/UP", { value: secret })).status).toBe(204);
    await adminFetch("PUT", "/teams/cv-sec/config", { mcp: { up: { url: replayUrl("code-sec"), headers: { Authorization: "Bearer ${secret:UP}" } } } });
    const token = ((await (await adminFetch("POST", "/teams/cv-sec/tokens", {})).json()) as { token: string }).token;
    const logged: string[] = [];
    const capture = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
    const spies = [vi.spyOn(console, "log").mockImplementation(capture), vi.spyOn(console, "error").mockImplementation(capture)];
    try {
      const s = await connectAt("cv-sec", token, "?view=code");
      const probe = await execute(
        s,
        sandboxProbe("up", replayUrl("code-sec")),
      );
      const answer = text(probe);
      expect(probe.isError, answer).toBeFalsy();
      const seen = JSON.parse(answer.split("\n")[0]!) as Record<string, unknown>;
      expect(seen.env).toBe("undefined");
      expect(seen.process).toBe("undefined");
      expect(String(seen.fetch)).toMatch(/not permitted to access the internet/);
      expect(seen.graph).toMatchObject({ tool: "read_graph" });
      // The upstream got the secret; nothing the program or the host saw holds it.
      expect((await replayStats("code-sec")).lastHeaders.authorization).toBe(`Bearer ${secret}`);
      expect(answer).not.toContain(secret);
      for (const line of logged) expect(line).not.toContain(secret);
      const stored = await runInDurableObject(env.SESSIONS.getByName(`cv-sec/${s.sessionId}`), async (_o, state) => JSON.stringify([...(await state.storage.list())]));
      expect(stored).not.toContain(secret);
      expect(await env.TEAMS.get(kvKeys.secret("cv-sec", "UP"))).not.toContain(secret);
      await s.client.close();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("names the cause and line of a failure, and the session goes on", async () => {
    const token = await seedTeam("cv-fail", { mcp: { memory: { url: replayUrl("memory") } } });
    const s = await connectAt("cv-fail", token, "?view=code");
    const thrown = await execute(s, "const g = await memory.read_graph();\n\nthrow new Error('no ' + g.tool);");
    expect(thrown.isError).toBe(true);
    expect(text(thrown)).toMatch(/^The program failed \(error\) at line 3:\d+: no read_graph\n\nTool calls made \(1\):\n- memory\.read_graph: ok \(\d+ ms\)/);
    expect(errorKindOf(thrown)).toMatchObject({ kind: "program_failed", cause: "error", line: 3 });

    const syntax = await execute(s, "async () => {\n  return 1 +;\n}");
    expect(errorKindOf(syntax)).toMatchObject({ kind: "program_failed", cause: "syntax", line: 2 });

    const unknownNamespace = await execute(s, "return await github.list_issues({});");
    expect(text(unknownNamespace)).toMatch(/github is not defined \(the namespaces are: memory\)/);

    const unknownMethod = await execute(s, "return await memory.read_graf();");
    expect(text(unknownMethod)).toMatch(/Unknown tool: "memory\.read_graf"\. Available tools \(closest first\): memory\.read_graph/);

    const empty = await call(s, "execute", { code: "" });
    expect(errorKindOf(empty)).toEqual({ kind: "invalid_arguments" });
    expect(text(await execute(s, "return 40 + 2;"))).toBe("42");
    await s.client.close();
  });

  it("runs at most four programs of a session at once; a fifth is refused as busy, and the session goes on", async () => {
    const token = await seedTeam("cv-busy", { mcp: { memory: { url: replayUrl("memory") } } });
    const s = await connectAt("cv-busy", token, "?view=code");
    const slow = "await new Promise((r) => setTimeout(r, 700));\nreturn 'done';";
    const answers = await Promise.all(Array.from({ length: 5 }, () => execute(s, slow)));
    const busy = answers.filter((a) => a.isError);
    expect(busy).toHaveLength(1);
    expect(errorKindOf(busy[0]!)).toMatchObject({ kind: "program_failed", cause: "busy" });
    expect(text(busy[0]!)).toBe("This session already runs 4 programs, the most it may run at once; wait for one to finish.");
    expect(answers.filter((a) => text(a) === '"done"')).toHaveLength(4);
    expect(text(await execute(s, slow))).toBe('"done"');
    await s.client.close();
  });

  it("ends a program that waits on a hung upstream at the wall limit (2 s in the tests); its late calls never reach the upstream", async () => {
    const token = await seedTeam("cv-hang", { mcp: { stuck: { url: replayUrl("code-hang") }, memory: { url: replayUrl("code-a") } } });
    const open = (body: unknown, headers: Record<string, string> = {}) =>
      exports.default.fetch(
        new Request(`${BASE}/t/cv-hang/mcp?view=code`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...headers },
          body: JSON.stringify(body),
        }),
      );
    const init = await open(initializeBody);
    const session = init.headers.get("mcp-session-id")!;
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    await open({ jsonrpc: "2.0", method: "notifications/initialized" }, headers);
    const before = (await replayStats("code-a")).calls.length;
    const started = Date.now();
    const res = await open(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "execute", arguments: { code: "async () => {\n  setTimeout(() => memory.read_graph().catch(() => {}), 2500);\n  return await stuck.read_graph();\n}" } },
      },
      headers,
    );
    const body = await res.text();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(body).toContain("The program failed (timeout)");
    expect(body).toContain("stuck.read_graph: failed");
    // The program's timer fires after the deadline: its call is refused by the proxy, not sent upstream.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await replayStats("code-a")).calls.length).toBe(before);
    // The session goes on.
    const next = await open({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "execute", arguments: { code: "return 1;" } } }, headers);
    expect(await next.text()).toContain('"text":"1"');
  });
});

describe("calls that need the user's consent", () => {
  const deletes = async (route: string) => (await replayStats(route)).calls.filter((c) => c.name === "delete_entities");

  it("asks a host that declared elicitation, once per call, with the wall clock stopped while the user decides", async () => {
    const token = await seedTeam("cv-ask", { approve: ["*delete*"], mcp: { memory: { url: replayUrl("code-ask") } } });
    const s = await connectAt("cv-ask", token, "?view=code", { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    s.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      // Longer than the tests' 2 s wall limit: the time a person takes is not the program's.
      await new Promise((r) => setTimeout(r, asked.length === 1 ? 2_500 : 10));
      return asked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    expect(text(await describeApi(s, "memory.delete_entities"))).toContain("@needsApproval each call asks the user first");
    expect(text(await describeApi(s, "memory.read_graph"))).not.toContain("@needsApproval");
    const before = (await deletes("code-ask")).length;
    const ran = await execute(
      s,
      [
        "await memory.read_graph();",
        "const first = await memory.delete_entities({ entityNames: ['a'] });",
        "let second;",
        "try { await memory.delete_entities({ entityNames: ['b'] }); } catch (e) { second = e.message; }",
        "return { first: first.tool, second };",
      ].join("\n"),
    );
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(JSON.parse(text(ran).split("\n")[0]!)).toEqual({ first: "delete_entities", second: "The user did not allow memory.delete_entities; it was not called." });
    expect(asked).toEqual([
      'A program wants to call memory.delete_entities with {"entityNames":["a"]}. Allow this call?',
      'A program wants to call memory.delete_entities with {"entityNames":["b"]}. Allow this call?',
    ]);
    expect((await deletes("code-ask")).slice(before)).toEqual([{ name: "delete_entities", arguments: { entityNames: ["a"] } }]);
    await s.client.close();
  });

  it("pauses elsewhere, keeping what was done; the resume with the user's consent makes the waiting call and repeats nothing", async () => {
    const token = await seedTeam("cv-pause", { approve_destructive: true, mcp: { memory: { url: replayUrl("code-pause") } } });
    const s = await connectAt("cv-pause", token, "?view=code");
    const program = [
      "const made = await memory.create_entities({ entities: [{ name: 'x', entityType: 't', observations: [] }] });",
      "console.log('created', made.tool);",
      "const gone = await memory.delete_entities({ entityNames: ['x'] });",
      "return [made.tool, gone.tool];",
    ].join("\n");
    const calls = async () => (await replayStats("code-pause")).calls.map((c) => c.name);
    const before = (await calls()).length;
    const paused = await execute(s, program);
    expect(paused.isError).toBe(true);
    expect(errorKindOf(paused)).toMatchObject({ kind: "program_failed", cause: "approval" });
    const id = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(paused))?.[1];
    expect(text(paused)).toMatch(/^The program paused before memory\.delete_entities\(\{"entityNames":\["x"\]\}\): calls of this tool need the user's consent/);
    expect(text(paused)).toContain("the 1 call already made will not be made again");
    expect(id).toBeDefined();
    expect((await calls()).slice(before)).toEqual(["create_entities"]);

    // Another program under that id, and an id that is no paused program, are refused; neither uses it up.
    expect(text(await call(s, "execute", { code: "return 1;", approve: id }))).toBe(`"${id}" paused a different program: resume it with the same code.`);
    const resumed = await call(s, "execute", { code: program, approve: id });
    expect(resumed.isError, text(resumed)).toBeFalsy();
    expect(text(resumed)).toBe('["create_entities","delete_entities"]\n\nconsole:\ncreated create_entities');
    expect((await calls()).slice(before)).toEqual(["create_entities", "delete_entities"]);
    const again = await call(s, "execute", { code: program, approve: id });
    expect(text(again)).toMatch(/^No program paused as "pr_[^"]+" waits in this session/);
    expect((await calls()).slice(before)).toEqual(["create_entities", "delete_entities"]);

    // A program that asks for something else on resume is stopped there: nothing from that point on is made.
    const drifting = "const t = crypto.randomUUID();\nawait memory.open_nodes({ names: [t] });\nawait memory.delete_entities({ entityNames: [t] });";
    const first = await execute(s, drifting);
    const driftId = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(first))?.[1];
    const counted = (await calls()).length;
    const drifted = await call(s, "execute", { code: drifting, approve: driftId });
    expect(errorKindOf(drifted)).toMatchObject({ kind: "program_failed", cause: "approval" });
    expect(text(drifted)).toMatch(/^On resume the program's call 1 was memory\.open_nodes\(\{"names":\["[0-9a-f-]{36}"\]\}\), where it was memory\.open_nodes\(\{"names":\["[0-9a-f-]{36}"\]\}\) before; nothing from there on was run\./);
    expect((await calls()).length).toBe(counted);
    await s.client.close();
  });
});

describe("consent holds whatever the program's timing", () => {
  const names = async (route: string) => (await replayStats(route)).calls.map((c) => c.name);
  /** A code session of a team whose deletes need consent, over the route `code-<route>` (team `cv-<route>`). */
  const guarded = async (route: string) => {
    const token = await seedTeam(`cv-${route}`, { approve: ["*delete*"], mcp: { memory: { url: replayUrl(`code-${route}`) } } });
    return connectAt(`cv-${route}`, token, "?view=code");
  };
  /** The same, its server connected first (describe waits for it), so only the program's own timing is at play. */
  const guardedConnected = async (route: string) => {
    const s = await guarded(route);
    expect(text(await describeApi(s, "memory.delete_entities"))).toContain("@needsApproval");
    return s;
  };
  const idOf = (result: CallToolResult) => /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(result))?.[1];

  it("decides consent on the tool the call resolves to: a call made while its eager server still connects waits for it, then pauses", async () => {
    const s = await guarded("pause-early");
    // The session's first request after initialize: the server's own initialize takes 400 ms, so it is still connecting.
    const paused = await execute(s, "return (await memory.delete_entities({ entityNames: ['early'] })).tool;");
    expect(errorKindOf(paused)).toMatchObject({ kind: "program_failed", cause: "approval" });
    expect(idOf(paused)).toBeDefined();
    expect(await names("code-pause-early")).not.toContain("delete_entities");
    await s.client.close();
  });

  it("gives the resume id when two calls need consent at once, and resumes them one pause at a time, each made once", async () => {
    const s = await guardedConnected("pause-two");
    const program = [
      "const [g, a, b] = await Promise.all([",
      "  memory.read_graph({}),",
      "  memory.delete_entities({ entityNames: ['a'] }),",
      "  memory.delete_entities({ entityNames: ['b'] }),",
      "]);",
      "return [g.tool, a.arguments.entityNames[0], b.arguments.entityNames[0]];",
    ].join("\n");
    const first = await execute(s, program);
    expect(errorKindOf(first)).toMatchObject({ kind: "program_failed", cause: "approval" });
    const id = idOf(first);
    expect(id, text(first)).toBeDefined();
    expect(await names("code-pause-two")).toEqual(["read_graph"]);
    const second = await call(s, "execute", { code: program, approve: id });
    const next = idOf(second);
    expect(next, text(second)).toBeDefined();
    expect(text(second)).toMatch(/^The program paused before memory\.delete_entities\(\{"entityNames":\["b"\]\}\)/);
    const done = await call(s, "execute", { code: program, approve: next });
    expect(done.isError, text(done)).toBeFalsy();
    expect(JSON.parse(text(done))).toEqual(["read_graph", "a", "b"]);
    const calls = (await replayStats("code-pause-two")).calls;
    expect(calls.map((c) => [c.name, (c.arguments as { entityNames?: string[] }).entityNames?.[0]])).toEqual([
      ["read_graph", undefined],
      ["delete_entities", "a"],
      ["delete_entities", "b"],
    ]);
    await s.client.close();
  });

  it("makes no call once the run is pausing, so the resume makes none twice (upstream calls take 300 ms)", async () => {
    const s = await guardedConnected("pause-slow");
    const program = [
      "const g = memory.read_graph({});",
      "const d = memory.delete_entities({ entityNames: ['a'] });",
      "await new Promise((r) => setTimeout(r, 50));",
      "const c = memory.create_entities({ entities: [{ name: 'e', entityType: 't', observations: [] }] });",
      "const all = await Promise.all([g, d, c]);",
      "return all.map((r) => r.tool);",
    ].join("\n");
    const paused = await execute(s, program);
    const id = idOf(paused);
    expect(id, text(paused)).toBeDefined();
    expect(await names("code-pause-slow")).toEqual(["read_graph"]);
    const resumed = await call(s, "execute", { code: program, approve: id });
    expect(resumed.isError, text(resumed)).toBeFalsy();
    expect(JSON.parse(text(resumed))).toEqual(["read_graph", "delete_entities", "create_entities"]);
    expect(await names("code-pause-slow")).toEqual(["read_graph", "delete_entities", "create_entities"]);
    await s.client.close();
  });
});

describe("upstream faults reach a program as errors it can catch", () => {
  it("answers each fault on its own call (a read-only call cut mid-answer made once more, a write never repeated, a lazy server silent on every method); the others and the session go on", async () => {
    const route = (name: string) => ({ url: replayUrl(`code-flt-${name}`) });
    // The hung call's own timeout is well within the run's wall limit (2 s in the tests): the program sees it fail.
    const hang = { ...route("hang"), timeout: 700 };
    // A lazy server that answers nothing at all, initialize included: its load fails at its timeout, inside the run.
    const silent = { ...route("hang-all"), timeout: 700, description: "Never answers." };
    const token = await seedTeam("cv-faults", {
      mcp: { e500: route("500"), cutro: route("cut-ro"), cutrw: route("cut-rw"), html: route("html"), huge: route("huge"), hang, silent, good: { url: replayUrl("memory") } },
    });
    const s = await connectAt("cv-faults", token, "?view=code");
    // Every server connected before the run (describing a namespace waits for them), so the wall clock counts the calls alone.
    expect(text(await describeApi(s, "good"))).toMatch(/^good \(9 methods\)\n- good\.add_observations: /);
    const program = [
      "const outcome = (p) => p.then((v) => ({ ok: typeof v }), (e) => ({ error: e.message }));",
      "const [a, b, c, d, e, f, g, h] = await Promise.all([",
      "  outcome(e500.read_graph()),",
      "  outcome(cutro.read_graph()),",
      "  outcome(cutrw.create_entities({ entities: [] })),",
      "  outcome(html.read_graph()),",
      "  outcome(huge.read_graph()),",
      "  outcome(hang.read_graph()),",
      "  outcome(good.read_graph()),",
      "  outcome(silent.read_graph()),",
      "]);",
      "return { e500: a, cutRead: b, cutWrite: c, html: d, huge: e, hang: f, good: g, silent: h };",
    ].join("\n");
    const ran = await execute(s, program);
    expect(ran.isError, text(ran)).toBeFalsy();
    const got = JSON.parse(text(ran)) as Record<string, { ok?: string; error?: string }>;
    expect(got.e500?.error).toContain('"e500" answered HTTP 500');
    expect(got.cutRead).toEqual({ ok: "object" });
    expect(got.cutWrite?.error).toContain("may or may not have run");
    expect(got.html?.error).toMatch(/^html\.read_graph failed: "html" broke the MCP protocol \(.+\)$/);
    expect(got.huge?.error).toMatch(/larger than \d+ bytes; it was refused/);
    expect(got.hang?.error).toMatch(/^hang\.read_graph failed: .*700 ms/);
    expect(got.good).toEqual({ ok: "object" });
    expect(got.silent?.error).toBe('Failed to load "silent" (attempt 1 of 3): "silent" did not answer within 700 ms; the request was cancelled. It can be loaded again.');
    expect((await replayStats("code-flt-cut-ro")).methods["tools/call"]).toBe(2);
    expect((await replayStats("code-flt-cut-rw")).calls.filter((c) => c.name === "create_entities")).toHaveLength(1);
    expect(text(await execute(s, "return (await good.read_graph()).tool;"))).toBe('"read_graph"');
    await s.client.close();
  });
});

describe("accounting", () => {
  let logged: string[] = [];
  beforeEach(() => {
    logged = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
  });
  afterEach(() => vi.restoreAllMocks());

  it("logs each run without its code or output, and counts it in the team's usage", async () => {
    const token = await seedTeam("cv-usage", { mcp: { memory: { url: replayUrl("memory") } } });
    const s = await connectAt("cv-usage", token, "?view=code");
    await s.client.listTools();
    await search(s, "graph");
    await describeApi(s, "memory.read_graph");
    await execute(s, "const secretWord = 'zebra-payload';\nawait memory.read_graph();\nreturn secretWord;");
    const executeLine = () => logged.map((l) => (l.startsWith("{") ? (JSON.parse(l) as Record<string, unknown>) : {})).find((l) => l.event === "execute" && l.team === "cv-usage");
    // The per-run line is written just after the answer (src/lib/log.ts).
    expect(await waitFor(() => executeLine() !== undefined)).toBe(true);
    const line = executeLine();
    expect(line).toMatchObject({ event: "execute", team: "cv-usage", calls: 1, outcome: "ok" });
    expect(logged.join("\n")).not.toContain("zebra-payload");
    await s.transport.terminateSession();
    await s.client.close();
    const usage = await waitForUsage("cv-usage");
    expect(usage.calls).toMatchObject({ searches: 1, lookups: 1, executes: 1, tools: 1 });
    expect(usage.answers.executes).toBeGreaterThan(0);
    expect(usage.listed).toBeGreaterThan(100);
  });
});

/** The team's usage totals once the closed session's figures have reached its index. */
async function waitForUsage(team: string): Promise<{ listed: number; calls: Record<string, number>; answers: Record<string, number> }> {
  for (let i = 0; i < 50; i++) {
    const res = await adminFetch("GET", `/teams/${team}/usage`);
    const body = (await res.json()) as { totals: { listed: number; calls: Record<string, number>; answers: Record<string, number> } };
    if ((body.totals.calls.executes ?? 0) > 0) return body.totals;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no usage recorded for ${team}`);
}
