// The team's policies enforced (src/config/tool-access.ts, applied where a catalog enters an object and again at the
// one call path): two labelled team tokens of one team, served concurrently in one isolate, each see exactly their
// catalog in every view of both eras; a tool hidden from a caller, called by name, is answered exactly as a tool that
// does not exist (its suggestions naming only what the caller sees) and never reaches its upstream; a server hidden
// whole is gone with its resources and prompts, and load_mcp answers as for an unknown server.
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { adminFetch, connectAt, discoverDescription, replayStats, replayUrl, seedTeam, text, waitFor } from "./helpers.ts";
import { modernClient } from "./modern-client.ts";
import { store } from "./sign-in-helpers.ts";

const LATER = "A knowledge graph loaded on demand.";
const config = (suffix: string) => ({
  mcp: {
    mem: { url: replayUrl(`pol-mem${suffix}`) },
    secret: { url: replayUrl("pol-secret") },
    later: { url: replayUrl("pol-lazy"), description: LATER },
  },
  policies: [
    { who: ["*"], deny: ["*/delete_*", "secret/*"] },
    { who: ["token:reader"], allow: ["mem/read_graph", "mem/search_nodes", "mem/open_nodes"] },
  ],
});

const MEMORY = ["create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"];
const READER = ["read_graph", "search_nodes", "open_nodes"];
const WRITER = MEMORY.filter((tool) => !tool.startsWith("delete_"));
/** What each label sees of `mem` (and the writer of `later` once loaded); the rest of MEMORY is hidden from it. */
const SEES = { reader: READER, writer: WRITER } as const;
type Label = keyof typeof SEES;

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown };

/** An answer with the name it was about written NAME, times as N, and its closest-names list in code-point order (the order follows the query). */
function shape(result: Result, name: string): { isError: boolean | undefined; text: string } {
  const words = unnamed(text(result), name).replace(/\(\d+ ms\)/g, "(N ms)");
  const sorted = words.replace(/(closest first\): )([^\n]*?)( … and \d+ more[^\n]*|\.|$)/, (_all, head: string, list: string, end: string) => head + list.split(", ").sort().join(", ") + end);
  return { isError: result.isError, text: sorted };
}

/** The text with the name it answers written NAME, and the name's server or namespace (a program's unknown global) SERVER. */
const unnamed = (words: string, name: string): string => words.split(name).join("NAME").split(name.split(/[./]|__/)[0]!).join("SERVER");

/** The hidden name is answered exactly as a name that does not exist, naming no tool the caller does not see. */
async function answeredAsMissing(call: (name: string) => Promise<Result>, hidden: string, missing: string, label: Label): Promise<void> {
  const [gotHidden, gotMissing] = await Promise.all([call(hidden), call(missing)]);
  expect(gotHidden.isError).toBe(true);
  expect(shape(gotHidden, hidden)).toEqual(shape(gotMissing, missing));
  expectOnlySeen(unnamed(text(gotHidden), hidden), label);
}

/** No tool of `mem` hidden from the label, and nothing of `secret`, appears in the text. */
function expectOnlySeen(words: string, label: Label): void {
  for (const tool of MEMORY.filter((t) => !(SEES[label] as readonly string[]).includes(t))) expect(words).not.toContain(tool);
  expect(words).not.toMatch(/secret|get-sum|simple-prompt/);
  if (label === "reader") expect(words).not.toContain("later");
}

const call = (client: { callTool: (params: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> }, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<Result>;

/** The team with its two tokens, labelled `reader` and `writer`. */
async function policyTeam(team: string, suffix = ""): Promise<Record<Label, string>> {
  await seedTeam(team, config(suffix));
  const [reader, writer] = await Promise.all([store().mintToken(team, "reader"), store().mintToken(team, "writer")]);
  return { reader: reader.token, writer: writer.token };
}

/** The meta view (either era): discover_tool's description, search and lookups, use_tool and load_mcp. */
async function metaTour(client: Client | ModernClient, label: Label, description: string): Promise<void> {
  for (const tool of MEMORY) {
    if ((SEES[label] as readonly string[]).includes(tool)) expect(description).toContain(`- ${tool}: `);
  }
  expectOnlySeen(description, label);
  if (label === "writer") expect(description).toContain("later");
  for (const query of ["delete entities from the graph", "create entities", "echo a message", "sum two numbers"]) {
    expectOnlySeen(text(await call(client, "discover_tool", { query })), label);
  }
  await answeredAsMissing((name) => call(client, "discover_tool", { tool_name: name }), "mem/delete_entities", "mem/delete_entitiez", label);
  await answeredAsMissing((server) => call(client, "discover_tool", { query: "echo", server }), "secret", "nowhere", label);
  await answeredAsMissing((name) => call(client, "use_tool", { tool_name: name, tool_input: { entityNames: ["x"] } }), "mem/delete_entities", "mem/delete_entitiez", label);
  await answeredAsMissing((name) => call(client, "use_tool", { tool_name: name, tool_input: { message: "x" } }), "secret/echo", "nowhere/echo", label);
  if (label === "reader") {
    await answeredAsMissing((name) => call(client, "use_tool", { tool_name: name, tool_input: { entities: [] } }), "mem/create_entities", "mem/create_entitiez", label);
    await answeredAsMissing((name) => call(client, "load_mcp", { mcp_name: name }), "later", "nowhere", label);
  }
  await answeredAsMissing((name) => call(client, "load_mcp", { mcp_name: name }), "secret", "nowhere", label);
  expect((await call(client, "use_tool", { tool_name: "mem/read_graph", tool_input: {} })).isError).toBeFalsy();
}

/** The code view (either era): the namespaces, search, describe, and a program's calls by name. */
async function codeTour(client: Client | ModernClient, label: Label): Promise<void> {
  const { tools } = await client.listTools();
  const execute = tools.find((t) => t.name === "execute")!.description ?? "";
  expect(execute).toMatch(/^- mem\b/m);
  expect(execute).not.toMatch(/^- secret\b/m);
  if (label === "reader") expect(execute).not.toMatch(/^- later\b/m);
  else expect(execute).toMatch(/^- later\b/m);
  for (const query of ["delete entities", "create entities", "echo", "mem"]) expectOnlySeen(text(await call(client, "search", { query })), label);
  expectOnlySeen(text(await call(client, "describe", { path: "mem" })), label);
  await answeredAsMissing((path) => call(client, "describe", { path }), "mem.delete_entities", "mem.delete_entitiez", label);
  await answeredAsMissing((path) => call(client, "describe", { path }), "secret", "nowhere", label);
  await answeredAsMissing((server) => call(client, "search", { query: "echo", server }), "secret", "nowhere", label);
  const program = (path: string) => `return await ${path}({ entityNames: ["x"], message: "x" });`;
  await answeredAsMissing((path) => call(client, "execute", { code: program(path) }), "mem.delete_entities", "mem.delete_entitiez", label);
  await answeredAsMissing((path) => call(client, "execute", { code: program(path) }), "secret.echo", "nowhere.echo", label);
  expect((await call(client, "execute", { code: "return await mem.read_graph({});" })).isError).toBeFalsy();
}

/** No hidden tool reached its upstream: no delete_* call on the routes, nothing at all on the hidden server. */
async function nothingHiddenCalled(route: string): Promise<void> {
  const [mem, lazy, secret] = await Promise.all([replayStats(route), replayStats("pol-lazy"), replayStats("pol-secret")]);
  expect(mem.calls.map((c) => c.name)).toContain("read_graph");
  expect([...mem.calls, ...lazy.calls].filter((c) => c.name.startsWith("delete_") || c.name === "create_entities")).toEqual([]);
  expect(secret.calls).toEqual([]);
}

describe("tool policies, enforced in every view", () => {
  it("2025 sessions: each token sees exactly its catalog in the meta, direct and code views, concurrently; hidden tools and servers are unknown and never called", async () => {
    const tokens = await policyTeam("pol-2025");
    await Promise.all(
      (["reader", "writer"] as const).map(async (label) => {
        const meta = await connectAt("pol-2025", tokens[label]);
        await metaTour(meta.client, label, await discoverDescription(meta.client));
        // The server hidden whole takes its resources, templates and prompts with it.
        expect((await meta.client.listResources()).resources.map((r) => r.uri)).toEqual(["memory://knowledge-graph"]);
        expect((await meta.client.listResourceTemplates()).resourceTemplates).toEqual([]);
        expect((await meta.client.listPrompts()).prompts).toEqual([]);
        await meta.client.close();

        const direct = await connectAt("pol-2025", tokens[label], "?view=direct");
        const listed = (await direct.client.listTools()).tools.map((t) => t.name).sort();
        const expected = [...SEES[label].map((t) => `mem__${t}`), ...(label === "writer" ? WRITER.map((t) => `later__${t}`) : [])].sort();
        expect(listed).toEqual(expected);
        await answeredAsMissing((name) => call(direct.client, name, { entityNames: ["x"] }), "mem__delete_entities", "mem__delete_entitiez", label);
        await answeredAsMissing((name) => call(direct.client, name, { message: "x" }), "secret__echo", "nowhere__echo", label);
        await direct.client.close();

        const code = await connectAt("pol-2025", tokens[label], "?view=code");
        await codeTour(code.client, label);
        await code.client.close();
      }),
    );
    await nothingHiddenCalled("pol-mem");
    // The trail records a hidden tool called by name as denied (the caller was told it does not exist), for each
    // token, by whichever view's name it was called (use_tool, a direct name, a program's path), and a load of a
    // server hidden from the caller too; a name that exists nowhere stays an unknown tool or server.
    let entries: Array<{ kind: string; view: string; tool: string; outcome: string; principal: { label?: string } }> = [];
    const denials = () => entries.filter((e) => e.outcome === "denied").map((e) => `${e.principal.label} ${e.kind} ${e.view} ${e.tool}`);
    const hiddenCalls = (label: Label) => [
      ...["meta", "direct", "code"].map((view) => `${label} tool_call ${view} mem/delete_entities`),
      ...["meta", "direct"].map((view) => `${label} tool_call ${view} secret/echo`),
    ];
    const hiddenLoads = (label: Label) => [...(label === "reader" ? [`${label} load meta later`] : []), `${label} load meta secret`];
    const expected = (["reader", "writer"] as const).flatMap((label) => [...hiddenCalls(label), ...hiddenLoads(label)]);
    expect(
      await waitFor(async () => {
        const res = await adminFetch("GET", "/teams/pol-2025/audit?limit=1000");
        entries = ((await res.json()) as { entries: typeof entries }).entries;
        return expected.every((e) => denials().includes(e));
      }),
    ).toBe(true);
    expect(entries.filter((e) => e.tool.startsWith("nowhere")).map((e) => e.outcome)).not.toContain("denied");
    expect(entries.filter((e) => e.kind === "load" && e.tool === "nowhere").map((e) => e.outcome)).toContain("unknown_server");
  });

  it("2026-07-28 objects: each token's tools/list, discover_tool, use_tool, load_mcp and the code view show only its catalog, concurrently", async () => {
    const tokens = await policyTeam("pol-2026", "-code");
    await Promise.all(
      (["reader", "writer"] as const).map(async (label) => {
        const meta = await modernClient("pol-2026", tokens[label]);
        const { tools } = await meta.listTools();
        await metaTour(meta, label, tools.find((t) => t.name === "discover_tool")!.description ?? "");
        expect((await meta.listResources()).resources.map((r) => r.uri)).toEqual(["memory://knowledge-graph"]);
        expect((await meta.listPrompts()).prompts).toEqual([]);
        await meta.close();

        const code = await modernClient("pol-2026", tokens[label], "?view=code");
        await codeTour(code, label);
        await code.close();
      }),
    );
    await nothingHiddenCalled("pol-mem-code");
  });

  it("without policies every tool and server is there as before", async () => {
    const token = await seedTeam("pol-none", { mcp: { mem: { url: replayUrl("pol-mem") }, secret: { url: replayUrl("pol-secret") } } });
    const meta = await connectAt("pol-none", token);
    const description = await discoverDescription(meta.client);
    for (const tool of MEMORY) expect(description).toContain(`- ${tool}: `);
    expect(description).toMatch(/^secret:$/m);
    expect((await meta.client.listPrompts()).prompts.length).toBeGreaterThan(0);
    expect((await meta.client.listResources()).resources.length).toBeGreaterThan(1);
    await meta.client.close();
  });
});
