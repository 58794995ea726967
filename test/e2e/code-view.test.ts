// The code view as a user gets it under `wrangler dev` (which serves the Worker Loader binding), with the SDK Client
// and real upstreams on loopback: a team whose config makes code its default view going search → describe → execute
// with one program that calls two upstreams (server-everything and a replay of the memory server) and a lazy one;
// each limit of a run, set small here as Worker vars (wall time against a hung upstream, tool calls, result size,
// console output, programs at once); a thrown error, a syntax error, an unknown method and an unknown namespace,
// each answered with its cause and line while the session goes on; and a second team's policies reaching programs:
// a tool its filters hide, a pinned tool whose definition changed, a secret in an upstream's header that nothing in
// the sandbox, the answers or wrangler's output holds, and a call that needs consent pausing the program until an
// execute with its id resumes it, or, for a 2026 host that declares elicitation, asking it in input_required rounds.
// The sandbox refuses the network throughout.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCli } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { waitFor } from "../shared/wait.ts";
import { sandboxProbe } from "../shared/sandbox-probe.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

/** Code mode's limits, small so each can be reached in a test: 1.5 s of wall time, 3 tool calls, 2,000 bytes of result, 200 of console. */
const LIMITS = { CODE_WALL_MS: "1500", CODE_MAX_CALLS: "3", CODE_MAX_RESULT_BYTES: "2000", CODE_MAX_LOG_BYTES: "200" };
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ...LIMITS };
/** The team "guarded"'s secret, sent upstream in the vault entry's Authorization header. */
const SECRET = "sk-e2e-vault-7d41c9a0e25b86f3";
let stack: DevStack;
let guardedToken: string;
let token: string;
const mcpUrl = (query = "", team = "code") => stack.mcpUrl(team, query);

beforeAll(async () => {
  const memory = loadCorpus("modelcontextprotocol__server-memory");
  stack = await startDevStack({
    name: "code",
    replay: {
      notes: { catalog: memory },
      graph: { catalog: memory },
      // Answers initialize and lists, never a tools/call: only the wall limit ends a program waiting on it.
      stuck: { catalog: memory, faults: { "tools/call": { kind: "hang" } } },
      filtered: { catalog: memory },
      pinned: { catalog: memory },
      vault: { catalog: memory },
      consent: { catalog: memory },
    },
    vars: VARS,
    provision: ({ dir, state, everything, replay }) => {
      token = provisionTeam(dir, state, "code", {
        view: "code",
        mcp: {
          everything: { url: everything.url },
          notes: { url: replay.url("notes") },
          graph: { url: replay.url("graph"), description: "A knowledge graph; load it to remember facts." },
          stuck: { url: replay.url("stuck") },
        },
      });
      // The secret first: `team put` refuses a config that references a secret the team does not have.
      const stored = teamCli(["secret", "put", "guarded", "VAULT_TOKEN", "--persist-to", state], {}, `${SECRET}\n`);
      if (stored.status !== 0) throw new Error(`team secret put failed: ${stored.stderr}`);
      guardedToken = provisionTeam(dir, state, "guarded", {
        view: "code",
        pin_tools: true,
        approve: ["*delete*"],
        mcp: {
          filtered: { url: replay.url("filtered"), tools: { deny: ["delete_*"] } },
          pinned: { url: replay.url("pinned") },
          vault: { url: replay.url("vault"), headers: { Authorization: "Bearer ${secret:VAULT_TOKEN}" } },
          consent: { url: replay.url("consent") },
        },
      });
    },
  });
});

afterAll(() => stack?.stop());

describe("the code view through wrangler dev", () => {
  it("goes search → describe → execute, one program calling two upstreams and loading a lazy one", async () => {
    const { client } = await connectClient(mcpUrl(), token);
    const call = (name: string, args: Record<string, unknown>) =>
      client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema) as Promise<CallToolResult>;
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);

    const found = text(await call("search", { query: "sum of two numbers" }));
    expect(found.split("\n")[0]).toMatch(/^everything\.get_sum: /);
    // A namespace described whole answers its index; the describe it names declares methods.
    const index = text(await call("describe", { path: "everything" }));
    expect(index).toContain("\n- everything.get_sum: ");
    expect(index).not.toContain("declare const");
    expect(index.split("\n").at(-1)).toMatch(/^Declarations: describe \{"path":"everything\.[^"]+"\} \(method paths, comma-separated\)\.$/);
    const declared = text(await call("describe", { path: "everything.get_sum" }));
    expect(declared).toMatch(/^declare const everything: \{\n[^]*get_sum\(input: \{[^]*a: number;[^]*b: number;/);

    const graphInits = (await stack.replay.stats("graph")).methods.initialize ?? 0;
    const program = [
      "async () => {",
      "  const sum = await everything.get_sum({ a: 20, b: 22 });",
      "  const noted = await notes.create_entities({ entities: [{ name: 'answer', entityType: 'number', observations: [String(sum)] }] });",
      "  const g = await graph.read_graph();",
      "  console.log('calls made:', 3);",
      "  return { sum, noted: noted.tool, graph: g.tool };",
      "}",
    ].join("\n");
    const ran = await call("execute", { code: program });
    expect(ran.isError, text(ran)).toBeFalsy();
    const [json, ...rest] = text(ran).split("\n");
    const value = JSON.parse(json!) as { sum: unknown; noted: string; graph: string };
    expect(JSON.stringify(value.sum)).toContain("42");
    expect(value).toMatchObject({ noted: "create_entities", graph: "read_graph" });
    expect(rest.join("\n")).toContain("console:\ncalls made: 3");
    const calls = (await stack.replay.stats("notes")).calls;
    expect(calls.at(-1)).toEqual({ name: "create_entities", arguments: { entities: [{ name: "answer", entityType: "number", observations: [expect.stringContaining("42")] }] } });
    expect((await stack.replay.stats("graph")).methods.initialize).toBe(graphInits + 1);
    await client.close();
  });

  it("refuses the network in the sandbox, answers a failing program with its line, and the session goes on", async () => {
    const { client } = await connectClient(mcpUrl("?view=code"), token);
    const call = (code: string) =>
      client.request({ method: "tools/call", params: { name: "execute", arguments: { code } } }, CallToolResultSchema) as Promise<CallToolResult>;
    const net = await call(`try { await fetch(${JSON.stringify(stack.everything.url)}); return "reached"; } catch (e) { return String(e); }`);
    expect(text(net)).toMatch(/not permitted to access the internet/);
    const failed = await call("const x = 1;\nconst y = await notes.read_graph();\nnull.boom;");
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^The program failed \(error\) at line 3:\d+: TypeError: /);
    expect(text(await call("return 6 * 7;"))).toBe("42");
    await client.close();
  });
});

/** A session of `team` in the code view, with execute and the other tools called by raw requests (replayed results carry no structuredContent). */
async function codeSession(team = "code", teamToken = token) {
  const { client } = await connectClient(mcpUrl("?view=code", team), teamToken);
  // Each answer is bounded: the longest a program may run here is the 1.5 s wall limit.
  const call = (name: string, args: Record<string, unknown>) =>
    client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { timeout: 20_000 }) as Promise<CallToolResult>;
  const execute = (code: string, extra: Record<string, unknown> = {}) => call("execute", { code, ...extra });
  return { client, call, execute };
}

/** `_meta["dynmcp/error"]` of a result: the proxy's kind of a failure, with a program's cause, line and column. */
const errorMeta = (result: CallToolResult) => result._meta?.["dynmcp/error"] as Record<string, unknown> | undefined;
const callsOf = (route: string, tool?: string) => stack.replay.stats(route).calls.filter((c) => tool === undefined || c.name === tool);

describe("the limits of a run under wrangler dev", () => {
  it("ends a program waiting on a hung upstream at the wall limit; its late call never goes out, and the session goes on", async () => {
    const { client, execute } = await codeSession();
    const notesBefore = callsOf("notes").length;
    // A hung route never answers, so it records no call: count the requests it received instead.
    const stuckCalls = () => stack.replay.stats("stuck").methods["tools/call"] ?? 0;
    const stuckBefore = stuckCalls();
    const started = Date.now();
    const stuck = await execute("async () => {\n  setTimeout(() => notes.read_graph().catch(() => {}), 2500);\n  return await stuck.read_graph();\n}");
    const took = Date.now() - started;
    expect(stuck.isError).toBe(true);
    expect(errorMeta(stuck)).toMatchObject({ kind: "program_failed", cause: "timeout" });
    expect(text(stuck)).toMatch(/^The program failed \(timeout\): The program did not finish within the wall-time limit of 1500 ms and was stopped\./);
    expect(text(stuck)).toMatch(/Tool calls made \(1\):\n- stuck\.read_graph: failed \(\d+ ms\)/);
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(5_000);
    expect(stuckCalls()).toBe(stuckBefore + 1);
    // The program's timer fires after the deadline: that call is refused by the proxy, not sent upstream.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(callsOf("notes")).toHaveLength(notesBefore);
    expect(text(await execute("return 'still here';"))).toBe('"still here"');
    await client.close();
  });

  it("stops a program at its fourth tool call when the cap is three: the upstream gets exactly three", async () => {
    const { client, execute } = await codeSession();
    const before = callsOf("notes").length;
    const capped = await execute("let n = 0;\nfor (let i = 0; i < 4; i++) { await notes.read_graph(); n++; }\nreturn n;");
    expect(capped.isError).toBe(true);
    expect(errorMeta(capped)).toMatchObject({ kind: "program_failed", cause: "tool_calls" });
    expect(text(capped)).toMatch(/^The program failed \(tool_calls\): Tool call limit reached: a run may make at most 3 tool calls\./);
    expect(text(capped)).toMatch(/Tool calls made \(3\):\n(- notes\.read_graph: ok \(\d+ ms\)\n?){3}/);
    expect(callsOf("notes").slice(before)).toEqual(Array.from({ length: 3 }, () => ({ name: "read_graph", arguments: {} })));
    // Three is allowed.
    expect(text(await execute("for (let i = 0; i < 3; i++) await notes.read_graph();\nreturn 3;"))).toBe("3");
    await client.close();
  });

  it("refuses a return value over the result cap, and keeps console output within its cap, counting the lines dropped", async () => {
    const { client, execute } = await codeSession();
    const big = await execute("return 'x'.repeat(3000);");
    expect(big.isError).toBe(true);
    expect(errorMeta(big)).toMatchObject({ kind: "program_failed", cause: "result_size" });
    expect(text(big)).toMatch(/^The program failed \(result_size\): The program's return value is 3002 bytes of JSON, over the limit of 2000 bytes: return less /);
    expect(text(big)).not.toContain("xxxxxxxxxx");

    // 40 lines of 7 bytes: 25 of them and their 24 newlines are 199 bytes, within the 200 allowed.
    const chatty = await execute("for (let i = 0; i < 40; i++) console.log('line ' + String(i).padStart(2, '0'));\nreturn 'logged';");
    expect(chatty.isError, text(chatty)).toBeFalsy();
    const kept = Array.from({ length: 25 }, (_, i) => `line ${String(i).padStart(2, "0")}`);
    expect(text(chatty)).toBe(['"logged"', "", "console:", ...kept, "… 15 more lines past the console limit"].join("\n"));
    await client.close();
  });

  it("runs at most four programs of a session at once; a fifth is refused as busy, and the session goes on", async () => {
    const { client, execute } = await codeSession();
    const slow = "await new Promise((r) => setTimeout(r, 700));\nreturn 'done';";
    const answers = await Promise.all(Array.from({ length: 5 }, () => execute(slow)));
    const busy = answers.filter((a) => a.isError);
    expect(busy).toHaveLength(1);
    expect(errorMeta(busy[0]!)).toMatchObject({ kind: "program_failed", cause: "busy" });
    expect(text(busy[0]!)).toBe("This session already runs 4 programs, the most it may run at once; wait for one to finish.");
    expect(answers.filter((a) => text(a) === '"done"')).toHaveLength(4);
    expect(text(await execute(slow))).toBe('"done"');
    await client.close();
  });
});

describe("a failing program under wrangler dev", () => {
  it("names the cause and line of a throw and of a syntax error, the closest paths of an unknown method, the namespaces of an unknown one", async () => {
    const { client, execute } = await codeSession();
    const thrown = await execute("const g = await notes.read_graph();\n\nthrow new Error('no ' + g.tool);");
    expect(thrown.isError).toBe(true);
    expect(errorMeta(thrown)).toMatchObject({ kind: "program_failed", cause: "error", line: 3, column: expect.any(Number) });
    expect(text(thrown)).toMatch(/^The program failed \(error\) at line 3:\d+: no read_graph\n\nTool calls made \(1\):\n- notes\.read_graph: ok \(\d+ ms\)$/);

    const syntax = await execute("async () => {\n  return 1 +;\n}");
    expect(syntax.isError).toBe(true);
    expect(errorMeta(syntax)).toMatchObject({ kind: "program_failed", cause: "syntax", line: 2 });
    expect(text(syntax)).toMatch(/^The program failed \(syntax\) at line 2(:\d+)?: /);
    expect(text(syntax)).toContain("No tool was called.");

    const method = await execute("return await notes.read_graf();");
    expect(errorMeta(method)).toMatchObject({ kind: "program_failed", cause: "error", line: 1 });
    expect(text(method)).toMatch(/^The program failed \(error\) at line 1:\d+: Unknown tool: "notes\.read_graf"\. Available tools \(closest first\): notes\.read_graph/);

    const namespace = await execute("return await github.list_issues({});");
    expect(errorMeta(namespace)).toMatchObject({ kind: "program_failed", cause: "error", line: 1 });
    expect(text(namespace)).toMatch(/github is not defined \(the namespaces are: everything, notes, graph, stuck\)/);

    expect(text(await execute("return 40 + 2;"))).toBe("42");
    await client.close();
  });
});

describe("the team's policies reach programs under wrangler dev", () => {
  it("keeps a tool the entry's filters deny out of search, describe and programs; its upstream gets no call", async () => {
    const { client, call, execute } = await codeSession("guarded", guardedToken);
    const found = text(await call("search", { query: "delete entities", server: "filtered" }));
    expect(found).toMatch(/^filtered\.\w+: /);
    expect(found).not.toContain("filtered.delete_entities");
    const index = text(await call("describe", { path: "filtered" }));
    expect(index).toContain("\n- filtered.read_graph: ");
    expect(index).not.toContain("delete_");
    const described = await call("describe", { path: "filtered.delete_entities" });
    expect(errorMeta(described)).toMatchObject({ kind: "unknown_tool" });

    const denied = await execute("async () => { await filtered.delete_entities({ entityNames: ['x'] }); }");
    expect(denied.isError).toBe(true);
    expect(errorMeta(denied)).toMatchObject({ kind: "program_failed", cause: "error", line: 1 });
    expect(text(denied)).toMatch(/^The program failed \(error\) at line 1:\d+: Unknown tool: "filtered\.delete_entities"\./);
    // Caught, it is an Error like any other, and the rest of the program runs.
    const caught = await execute("try { await filtered.delete_entities({ entityNames: ['x'] }); } catch (e) { return (await filtered.read_graph()).tool; }");
    expect(text(caught)).toBe('"read_graph"');
    expect(callsOf("filtered", "delete_entities")).toEqual([]);
    await client.close();
  });

  it("withholds a pinned tool whose definition changed from programs too; the upstream gets no call of it", async () => {
    const first = await codeSession("guarded", guardedToken);
    expect(text(await first.call("describe", { path: "pinned" }))).toMatch(/^- pinned\.create_entities: /m);
    await first.client.close();
    const mutated = (await (await fetch(`http://127.0.0.1:${stack.replay.port}/__mutate/pinned`, { method: "POST" })).json()) as { mutated: string };
    const changed = mutated.mutated;
    expect(changed).toBe("create_entities");

    const { client, call, execute } = await codeSession("guarded", guardedToken);
    // The session may first show the team's cached catalog (the approved definitions), then the upstream's own.
    const named = new RegExp(`^- pinned\\.${changed}: `, "m");
    expect(await waitFor(async () => !named.test(text(await call("describe", { path: "pinned" }))), { tries: 100, ms: 50 })).toBe(true);
    expect(errorMeta(await call("describe", { path: `pinned.${changed}` }))).toMatchObject({ kind: "unknown_tool" });
    expect(text(await call("search", { query: "create entities", server: "pinned" }))).not.toContain(`pinned.${changed}`);

    const withheld = await execute(`return await pinned.${changed}({ entities: [] });`);
    expect(withheld.isError).toBe(true);
    expect(errorMeta(withheld)).toMatchObject({ kind: "program_failed", cause: "error", line: 1 });
    expect(text(withheld)).toMatch(new RegExp(`^The program failed \\(error\\) at line 1:\\d+: Unknown tool: "pinned\\.${changed}"\\.`));
    // The tools whose definitions did not change are still there.
    expect(text(await execute("return (await pinned.read_graph()).tool;"))).toBe('"read_graph"');
    expect(callsOf("pinned", changed)).toEqual([]);
    await client.close();
  });

  it("sends the team's secret upstream while nothing in the sandbox, the answer or wrangler's output holds it", async () => {
    const { client, execute } = await codeSession("guarded", guardedToken);
    const shown = stack.proxy.output().length;
    const probe = await execute(
      sandboxProbe("vault", stack.replay.url("vault")),
    );
    const answer = text(probe);
    expect(probe.isError, answer).toBeFalsy();
    const seen = JSON.parse(answer.split("\n")[0]!) as Record<string, unknown>;
    expect(seen.env).toBe("undefined");
    expect(seen.process).toBe("undefined");
    // No binding or setting of the Worker is a global of the sandbox.
    const bindings = ["TEAMS", "SESSIONS", "TEAM_INDEX", "OAUTH_KV", "LOADER", "ASSETS", "TOKEN_LIMITER", "SECRETS_KEY", "SESSION_KEY", "ADMIN_TOKEN"];
    expect((seen.globals as string[]).filter((g) => bindings.includes(g))).toEqual([]);
    expect(String(seen.fetch)).toMatch(/not permitted to access the internet/);
    expect(seen.graph).toMatchObject({ tool: "read_graph" });
    // The upstream got the secret in its header; nothing the program or anyone watching the proxy saw holds it.
    expect(stack.replay.stats("vault").lastHeaders.authorization).toBe(`Bearer ${SECRET}`);
    expect(answer).not.toContain(SECRET);
    // wrangler dev prints the Worker's log lines: the execute's own is there, the secret is not.
    expect(await waitFor(() => stack.proxy.output().slice(shown).includes('"event":"execute"'), { tries: 50, ms: 50 })).toBe(true);
    expect(stack.proxy.output()).not.toContain(SECRET);
    // Nor is it stored in the clear anywhere in the local state (the team's secret is encrypted; sessions keep none).
    expect(filesHolding(stack.state, SECRET)).toEqual([]);
    await client.close();
  });

  it("pauses a program whose call needs consent when the host cannot be asked; execute with its id makes the call and repeats nothing", async () => {
    const { client, execute } = await codeSession("guarded", guardedToken);
    const program = [
      "const made = await consent.create_entities({ entities: [{ name: 'x', entityType: 't', observations: [] }] });",
      "console.log('created', made.tool);",
      "const gone = await consent.delete_entities({ entityNames: ['x'] });",
      "return [made.tool, gone.tool];",
    ].join("\n");
    const names = () => callsOf("consent").map((c) => c.name);
    const before = names().length;
    const paused = await execute(program);
    expect(paused.isError).toBe(true);
    expect(errorMeta(paused)).toMatchObject({ kind: "program_failed", cause: "approval" });
    expect(text(paused)).toMatch(/^The program paused before consent\.delete_entities\(\{"entityNames":\["x"\]\}\): calls of this tool need the user's consent/);
    expect(text(paused)).toContain("the 1 call already made will not be made again");
    const id = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(paused))?.[1];
    expect(id, text(paused)).toBeDefined();
    expect(names().slice(before)).toEqual(["create_entities"]);

    const resumed = await execute(program, { approve: id });
    expect(resumed.isError, text(resumed)).toBeFalsy();
    expect(text(resumed)).toBe('["create_entities","delete_entities"]\n\nconsole:\ncreated create_entities');
    expect(callsOf("consent").slice(before)).toEqual([
      { name: "create_entities", arguments: { entities: [{ name: "x", entityType: "t", observations: [] }] } },
      { name: "delete_entities", arguments: { entityNames: ["x"] } },
    ]);
    // The id is used up: a second resume makes nothing.
    expect(text(await execute(program, { approve: id }))).toMatch(/^No program paused as "pr_[^"]+" waits in this session/);
    expect(names().slice(before)).toEqual(["create_entities", "delete_entities"]);
    await client.close();
  });

  it("asks a 2026 host that declares elicitation in input_required rounds: its SDK answers and retries, yes makes the call, no throws in the program", async () => {
    const transport = new ModernTransport(new URL(mcpUrl("", "guarded")), { requestInit: { headers: { Authorization: `Bearer ${guardedToken}` } } });
    const client = new ModernClient({ name: "e2e-modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      return asked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const before = callsOf("consent").length;
    const program = [
      "const made = await consent.create_entities({ entities: [{ name: 'y', entityType: 't', observations: [] }] });",
      "const gone = await consent.delete_entities({ entityNames: ['y'] });",
      "let kept = 'no';",
      "try { await consent.delete_entities({ entityNames: ['z'] }); } catch (e) { kept = e.message; }",
      "return [made.tool, gone.tool, kept];",
    ].join("\n");
    const ran = (await client.callTool({ name: "execute", arguments: { code: program } })) as CallToolResult;
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(JSON.parse(text(ran))).toEqual(["create_entities", "delete_entities", "The user did not allow consent.delete_entities; it was not called."]);
    expect(asked).toEqual([
      'A program wants to call consent.delete_entities with {"entityNames":["y"]}. Allow this call?',
      'A program wants to call consent.delete_entities with {"entityNames":["z"]}. Allow this call?',
    ]);
    expect(callsOf("consent").slice(before)).toEqual([
      { name: "create_entities", arguments: { entities: [{ name: "y", entityType: "t", observations: [] }] } },
      { name: "delete_entities", arguments: { entityNames: ["y"] } },
    ]);
    await client.close();
  });
});

/** The files under `root` whose bytes contain `needle`. */
function filesHolding(root: string, needle: string): string[] {
  const found: string[] = [];
  const bytes = Buffer.from(needle);
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path).includes(bytes)) found.push(path);
  }
  return found;
}
