// The 2026-07-28 era's tools/list through `wrangler dev`: discover_tool's description carries the team's catalog (what
// a 2025 session's shows: server-everything's tools, the lazy server under <mcp_servers>), the same bytes for hosts in
// processes of their own holding the same token (and another token of the team), unchanged by load_mcp; an eager
// upstream that adds a tool and says so changes it, and the team's listen stream hears notifications/tools/list_changed.
// `?view=direct` is refused with a 400 JSON-RPC error, which sends an automatic client to a 2025 session (direct view).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { getEncoding } from "js-tiktoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { E2E_SECRETS_KEY, provisionByAdmin } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { waitFor } from "../shared/wait.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";

const ADMIN_TOKEN = "e2e-list-admin";
const GRAPH = "A knowledge graph of the team's people and projects.";
const encoder = getEncoding("o200k_base");
type Tool = { name: string; description?: string; inputSchema?: unknown };
/** What a host pays for a list (shared/corpus/README.md, "host tokens"), counted with js-tiktoken. */
const paid = (tools: Tool[]) => encoder.encode(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))), [], []).length;

let stack: DevStack;
let token: string;
let mate: string;
const mcpUrl = (query = "") => stack.mcpUrl("eras-list", query);
const proxyUrl = () => `http://127.0.0.1:${stack.port}`;

beforeAll(async () => {
  const memory = loadCorpus("modelcontextprotocol__server-memory");
  stack = await startDevStack({
    name: "modern-list",
    replay: {
      // Eager; a call makes it add a tool and say so (list_changed on the call's stream).
      grow: { catalog: { ...memory, capabilities: { tools: { listChanged: true } } }, growOnCall: true },
      graph: { catalog: memory },
    },
    vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN },
    provision: () => {},
  });
  const config = { mcp: { everything: { url: stack.everything.url }, grow: { url: stack.replay.url("grow") }, graph: { url: stack.replay.url("graph"), description: GRAPH } } };
  token = await provisionByAdmin(proxyUrl(), ADMIN_TOKEN, "eras-list", config);
  mate = await provisionByAdmin(proxyUrl(), ADMIN_TOKEN, "eras-list", config, "mate");
}, 120_000);

afterAll(() => stack?.stop());

/** One tools/list by a host in a process of its own (harness/list-tools.ts): the era it spoke, the answer's message as it came. */
function listInOwnProcess(url: string, as: string): Promise<{ era: string; raw: string }> {
  const script = join(import.meta.dirname, "..", "..", "harness", "list-tools.ts");
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, url, as], { encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`list-tools failed: ${stderr}`)) : resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as { era: string; raw: string }),
    );
  });
}

const toolsOf = (raw: string) => (JSON.parse(raw) as { result: { tools: Tool[]; ttlMs: number } }).result;

/** A v2 client in automatic mode, in this process. */
async function modernClient(query = "") {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl(query)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "e2e-list", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  return client;
}

describe("the 2026-07-28 tools/list through wrangler dev", () => {
  it("carries the team's catalog, the same bytes for two host processes with one token and for another token, and load_mcp changes nothing", async () => {
    const [a, b] = await Promise.all([listInOwnProcess(mcpUrl(), token), listInOwnProcess(mcpUrl(), token)]);
    expect(a.era).toBe("modern");
    expect(b.raw).toBe(a.raw);
    expect((await listInOwnProcess(mcpUrl(), mate)).raw).toBe(a.raw);
    const { tools } = toolsOf(a.raw);
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    const description = tools[0]!.description!;
    expect(description).toMatch(/^everything:\n- /m);
    expect(description).toContain("<mcp_servers>\ngraph: " + GRAPH);
    expect(paid(tools)).toBeLessThanOrEqual(1500);
    // The same eager tools as the description of a 2025 session whose host can do what the 2026 era tells upstreams it
    // can (server-everything lists its elicitation and sampling tools only to such clients), in the same words.
    const legacy = new LegacyClient({ name: "e2e-legacy", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    await legacy.connect(new LegacyTransport(new URL(mcpUrl()), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const legacyDescription = (await legacy.listTools()).tools[0]!.description!;
    await legacy.close();
    const block = (text: string) => /^<tools>\n[\s\S]*?\n<\/tools>$/m.exec(text)?.[0];
    expect(block(description)).toBe(block(legacyDescription));

    const client = await modernClient();
    const loaded = (await client.callTool({ name: "load_mcp", arguments: { mcp_name: "graph" } })) as { isError?: boolean };
    expect(loaded.isError).toBeFalsy();
    await client.close();
    expect((await listInOwnProcess(mcpUrl(), token)).raw).toBe(a.raw);
  });

  it("an eager upstream's added tool changes discover_tool's description for every token, and the listen stream hears it", async () => {
    const before = toolsOf((await listInOwnProcess(mcpUrl(), token)).raw).tools[0]!.description!;
    expect(before).not.toContain("- added_");
    const listener = await modernClient();
    let heard = 0;
    listener.setNotificationHandler("notifications/tools/list_changed", () => void heard++);
    const subscription = await listener.listen({ toolsListChanged: true });

    const caller = await modernClient();
    const called = (await caller.callTool({ name: "use_tool", arguments: { tool_name: "grow/read_graph", tool_input: {} } })) as { isError?: boolean };
    expect(called.isError).toBeFalsy();
    await caller.close();
    expect(await waitFor(() => heard >= 1, { tries: 250 })).toBe(true);

    const after = await listInOwnProcess(mcpUrl(), token);
    expect(toolsOf(after.raw).tools[0]!.description).toMatch(/^- added_\d+: Added by a call$/m);
    expect((await listInOwnProcess(mcpUrl(), mate)).raw).toBe(after.raw);
    await subscription.close();
    await listener.close();
  });

  it("refuses ?view=direct with a 400 JSON-RPC error naming meta and code; an automatic client then opens a 2025 session, in the direct view", async () => {
    const res = await fetch(mcpUrl("?view=direct"), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toContain("this era serves ?view=meta or ?view=code");

    const client = await modernClient("?view=direct");
    expect(client.getProtocolEra()).toBe("legacy");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("everything__get-sum");
    await client.close();
  });
});
