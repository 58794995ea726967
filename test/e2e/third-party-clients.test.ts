// Clients the project did not write, against the proxy under `wrangler dev` with server-everything and a replay of
// the memory server (lazy) on loopback: the Vercel AI SDK's MCP client (`@ai-sdk/mcp`), which probes
// `server/discover` first and so speaks the 2026-07-28 era unless told not to (the meta-tools and the code view
// serve it, chosen by the URL, the token or the team config; the direct view is for 2025 sessions, to which asking for it sends the AI SDK), driven the way
// an AI SDK app drives it (its `tools()` wrappers, whose `execute` the model's tool calls reach); and `mcp-remote`,
// the stdio bridge desktop hosts run for remote servers, spawned as they spawn it and spoken to over stdio with a
// bearer header.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ElicitationRequestSchema, createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { packageFile } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY, provisionByAdmin, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

let stack: DevStack;
let token: string;
const ADMIN_TOKEN = "e2e-clients-admin";
const mcpUrl = (query = "") => stack.mcpUrl("clients", query);

beforeAll(async () => {
  stack = await startDevStack({
    name: "clients",
    replay: { graph: { catalog: loadCorpus("modelcontextprotocol__server-memory") } },
    vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN },
    provision: ({ dir, state, everything, replay }) => {
      token = provisionTeam(dir, state, "clients", {
        mcp: { everything: { url: everything.url }, graph: { url: replay.url("graph"), description: "A knowledge graph of the team's people and projects." } },
      });
    },
  });
});

afterAll(() => stack?.stop());

/** An `@ai-sdk/mcp` client as an app creates one: HTTP transport, the bearer token in its headers. */
const aiSdkClient = (query = "", protocolVersionDiscovery?: boolean, as: { url: string; token: string } = { url: mcpUrl(query), token }): Promise<MCPClient> =>
  createMCPClient({
    transport: { type: "http", url: as.url, headers: { authorization: `Bearer ${as.token}` } },
    ...(protocolVersionDiscovery === undefined ? {} : { protocolVersionDiscovery }),
  });

/** A tool call the way the AI SDK makes it when the model asks for one: through the wrapper `tools()` gave. */
async function modelCalls(tools: Record<string, unknown>, name: string, input: Record<string, unknown>): Promise<CallToolResult> {
  const tool = tools[name] as { execute?: (input: unknown, options: { toolCallId: string; messages: unknown[] }) => Promise<unknown> } | undefined;
  expect(tool?.execute, `the AI SDK offers ${name}`).toBeTypeOf("function");
  return (await tool!.execute!(input, { toolCallId: `call-${name}`, messages: [] })) as CallToolResult;
}

describe("the Vercel AI SDK's MCP client (@ai-sdk/mcp)", () => {
  it("by default speaks 2026-07-28 and goes discover → use → load_mcp → use with the toolset, through its tool wrappers", async () => {
    const client = await aiSdkClient();
    try {
      expect(client.initializeResult.protocolVersion).toBe("2026-07-28");
      const tools = await client.tools();
      expect(Object.keys(tools).sort()).toEqual(["discover_tool", "load_mcp", "use_tool"]);
      // What the model reads before any call: the catalog in discover_tool's description.
      const catalog = (tools["discover_tool"] as { description?: string }).description ?? "";
      expect(catalog).toMatch(/^- get-sum: /m);
      expect(catalog).toContain("<mcp_servers>\ngraph: A knowledge graph");
      const found = await modelCalls(tools, "discover_tool", { query: "add two numbers" });
      expect(text(found)).toContain("everything/get-sum");
      const sum = await modelCalls(tools, "use_tool", { tool_name: "everything/get-sum", tool_input: { a: 20, b: 22 } });
      expect(sum.isError).toBeFalsy();
      expect(text(sum)).toContain("42");
      const loaded = await modelCalls(tools, "load_mcp", { mcp_name: "graph" });
      const toolset = loaded.structuredContent?.["toolset"];
      expect(toolset).toBeTypeOf("string");
      // load_mcp answers the index and counts, the handle first; the index again is a call away, with the handle.
      expect(Object.keys(loaded.structuredContent ?? {})[0]).toBe("toolset");
      expect(Object.keys(loaded.structuredContent?.["tools"] as object)).toContain("read_graph");
      const index = await modelCalls(tools, "discover_tool", { server: "graph", toolset });
      expect(text(index)).toContain("\n- read_graph: ");
      const graph = await modelCalls(tools, "use_tool", { tool_name: "graph/read_graph", tool_input: {}, toolset });
      expect(graph.isError).toBeFalsy();
      expect(text(graph)).toContain('"tool":"read_graph"');
      // A bad argument is a tool error the model can read, not a thrown exception: the proxy's own check, which names
      // each wrong field and never echoes a value, and sends nothing upstream.
      const bad = await modelCalls(tools, "use_tool", { tool_name: "everything/get-sum", tool_input: { a: "twenty" } });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/^Invalid arguments for everything\/get-sum \(not sent to the server\): /);
      expect(text(bad)).toMatch(/\bb: required\b/);
      expect(text(bad)).not.toContain("twenty");
    } finally {
      await client.close();
    }
  });

  it("with protocolVersionDiscovery off opens a 2025 session, where ?view=code runs one program over two servers, one loaded by it", async () => {
    const client = await aiSdkClient("?view=code", false);
    try {
      expect(client.initializeResult.protocolVersion).toBe("2025-11-25");
      const tools = await client.tools();
      expect(Object.keys(tools)).toEqual(["search", "describe", "execute"]);
      expect(text(await modelCalls(tools, "search", { query: "add two numbers" }))).toMatch(/^everything\.get_sum: /);
      expect(text(await modelCalls(tools, "describe", { path: "everything.get_sum" }))).toContain("get_sum(input: {");
      const ran = await modelCalls(tools, "execute", {
        code: "async () => {\n  const sum = await everything.get_sum({ a: 1, b: 2 });\n  const read = await graph.read_graph();\n  return { sum, tool: read.tool };\n}",
      });
      expect(ran.isError, text(ran)).toBeFalsy();
      expect(JSON.parse(text(ran).split("\n")[0]!)).toEqual({ sum: "The sum of 1 and 2 is 3.", tool: "read_graph" });
    } finally {
      await client.close();
    }
  });

  it("by default gets ?view=code in the 2026 era too: a program loads the lazy server, which stays loaded for the next connection", async () => {
    const inits = () => stack.replay.stats("graph").methods.initialize ?? 0;
    const client = await aiSdkClient("?view=code");
    const before = inits();
    try {
      expect(client.initializeResult.protocolVersion).toBe("2026-07-28");
      const tools = await client.tools();
      expect(Object.keys(tools)).toEqual(["search", "describe", "execute"]);
      const ran = await modelCalls(tools, "execute", {
        code: "const sum = await everything.get_sum({ a: 4, b: 5 });\nconst read = await graph.read_graph();\nreturn [sum, read.tool];",
      });
      expect(ran.isError, text(ran)).toBeFalsy();
      expect(JSON.parse(text(ran))).toEqual(["The sum of 4 and 5 is 9.", "read_graph"]);
    } finally {
      await client.close();
    }
    expect(inits()).toBe(before + 1);
    const next = await aiSdkClient("?view=code");
    try {
      const ran = await modelCalls(await next.tools(), "execute", { code: "return (await graph.read_graph()).tool;" });
      expect(text(ran)).toBe('"read_graph"');
      expect(inits()).toBe(before + 1);
    } finally {
      await next.close();
    }
  });

  it("by default gets the code view of a team whose config defaults to it, with no view in the URL or the token", async () => {
    const base = `http://127.0.0.1:${stack.port}`;
    const codeToken = await provisionByAdmin(base, ADMIN_TOKEN, "clients-code", { view: "code", mcp: { everything: { url: stack.everything.url } } });
    const client = await aiSdkClient("", undefined, { url: stack.mcpUrl("clients-code"), token: codeToken });
    try {
      expect(client.initializeResult.protocolVersion).toBe("2026-07-28");
      const tools = await client.tools();
      expect(Object.keys(tools)).toEqual(["search", "describe", "execute"]);
      const ran = await modelCalls(tools, "execute", { code: "return await everything.get_sum({ a: 6, b: 7 });" });
      expect(ran.isError, text(ran)).toBeFalsy();
      expect(text(ran)).toBe('"The sum of 6 and 7 is 13."');
    } finally {
      await client.close();
    }
  });

  it("answers a program's consent questions in its default 2026 era through onElicitationRequest: yes makes the call, no throws in the program", async () => {
    const base = `http://127.0.0.1:${stack.port}`;
    const consentToken = await provisionByAdmin(base, ADMIN_TOKEN, "clients-consent", { view: "code", approve: ["*delete*"], mcp: { graph: { url: stack.replay.url("graph") } } });
    const client = await createMCPClient({
      transport: { type: "http", url: stack.mcpUrl("clients-consent"), headers: { authorization: `Bearer ${consentToken}` } },
      capabilities: { elicitation: {} },
    });
    const asked: string[] = [];
    client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
      asked.push(String(request.params.message));
      return asked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    const deletes = () => stack.replay.stats("graph").calls.filter((c) => c.name === "delete_entities").map((c) => (c.arguments as { entityNames: string[] }).entityNames[0]);
    const before = deletes().length;
    try {
      expect(client.initializeResult.protocolVersion).toBe("2026-07-28");
      const program = [
        "const first = await graph.delete_entities({ entityNames: ['kept'] });",
        "let second = 'made';",
        "try { await graph.delete_entities({ entityNames: ['refused'] }); } catch (e) { second = e.message; }",
        "return [first.tool, second];",
      ].join("\n");
      const ran = await modelCalls(await client.tools(), "execute", { code: program });
      expect(ran.isError, text(ran)).toBeFalsy();
      expect(JSON.parse(text(ran))).toEqual(["delete_entities", "The user did not allow graph.delete_entities; it was not called."]);
      expect(asked).toEqual([
        'A program wants to call graph.delete_entities with {"entityNames":["kept"]}. Allow this call?',
        'A program wants to call graph.delete_entities with {"entityNames":["refused"]}. Allow this call?',
      ]);
      expect(deletes().slice(before)).toEqual(["kept"]);
    } finally {
      await client.close();
    }
  });

  it("answers the meta view's consent questions (a policy's approve) in its default 2026 era, and so does the SDK's client in a 2025 session: yes calls, no does not", async () => {
    const base = `http://127.0.0.1:${stack.port}`;
    const config = { policies: [{ who: ["*"], approve: ["graph/delete_entities"] }], mcp: { graph: { url: stack.replay.url("graph") } } };
    const approveToken = await provisionByAdmin(base, ADMIN_TOKEN, "clients-approve", config);
    const deletes = () => stack.replay.stats("graph").calls.filter((c) => c.name === "delete_entities").map((c) => (c.arguments as { entityNames: string[] }).entityNames[0]);
    const question = (name: string) => `The agent wants to call graph/delete_entities with {"entityNames":["${name}"]}. Allow this call?`;
    const use = (name: string) => ({ tool_name: "graph/delete_entities", tool_input: { entityNames: [name] } });
    const before = deletes().length;

    const aiSdk = await createMCPClient({
      transport: { type: "http", url: stack.mcpUrl("clients-approve"), headers: { authorization: `Bearer ${approveToken}` } },
      capabilities: { elicitation: {} },
    });
    const asked: string[] = [];
    aiSdk.onElicitationRequest(ElicitationRequestSchema, async (request) => {
      asked.push(String(request.params.message));
      return asked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    try {
      expect(aiSdk.initializeResult.protocolVersion).toBe("2026-07-28");
      const tools = await aiSdk.tools();
      const yes = await modelCalls(tools, "use_tool", use("ai-yes"));
      expect(yes.isError, text(yes)).toBeFalsy();
      const no = await modelCalls(tools, "use_tool", use("ai-no"));
      expect(no.isError).toBe(true);
      expect(text(no)).toBe("The user did not allow graph/delete_entities; it was not called.");
      expect(asked).toEqual([question("ai-yes"), question("ai-no")]);
    } finally {
      await aiSdk.close();
    }

    const sdk = new Client({ name: "sdk-host", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    const sdkAsked: string[] = [];
    sdk.setRequestHandler(ElicitRequestSchema, async (request) => {
      sdkAsked.push(String(request.params.message));
      return sdkAsked.length === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" };
    });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl("clients-approve")), { requestInit: { headers: { Authorization: `Bearer ${approveToken}` } } }));
    try {
      const yes = (await sdk.callTool({ name: "use_tool", arguments: use("sdk-yes") })) as CallToolResult;
      expect(yes.isError, text(yes)).toBeFalsy();
      const no = (await sdk.callTool({ name: "use_tool", arguments: use("sdk-no") })) as CallToolResult;
      expect(text(no)).toBe("The user did not allow graph/delete_entities; it was not called.");
      expect(sdkAsked).toEqual([question("sdk-yes"), question("sdk-no")]);
    } finally {
      await sdk.close();
    }
    // Only the allowed calls reached the upstream.
    expect(deletes().slice(before)).toEqual(["ai-yes", "sdk-yes"]);
  });

  it("asking for ?view=direct, is refused the 2026 era (its tools/list may not grow as lazy servers load) and opens a 2025 session in the direct view", async () => {
    const client = await aiSdkClient("?view=direct");
    try {
      expect(client.initializeResult.protocolVersion).toBe("2025-11-25");
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("everything__get-sum");
      expect(names).not.toContain("discover_tool");
    } finally {
      await client.close();
    }
  });
});

describe("mcp-remote (the stdio bridge desktop hosts spawn)", () => {
  /** mcp-remote spawned as a host's config spawns it, its OAuth state in the test's directory. */
  async function bridged(query: string): Promise<{ client: Client; log: () => string }> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [packageFile("mcp-remote", "dist", "proxy.js"), mcpUrl(query), "--header", `Authorization:Bearer ${token}`],
      env: { PATH: process.env["PATH"] ?? "", HOME: stack.dir, MCP_REMOTE_CONFIG_DIR: join(stack.dir, "mcp-auth") },
      stderr: "pipe",
    });
    let log = "";
    transport.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: "desktop-host", version: "1.0.0" });
    await client.connect(transport);
    return { client, log: () => log };
  }

  it("bridges the direct view: every tool first-class under its host-safe name, lazy servers' too, called through the bridge", async () => {
    const { client, log } = await bridged("?view=direct");
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("everything__get-sum");
      // The lazy server too: the direct view loads lazy servers at the session's first tools/list.
      expect(names).toContain("graph__read_graph");
      const sum = (await client.callTool({ name: "everything__get-sum", arguments: { a: 5, b: 6 } })) as CallToolResult;
      expect(text(sum)).toContain("11");
      expect(log()).toContain("StreamableHTTPClientTransport");
      expect(log()).not.toContain(token);
    } finally {
      await client.close();
    }
  });

  it("bridges the code view: a program's answer comes back over stdio", async () => {
    const { client } = await bridged("?view=code");
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search", "describe", "execute"]);
      const ran = (await client.callTool({ name: "execute", arguments: { code: "return (await everything.get_sum({ a: 2, b: 3 }));" } })) as CallToolResult;
      expect(ran.isError, text(ran)).toBeFalsy();
      expect(text(ran)).toBe('"The sum of 2 and 3 is 5."');
    } finally {
      await client.close();
    }
  });
});
