// A search that finds nothing useful, as a user meets it under `wrangler dev` (no network, no login): a query for
// something no loaded server does is answered "No loaded tool does what … asks." first, with the closest servers (the
// lazy one that matches first, not loaded) and the call that opens one, in discover_tool (2025 era) and in the code
// view's search (2026 era); a query a tool does answers its hits as before.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
const ABSENT = "send a fax to the insurance company about the claim";
let stack: DevStack;
let token = "";

beforeAll(async () => {
  stack = await startDevStack({
    name: "nothing",
    replay: { stripe: { catalog: loadCorpus("stripe__mcp") }, kubernetes: { catalog: loadCorpus("mcp-server-kubernetes") } },
    vars: VARS,
    provision: ({ dir, state, replay }) => {
      const mcp = {
        stripe: { url: replay.url("stripe") },
        kubernetes: { url: replay.url("kubernetes") },
        fax: { url: replay.url("kubernetes"), description: "Send and receive faxes." },
      };
      token = provisionTeam(dir, state, "nothing", { mcp });
    },
  });
}, 120_000);

afterAll(() => stack?.stop());

describe("a search that finds nothing useful, through wrangler dev", () => {
  it("says so first and names the closest servers, in discover_tool and the code view's search", async () => {
    const session = await connectClient(stack.mcpUrl("nothing"), token);
    const found = (await session.client.callTool({ name: "discover_tool", arguments: { query: ABSENT } })) as unknown as {
      structuredContent: { tools: unknown[]; useful?: boolean; closest?: Array<{ server: string; loaded: boolean }> };
    };
    expect(text(found).split("\n")[0]).toBe(`No loaded tool does what "${ABSENT}" asks.`);
    expect(text(found)).toContain("- fax (not loaded): Send and receive faxes");
    expect(found.structuredContent.useful).toBe(false);
    expect(found.structuredContent.closest?.[0]).toMatchObject({ server: "fax", loaded: false });
    expect(found.structuredContent.tools.length).toBeGreaterThan(0);
    const good = await session.client.callTool({ name: "discover_tool", arguments: { query: "refund a stripe charge" } });
    expect(text(good).split("\n")[0]).toMatch(/^- stripe\/create_refund: /);
    await session.client.close();

    const transport = new ModernTransport(new URL(stack.mcpUrl("nothing", "?view=code")), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const code = new ModernClient({ name: "e2e-nothing", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await code.connect(transport);
    expect(code.getProtocolEra()).toBe("modern");
    const searched = text(await code.callTool({ name: "search", arguments: { query: ABSENT } }));
    expect(searched.split("\n")[0]).toBe(`No loaded API does what "${ABSENT}" asks.`);
    expect(searched).toContain('describe {"path": "<namespace>"}');
    expect(searched).toContain("- fax (not loaded): Send and receive faxes");
    await code.close();
  });
});
