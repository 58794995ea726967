// One MCP session through the proxy, step by step, as an agent's host would run it: list the meta-tools, load a
// lazy server with load_mcp, look one of its tools up with discover_tool and call it with use_tool, then end the
// session. Everything happens in one session: what load_mcp loads lasts for that session only, which is why
// separate one-shot calls (each MCP Inspector CLI command, say) cannot load a server in one call and use it in the
// next.
//
// Against `npm run dev` (the demo team; the token is the one it printed):
//
//   DYNMCP_TOKEN=<token> node_modules/.bin/node examples/session.ts [url] [lazy server] [tool]
//
// url defaults to http://127.0.0.1:8787/t/demo/mcp, the lazy server to `reference` and the tool to `get-sum`
// (called with { a: 2, b: 3 }). The token is read from the environment, never from the command line, and never
// printed. Exit code 0 when every step worked, 1 (with the reason) otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2] ?? "http://127.0.0.1:8787/t/demo/mcp";
const lazy = process.argv[3] ?? "reference";
const tool = `${lazy}/${process.argv[4] ?? "get-sum"}`;
const token = process.env.DYNMCP_TOKEN;
/** Every request of the session gets at most this long (the SDK's default is a minute). */
const TIMEOUT_MS = 30_000;

class StepFailed extends Error {}

const say = (line: string) => process.stdout.write(`${line}\n`);
const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("");

/** Calls a meta-tool; an isError result stops the script with the text the proxy gave. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS })) as CallToolResult;
  if (result.isError) throw new StepFailed(`${name} answered with an error: ${textOf(result)}`);
  return result;
}

async function main(): Promise<void> {
  if (!token) throw new StepFailed("set DYNMCP_TOKEN to the team's token (npm run dev prints one; npm run team -- token <team> mints one)");
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "dynmcp-example-session", version: "1.0.0" });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });

  await client.connect(transport, { timeout: TIMEOUT_MS });
  const sessionId = transport.sessionId;
  let ended = false;
  say(`1. connected to ${url}: one session from here to the end`);
  try {
    // The host sees the meta-tools only; discover_tool's description is the catalog.
    const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
    say(`2. tools/list: ${tools.map((t) => t.name).join(", ")}`);
    const catalog = tools.find((t) => t.name === "discover_tool")?.description ?? "";
    const offered = /<mcp_servers>\n([\s\S]*?)\n<\/mcp_servers>/.exec(catalog)?.[1] ?? "";
    // One `name: description` line per lazy server.
    const lazyNames = [...offered.matchAll(/^(?:- )?([^:\s]+):/gm)].map((m) => m[1]!);
    say(`   lazy servers offered, not loaded yet: ${lazyNames.join(", ") || "(none)"}`);
    if (!lazyNames.includes(lazy)) throw new StepFailed(`the catalog offers no lazy server named "${lazy}" to load`);

    // load_mcp connects the server now and answers its index (every tool named) and how many resources and prompts it
    // has; its tools are callable at once in this session.
    const loaded = await call(client, "load_mcp", { mcp_name: lazy });
    const { counts } = loaded.structuredContent as { counts: { tools: number; resources: number; prompts: number } };
    say(
      `3. load_mcp ${lazy}: ${counts.tools} tools, ${counts.resources} resources, ${counts.prompts} prompts` +
        ` (notifications/tools/list_changed received: ${listChanged > 0 ? "yes" : "no"})`,
    );

    // discover_tool returns a tool's full description and input schema.
    const found = await call(client, "discover_tool", { tool_name: tool });
    const schema = (found.structuredContent as { inputSchema?: { properties?: Record<string, { type?: string }> } }).inputSchema;
    const params = Object.entries(schema?.properties ?? {}).map(([name, p]) => `${name} (${p.type ?? "any"})`);
    say(`4. discover_tool ${tool}: takes ${params.join(", ") || "no arguments"}`);

    // use_tool calls it upstream and returns the upstream's own result.
    const used = await call(client, "use_tool", { tool_name: tool, tool_input: { a: 2, b: 3 } });
    say(`5. use_tool ${tool} {"a":2,"b":3}: ${textOf(used)}`);

    if (transport.sessionId !== sessionId) throw new StepFailed("the session id changed along the way");
  } finally {
    // DELETE ends the session on the proxy (its loaded servers with it); close() then stops the transport.
    // The SDK puts no time limit on DELETE: give it one.
    const timeout = new Promise<boolean>((done) => setTimeout(() => done(false), TIMEOUT_MS).unref());
    ended = await Promise.race([transport.terminateSession().then(() => true), timeout]).catch(() => false);
    await client.close();
  }
  say(
    ended
      ? "6. session ended (DELETE): the next session starts with the lazy servers unloaded again"
      : "6. the proxy did not confirm the end of the session (DELETE); it expires on its own",
  );
}

try {
  await main();
} catch (err) {
  let message = err instanceof Error ? err.message : String(err);
  if (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403)) {
    message = `the proxy answered HTTP ${err.code}: is DYNMCP_TOKEN a token of the team in the URL? (${err.message})`;
  }
  process.stderr.write(`session failed: ${message}\n`);
  process.exitCode = 1;
}
