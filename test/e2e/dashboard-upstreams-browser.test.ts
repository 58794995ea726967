// The dashboard's upstreams and tools pages in a real browser, under `wrangler dev` at http://127.0.0.1:<port>: a team
// with a healthy upstream (server-everything), one that refuses every connect and a lazy one; live calls first (a
// 2025 host's discover_tool search and a call, a 2026 host's tools/list); then Chromium signs in, finds each server's
// probed state and the call on the upstreams page, presses Reload (the admin action then in the audit trail), and on
// the tools page types the host's query into the search box and gets discover_tool's first hit. No CSP violation;
// axe-core clean at desktop and phone widths; screenshots with DASHBOARD_SCREENSHOTS=<dir>.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { waitFor } from "../shared/wait.ts";
import { ADMIN_TOKEN, browserStack, checkPage, operatorPage, textOf } from "./dashboard-pages.ts";
import { text } from "./helpers.ts";

const TEAM = "dash-live";
const QUERY = "echo a message back";

let token: string;
const memory = loadCorpus("modelcontextprotocol__server-memory");
const replay = { down: { catalog: memory, faults: { initialize: { kind: "http" as const, status: 503, body: "down" } } }, later: { catalog: memory } };
const { base, fixtures } = browserStack("dashboard-upstreams", replay, async (stack, proxyUrl) => {
  const config = {
    mcp: {
      everything: { url: stack.everything.url },
      down: { url: stack.replay.url("down") },
      later: { url: stack.replay.url("later"), description: "A knowledge graph, loaded on demand" },
    },
  };
  token = await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, config, "dashboard-e2e");
});

async function adminGet<T>(path: string): Promise<T> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const auditTools = async () => (await adminGet<{ entries: Array<{ kind: string; tool: string }> }>("/audit?limit=100")).entries;

/** A 2026 host's tools/list: the team's catalog reaches the cache the tools page reads. */
async function modernList(): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base()}/t/${TEAM}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "e2e-modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  try {
    expect(client.getProtocolEra()).toBe("modern");
    await client.listTools();
  } finally {
    await client.close();
  }
}

describe("the dashboard's upstreams and tools pages in Chromium under wrangler dev", () => {
  it("show live state after a live call; Reload works; the search box finds discover_tool's first hit", async (ctx) => {
    const { browser } = fixtures(ctx);
    const host = await connectClient(`${base()}/t/${TEAM}/mcp`, token);
    const found = await host.client.callTool({ name: "discover_tool", arguments: { query: QUERY } });
    const first = (found.structuredContent as { tools: Array<{ name: string }> }).tools[0]!.name;
    const echoed = await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "dashboard-e2e" } } });
    expect(text(echoed)).toContain("dashboard-e2e");
    await modernList();
    expect(await waitFor(async () => (await auditTools()).some((e) => e.tool === "everything/echo"), { tries: 100, ms: 100 })).toBe(true);

    const { context, page, problems } = await operatorPage(browser, base());

    // From the overview's links to the upstreams page: each server's probed state, the live call counted.
    await page.goto(`${base()}/dashboard/teams/${TEAM}`);
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/upstreams`), page.getByRole("link", { name: "Upstreams" }).click()]);
    const server = (name: string) => page.locator(`section[data-server="${name}"]`);
    expect(await server("everything").locator("[data-state]").getAttribute("data-state")).toBe("connected");
    expect(await server("down").locator("[data-state]").getAttribute("data-state")).toBe("failing");
    expect(await server("later").locator("[data-state]").getAttribute("data-state")).toBe("lazy");
    expect(await textOf(server("everything").locator('[data-figure="calls"]'))).toBe("1");
    expect(await textOf(server("everything").locator('[data-figure="outcomes"]'))).toBe("ok 1");
    await checkPage(page, "upstreams");

    // Reload: the live 2025 session takes it, and the trail has the admin action.
    await Promise.all([page.waitForURL(/\/upstreams\?reloaded=\d+$/), page.getByRole("button", { name: "Reload" }).click()]);
    expect(await textOf(page.getByRole("status"))).toMatch(/^Reload sent: [1-9]\d* live session/);
    expect((await auditTools()).filter((e) => e.kind === "admin" && e.tool === "admin/sessions.reload")).toHaveLength(1);
    await host.transport.terminateSession();
    await host.client.close();

    // The tools page: the catalog as tools/list shows it; the search box's first hit is discover_tool's.
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/tools`), page.getByRole("link", { name: "Tools" }).click()]);
    expect(await page.locator("pre.catalog").textContent()).toContain("echo");
    await page.getByLabel("What the agent would look for").fill(QUERY);
    await Promise.all([page.waitForURL(/\/tools\?q=/), page.getByRole("button", { name: "Search", exact: true }).click()]);
    expect(await page.locator("ol.hits li").first().getAttribute("data-tool")).toBe(first);
    await checkPage(page, "tools");

    expect(await page.content()).not.toContain(token);
    expect(problems).toEqual([]);
    await context.close();
  });
});
