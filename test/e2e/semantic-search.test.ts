// The semantic stage as a user meets it under `wrangler dev` (no AI binding, no network, no login): a query that shares
// no word with the tool meant finds it in a 2025 session and in the 2026 era, in discover_tool and in the code view's
// search, with the team's default stage (the static model, read from the Worker's assets); a team set to "off" does
// not. The first search of the isolate loads the model: its time is printed beside a warm search's.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
const QUERY = "hand the money back";
let stack: DevStack;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  stack = await startDevStack({
    name: "semantic",
    replay: { stripe: { catalog: loadCorpus("stripe__mcp") }, kubernetes: { catalog: loadCorpus("mcp-server-kubernetes") } },
    vars: VARS,
    provision: ({ dir, state, replay }) => {
      const mcp = { stripe: { url: replay.url("stripe") }, kubernetes: { url: replay.url("kubernetes") } };
      tokens.on = provisionTeam(dir, state, "sem", { mcp });
      tokens.off = provisionTeam(dir, state, "sem-off", { mcp, search: { semantic: "off" } });
    },
  });
}, 120_000);

afterAll(() => stack?.stop());

type Caller = { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> };
const hits = async (client: Caller, args: Record<string, unknown>) =>
  ((await client.callTool({ name: "discover_tool", arguments: args })) as { structuredContent: { tools: Array<{ name: string }> } }).structuredContent.tools.map((t) => t.name);
const codePaths = async (client: Caller, args: Record<string, unknown>) =>
  text(await client.callTool({ name: "search", arguments: args })).split("\n\n")[0]!.split("\n").map((line) => line.split(":")[0]);

async function modern(team: string, token: string, query = ""): Promise<ModernClient> {
  const transport = new ModernTransport(new URL(stack.mcpUrl(team, query)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new ModernClient({ name: "e2e-semantic", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

describe("the semantic stage through wrangler dev", () => {
  it("finds the refund for words it does not contain, in both eras and both views; off does not", async () => {
    const session = await connectClient(stack.mcpUrl("sem"), tokens.on!);
    let t = performance.now();
    expect(await hits(session.client, { query: QUERY, limit: 2 })).toContain("stripe/create_refund");
    const firstMs = performance.now() - t;
    t = performance.now();
    await hits(session.client, { query: "restart the deployment", limit: 2 });
    console.log(`first search of the isolate (the static model loaded): ${firstMs.toFixed(0)} ms; a warm one: ${(performance.now() - t).toFixed(0)} ms`);
    await session.client.close();

    const era2026 = await modern("sem", tokens.on!);
    expect(await hits(era2026, { query: QUERY, limit: 2 })).toContain("stripe/create_refund");
    await era2026.close();

    const code = await connectClient(stack.mcpUrl("sem", "?view=code"), tokens.on!);
    expect(await codePaths(code.client, { query: QUERY, limit: 2 })).toContain("stripe.create_refund");
    await code.client.close();
    const code2026 = await modern("sem", tokens.on!, "?view=code");
    expect(await codePaths(code2026, { query: QUERY, limit: 2 })).toContain("stripe.create_refund");
    await code2026.close();

    const off = await connectClient(stack.mcpUrl("sem-off"), tokens.off!);
    expect(await hits(off.client, { query: QUERY, limit: 2 })).not.toContain("stripe/create_refund");
    await off.client.close();
  });
});
