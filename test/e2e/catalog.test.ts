// The catalog as a user gets it through `wrangler dev` with the SDK Client: the default budget holds a large team's
// tools/list under 1,500 tokens (counted here with js-tiktoken, not the Worker's counter), the same bytes in every
// session; a search finds loaded tools and matching lazy servers; a promoted tool is called by its own name; and the
// team's usage, read back through the admin API, shows what direct exposure would have cost against what was sent.
import { getEncoding } from "js-tiktoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { waitFor } from "../shared/wait.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const ADMIN_TOKEN = "e2e-admin";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN };
const encoder = getEncoding("o200k_base");
const paid = (tools: Tool[]) =>
  encoder.encode(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))), [], []).length;

let stack: DevStack;
let token: string;
const mcpUrl = () => stack.mcpUrl("catalog");

beforeAll(async () => {
  stack = await startDevStack({
    name: "catalog",
    replay: {
      gitlab: { catalog: loadCorpus("zereight__mcp-gitlab") },
      kubernetes: { catalog: loadCorpus("mcp-server-kubernetes") },
      stripe: { catalog: loadCorpus("stripe__mcp") },
    },
    vars: VARS,
    provision: ({ dir, state, everything, replay }) => {
      token = provisionTeam(dir, state, "catalog", {
        promote: ["everything/echo"],
        mcp: {
          everything: { url: everything.url },
          gitlab: { url: replay.url("gitlab") },
          kubernetes: { url: replay.url("kubernetes") },
          billing: { url: replay.url("stripe"), description: "Stripe payments: customers, invoices, refunds and subscriptions. Load it for billing." },
        },
      });
    },
  });
}, 120_000);

afterAll(() => stack?.stop());

describe("the catalog through wrangler dev", () => {
  it("keeps tools/list within the default budget, finds what it shortened, calls a promoted tool, and accounts for it", async () => {
    const first = await connectClient(mcpUrl(), token);
    const { tools } = await first.client.listTools();
    expect(paid(tools)).toBeLessThanOrEqual(1500);
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp", "everything/echo"]);
    const description = tools[0]!.description!;
    expect(description).toMatch(/^gitlab( \(118 tools, names only\))?: /m);
    expect(description).not.toContain("gitlab:\n- ");

    // The same state, another session: the same bytes.
    const second = await connectClient(mcpUrl(), token);
    expect(JSON.stringify((await second.client.listTools()).tools)).toBe(JSON.stringify(tools));
    await second.transport.terminateSession();
    await second.client.close();

    // A search reaches the shortened server's tools, and names the lazy server that matches.
    const found = await first.client.callTool({ name: "discover_tool", arguments: { query: "refund a customer's invoice" } });
    expect(found.isError).toBeFalsy();
    expect((found.structuredContent as { servers?: Array<{ name: string }> }).servers?.[0]?.name).toBe("billing");
    const mr = await first.client.callTool({ name: "discover_tool", arguments: { query: "open a merge request", server: "gitlab" } });
    expect((mr.structuredContent as { tools: Array<{ name: string }> }).tools[0]?.name).toMatch(/^gitlab\//);

    // The promoted tool, by its own name.
    const echoed = await first.client.callTool({ name: "everything/echo", arguments: { message: "straight through" } });
    expect(text(echoed)).toContain("straight through");
    await first.transport.terminateSession();
    await first.client.close();

    // The team's usage: sent to the team index when the session ended.
    type Usage = { totals: { sessions: number; direct: number; listed: number; calls: { searches: number; tools: number } } };
    let usage: Usage | undefined;
    const arrived = await waitFor(
      async () => {
        const r = await fetch(`http://127.0.0.1:${stack.port}/admin/teams/catalog/usage?days=1`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(r.status).toBe(200);
        usage = (await r.json()) as Usage;
        return usage.totals.sessions >= 2 && usage.totals.calls.tools >= 1;
      },
      { tries: 100, ms: 200 },
    );
    expect(arrived, JSON.stringify(usage)).toBe(true);
    if (!usage) throw new Error("no usage read");
    expect(usage.totals.calls.searches).toBe(2);
    expect(usage.totals.listed).toBeGreaterThan(0);
    expect(usage.totals.direct).toBeGreaterThan(usage.totals.listed);
    // Numbers only: nothing of what was asked or answered.
    expect(JSON.stringify(usage)).not.toMatch(/straight through|refund|merge request/);
  }, 120_000);
});
