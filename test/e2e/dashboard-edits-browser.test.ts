// The dashboard's config edits in a real browser, under `wrangler dev` at http://127.0.0.1:<port>: Chromium signs in,
// presses Promote beside a tool on the tools page, and a real 2026 MCP client's tools/list then carries that tool
// whole (and calls it by name); on the policies page it types an invalid rule and saves, and the problem is shown
// beside the text, nothing stored. No CSP violation; axe-core clean at desktop and phone widths; screenshots with
// DASHBOARD_SCREENSHOTS=<dir> (tools.png, policies.png).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { provisionByAdmin } from "../../harness/clients.ts";
import { ADMIN_TOKEN, browserStack, checkPage, operatorPage, textOf } from "./dashboard-pages.ts";
import { text } from "./helpers.ts";

const TEAM = "dash-edits";
const TOOL = "everything/echo";

let token: string;
let config: unknown;
const { base, fixtures } = browserStack("dashboard-edits", {}, async (stack, proxyUrl) => {
  config = { mcp: { everything: { url: stack.everything.url } } };
  token = await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, config, "dashboard-e2e");
});

async function adminConfig(): Promise<unknown> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/config`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.json();
}

/** A real 2026 host (the v2 SDK client), connected to the team. */
async function modernHost(): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base()}/t/${TEAM}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "e2e-modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

describe("the dashboard's config edits in Chromium under wrangler dev", () => {
  it("promotes a tool by a click (a real client's tools/list then carries it) and shows an invalid policy's problem inline", async (ctx) => {
    const { browser } = fixtures(ctx);
    // A 2026 host's list first: the team's catalog reaches the cache the tools page reads.
    const before = await modernHost();
    expect((await before.listTools()).tools.map((t) => t.name)).not.toContain(TOOL);
    await before.close();

    const { context, page, problems } = await operatorPage(browser, base());

    await page.goto(`${base()}/dashboard/teams/${TEAM}/tools`);
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/tools/promote`), page.getByRole("button", { name: `Promote ${TOOL}` }).click()]);
    expect(await textOf(page.getByRole("status"))).toMatch(new RegExp(`^Promoted ${TOOL}:`));
    expect(await page.locator(`tr[data-row="${TOOL}"] [data-whole]`).getAttribute("data-whole")).toBe("true");
    await checkPage(page, "tools");

    // A real MCP client: the tool whole in tools/list, called by its own name.
    const after = await modernHost();
    const listed = (await after.listTools()).tools.find((t) => t.name === TOOL);
    expect(listed?.inputSchema.properties).toHaveProperty("message");
    expect(text(await after.callTool({ name: TOOL, arguments: { message: "promoted-e2e" } }))).toContain("promoted-e2e");
    await after.close();

    // An invalid rule: the problem named beside the text, the text as typed, nothing stored.
    const promoted = await adminConfig();
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/policies`), page.getByRole("link", { name: "Policies" }).click()]);
    const invalid = JSON.stringify([{ who: ["team:x"], deny: ["everything/*"] }]);
    await page.getByLabel(/The policies, as JSON/).fill(invalid);
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/policies`), page.getByRole("button", { name: "Save the policies" }).click()]);
    expect(await textOf(page.locator("#policy-problems li").first())).toMatch(/^policies\[0\]\.who\[0\]: unknown selector kind "team:"/);
    expect(await page.getByLabel(/The policies, as JSON/).inputValue()).toBe(invalid);
    expect(await page.getByLabel(/The policies, as JSON/).getAttribute("aria-describedby")).toBe("policy-problems");
    await checkPage(page, "policies");
    expect(await adminConfig()).toEqual(promoted);

    expect(await page.content()).not.toContain(token);
    // The refused save's own 400 (its response, and Chromium's console line for it) is the answer asked for; nothing
    // else may fail.
    const refusal = [`400 ${base()}/dashboard/teams/${TEAM}/policies`, "Failed to load resource: the server responded with a status of 400 (Bad Request)"];
    expect(problems.filter((p) => !refusal.includes(p))).toEqual([]);
    expect(problems.filter((p) => p === refusal[0])).toHaveLength(1);
    await context.close();
  });
});
