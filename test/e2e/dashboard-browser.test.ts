// The operator dashboard in a real browser, under `wrangler dev` at http://127.0.0.1:<port> as `npm run dev` serves it:
// a live MCP call first, then Chromium signs in (a wrong token refused, the right one in), finds the team in the list
// with its call counted, opens its overview (the figures the usage API reports, the call among the top tools), and
// signs out. Along the way: no Content-Security-Policy violation on any page (so the stylesheet is the only thing
// loaded, and it applies), the session cookie as Chromium stores it on plain-http loopback (`__Host-`, Secure,
// HttpOnly, SameSite=Strict), a form posted from another site refused, and axe-core's accessibility check on every
// page at desktop and phone widths. With DASHBOARD_SCREENSHOTS=<dir> each page is saved there (docs/dashboard/).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { waitFor } from "../shared/wait.ts";
import { ADMIN_TOKEN, DESKTOP, browserStack, checkPage, textOf, watchProblems } from "./dashboard-pages.ts";
import { text } from "./helpers.ts";

const TEAM = "dash";

let token: string;
const { base, fixtures } = browserStack("dashboard", {}, async (stack, proxyUrl) => {
  token = await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, { mcp: { everything: { url: stack.everything.url } } }, "dashboard-e2e");
});

/** The usage API's totals of the team. */
async function usageTotals(): Promise<{ sessions: number; sent: number; saved: number; direct: number; calls: { tools: number } }> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/usage`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { totals: { sessions: number; sent: number; saved: number; direct: number; calls: { tools: number } } }).totals;
}

/** A page of another site (localhost is another site than 127.0.0.1) whose form posts to the dashboard's sign-out. */
async function foreignSite(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>Another site</title><form method="post" action="${target}"><input type="hidden" name="csrf" value="guess"><button>Go</button></form>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}/`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("the dashboard in Chromium under wrangler dev", () => {
  it("signs in (wrong token refused), shows a live call in the team list and the overview, holds its CSP, signs out", async (ctx) => {
    const { browser } = fixtures(ctx);
    // A live call first: a host's session lists the tools, searches, calls a real upstream's tool, and ends (its usage
    // goes to the ledger).
    const host = await connectClient(`${base()}/t/${TEAM}/mcp`, token);
    await host.client.listTools();
    await host.client.callTool({ name: "discover_tool", arguments: { query: "echo a message back" } });
    const echoed = await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "dashboard-e2e" } } });
    expect(text(echoed)).toContain("dashboard-e2e");
    await host.transport.terminateSession();
    await host.client.close();
    expect(await waitFor(async () => (await usageTotals()).calls.tools === 1, { tries: 100, ms: 100 })).toBe(true);

    // A context of its own rather than browser.newPage(): axe opens a page beside the one it checks.
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = watchProblems(page);

    // The sign-in form, styled by the stylesheet (the only thing the CSP lets in).
    const form = await page.goto(`${base()}/dashboard`);
    expect(form?.status()).toBe(200);
    expect(form?.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.getByLabel("Admin token").count()).toBe(1);
    expect(await page.locator("button[type=submit]").evaluate((b) => getComputedStyle(b).backgroundColor)).toBe("rgb(29, 78, 216)");
    await checkPage(page, "sign-in");

    // A wrong token: the form again, 401, an alert, no cookie.
    await page.getByLabel("Admin token").fill("not-the-admin-token");
    const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/dashboard/sign-in")), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(refused.status()).toBe(401);
    expect(await textOf(page.getByRole("alert"))).toBe("That is not the admin token.");
    expect(await page.context().cookies()).toEqual([]);

    // The right one: the team list, and the cookie as Chromium keeps it on http://127.0.0.1.
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${base()}/dashboard`), page.getByRole("button", { name: "Sign in" }).click()]);
    const cookies = await page.context().cookies();
    expect(cookies.map(({ name, secure, httpOnly, sameSite, path }) => ({ name, secure, httpOnly, sameSite, path }))).toEqual([
      { name: "__Host-dynmcp-dashboard", secure: true, httpOnly: true, sameSite: "Strict", path: "/" },
    ]);
    const row = page.locator(`tr[data-team="${TEAM}"]`);
    expect(await textOf(row.locator("td[data-calls]"))).toBe("1");
    expect(await textOf(row.locator("td[data-servers]"))).toBe("1");
    expect(await textOf(row.locator("td[data-tokens]"))).toBe("1");
    await checkPage(page, "teams");

    // The overview: the usage API's figures, the call among the top tools.
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}`), row.getByRole("link", { name: TEAM }).click()]);
    const usage = await usageTotals();
    expect(await textOf(page.locator('[data-total="calls"]'))).toBe(String(usage.calls.tools));
    expect(await textOf(page.locator('[data-total="sessions"]'))).toBe(String(usage.sessions));
    expect(await textOf(page.locator('[data-total="saved"]'))).toBe(usage.saved.toLocaleString("en-US"));
    expect(await textOf(page.locator('tr[data-tool="everything/echo"] td').first())).toBe("1");
    expect(await page.locator("#activity-chart rect.bar").count()).toBeGreaterThan(0);
    expect(await page.content()).not.toContain(token);
    await checkPage(page, "overview");

    // Another site's form posting to sign-out: refused (the Strict cookie stays home, and the Origin is foreign).
    const foreign = await foreignSite(`${base()}/dashboard/sign-out`);
    try {
      const other = await browser.newContext();
      await other.addCookies(cookies.map((c) => ({ ...c })));
      const attacker = await other.newPage();
      await attacker.goto(foreign.url);
      const [answer] = await Promise.all([attacker.waitForResponse((r) => r.url().endsWith("/dashboard/sign-out")), attacker.getByRole("button").click()]);
      expect(answer.status()).toBe(403);
      await other.close();
    } finally {
      await foreign.close();
    }

    // Sign out: back to the form, the cookie gone, and the overview no longer shown.
    await Promise.all([page.waitForURL(`${base()}/dashboard`), page.getByRole("button", { name: "Sign out" }).click()]);
    expect(await page.getByLabel("Admin token").count()).toBe(1);
    expect(await page.context().cookies()).toEqual([]);
    await page.goto(`${base()}/dashboard/teams/${TEAM}`);
    expect(page.url()).toBe(`${base()}/dashboard`);

    // The wrong token's 401 is the one console error Chromium reports (a failed resource load); nothing else, no CSP refusal.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    await context.close();
  });
});
