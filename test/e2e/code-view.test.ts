// The code view as a user gets it under `wrangler dev` (which serves the Worker Loader binding): a team whose config
// makes code its default view, the SDK Client going search → describe → execute with one program that calls two
// upstreams (server-everything and a replay of the memory server) and a lazy one, the sandbox refusing the network,
// and a failing program answered with its line while the session goes on.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
let dir: string;
let everything: Running;
let replay: ReplayServer;
let proxy: Running;
let port: number;
let token: string;
const mcpUrl = (query = "") => `http://127.0.0.1:${port}/t/code/mcp${query}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-e2e-code-"));
  const state = join(dir, "state");
  const memory = loadCorpus("modelcontextprotocol__server-memory");
  [everything, replay] = await Promise.all([startEverything(), startReplayServer({ notes: { catalog: memory }, graph: { catalog: memory } })]);
  token = provisionTeam(dir, state, "code", {
    view: "code",
    mcp: {
      everything: { url: everything.url },
      notes: { url: replay.url("notes") },
      graph: { url: replay.url("graph"), description: "A knowledge graph; load it to remember facts." },
    },
  });
  port = await freePort();
  proxy = await startWranglerDev({ persistTo: state, vars: VARS, port });
});

afterAll(async () => {
  await Promise.all([proxy?.stop(), everything?.stop(), replay?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("the code view through wrangler dev", () => {
  it("goes search → describe → execute, one program calling two upstreams and loading a lazy one", async () => {
    const { client } = await connectClient(mcpUrl(), token);
    const call = (name: string, args: Record<string, unknown>) =>
      client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema) as Promise<CallToolResult>;
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);

    const found = text(await call("search", { query: "sum of two numbers" }));
    expect(found.split("\n")[0]).toMatch(/^everything\.get_sum: /);
    const declared = text(await call("describe", { path: "everything.get_sum" }));
    expect(declared).toMatch(/^declare const everything: \{\n[^]*get_sum\(input: \{[^]*a: number;[^]*b: number;/);

    const graphInits = (await replay.stats("graph")).methods.initialize ?? 0;
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
    const calls = (await replay.stats("notes")).calls;
    expect(calls.at(-1)).toEqual({ name: "create_entities", arguments: { entities: [{ name: "answer", entityType: "number", observations: [expect.stringContaining("42")] }] } });
    expect((await replay.stats("graph")).methods.initialize).toBe(graphInits + 1);
    await client.close();
  });

  it("refuses the network in the sandbox, answers a failing program with its line, and the session goes on", async () => {
    const { client } = await connectClient(mcpUrl("?view=code"), token);
    const call = (code: string) =>
      client.request({ method: "tools/call", params: { name: "execute", arguments: { code } } }, CallToolResultSchema) as Promise<CallToolResult>;
    const net = await call(`try { await fetch(${JSON.stringify(everything.url)}); return "reached"; } catch (e) { return String(e); }`);
    expect(text(net)).toMatch(/not permitted to access the internet/);
    const failed = await call("const x = 1;\nconst y = await notes.read_graph();\nnull.boom;");
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^The program failed \(error\) at line 3:\d+: TypeError: /);
    expect(text(await call("return 6 * 7;"))).toBe("42");
    await client.close();
  });
});
