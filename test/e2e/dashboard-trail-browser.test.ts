// The dashboard's audit trail and members-and-tokens pages in a real browser, under `wrangler dev` at
// http://127.0.0.1:<port>: a live call first, then Chromium signs in, follows the team's links to the audit trail,
// finds the call there, filters it by outcome through the form, and on the tokens page mints a labelled token through
// the form (shown once, and it answers at the MCP endpoint), then revokes it. No CSP violation; axe-core clean at
// desktop and phone widths; screenshots with DASHBOARD_SCREENSHOTS=<dir>.
import { describe, expect, it } from "vitest";
import { connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { waitFor } from "../shared/wait.ts";
import { ADMIN_TOKEN, browserStack, checkPage, operatorPage, textOf } from "./dashboard-pages.ts";
import { text } from "./helpers.ts";

const TEAM = "dash-trail";
let token: string;
const { base, fixtures } = browserStack("dashboard-trail", {}, async (stack, proxyUrl) => {
  token = await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, { mcp: { everything: { url: stack.everything.url } } }, "dashboard-e2e");
});

async function auditEntries(query = ""): Promise<Array<{ id: string; kind: string; tool: string; outcome: string }>> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/audit${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Array<{ id: string; kind: string; tool: string; outcome: string }> }).entries;
}

describe("the dashboard's audit trail and tokens pages in Chromium under wrangler dev", () => {
  it("finds a live call in the trail and filters it; mints a token shown once that works, and revokes it", async (ctx) => {
    const { browser } = fixtures(ctx);
    const host = await connectClient(`${base()}/t/${TEAM}/mcp`, token);
    const echoed = await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "trail-e2e" } } });
    expect(text(echoed)).toContain("trail-e2e");
    await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/nope", tool_input: {} } });
    await host.client.close();
    expect(await waitFor(async () => (await auditEntries()).filter((e) => e.kind === "tool_call").length >= 2, { tries: 100, ms: 100 })).toBe(true);

    const { context, page, problems } = await operatorPage(browser, base());

    // The trail, from the overview's link: the live calls as the API has them, newest first.
    await page.goto(`${base()}/dashboard/teams/${TEAM}`);
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/audit`), page.getByRole("link", { name: "Audit trail" }).click()]);
    const rows = async () => page.locator("tr[data-entry]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-entry")));
    expect(await rows()).toEqual((await auditEntries()).map((e) => e.id));
    await checkPage(page, "audit");
    // Filtered through the form.
    await page.getByLabel("Outcome").fill("unknown_tool");
    await Promise.all([page.waitForURL(/outcome=unknown_tool/), page.getByRole("button", { name: "Filter" }).click()]);
    expect(await rows()).toEqual((await auditEntries("?outcome=unknown_tool")).map((e) => e.id));
    expect(await textOf(page.locator("td[data-outcome]").first())).toBe("unknown_tool");

    // Policies: view as the team's labelled token, through the form.
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/policies`), page.getByRole("link", { name: "Policies" }).click()]);
    await page.getByLabel("Or a member's verified email").fill("sam@acme.example");
    await Promise.all([page.waitForURL(/\/policies\?/), page.getByRole("button", { name: "View as" }).click()]);
    expect(await page.locator("section[data-as]").getAttribute("data-as")).toBe("sam@acme.example");
    await checkPage(page, "policies");

    // Tokens: mint one labelled through the form; it is shown once and it works.
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/members`), page.getByRole("link", { name: "Members and tokens" }).click()]);
    await checkPage(page, "members");
    await page.getByLabel("Label").fill("browser-bot");
    await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Mint a token" }).click()]);
    const minted = await textOf(page.locator("[data-minted-token]"));
    expect(minted).toMatch(/^\S{20,}$/);
    const bot = await connectClient(`${base()}/t/${TEAM}/mcp`, minted!);
    expect((await bot.client.listTools()).tools.map((t) => t.name)).toContain("discover_tool");
    await bot.client.close();
    await page.goto(`${base()}/dashboard/teams/${TEAM}/members`);
    expect(await page.content()).not.toContain(minted!);
    const row = page.locator("tr[data-token]", { hasText: "browser-bot" });
    const id = await row.getAttribute("data-token");
    await Promise.all([page.waitForLoadState("load"), row.getByRole("button", { name: `Revoke token ${id}` }).click()]);
    expect(await textOf(page.getByRole("status"))).toMatch(new RegExp(`^Token ${id} revoked`));
    expect(await page.locator(`tr[data-token="${id}"]`).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });
});
