// A team's admins at /t/<team>/dashboard in a real browser, under `wrangler dev`: the team signs in through the
// oidc-provider fixture (harness/idp.ts, on http://127.0.0.1:<port>). The browser opens the proxy as
// http://localhost:<port>, so the IdP is another site and its redirect back is cross-site: the SameSite=Strict cookie
// set by the callback must still reach the overview (the callback answers a page that goes on by itself). A live
// call first; the admin signs in through the IdP's own form in Chromium, lands on the overview, finds the call on the
// audit page, and opens every team page; a member who is not an admin is refused and gets no cookie. No CSP
// violation; axe-core clean at desktop and phone widths; screenshots with DASHBOARD_SCREENSHOTS=<dir>
// (docs/dashboard/team-admin-sign-in.png).
import { afterAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { DEFAULT_ACCOUNTS, startIdp, type Idp } from "../../harness/idp.ts";
import { connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { waitFor } from "../shared/wait.ts";
import { arrive } from "../../harness/browser.ts";
import { ADMIN_TOKEN, DESKTOP, browserStack, checkPage, textOf, watchProblems } from "./dashboard-pages.ts";
import { text } from "./helpers.ts";

const TEAM = "team-admins";
/** alice is an admin; nina is a member of the team (a verified example.com address) but not an admin. */
const NINA = { sub: "nina", email: "nina@example.com", email_verified: true };
let token: string;
let idp: Idp | undefined;

const { base, fixtures } = browserStack("dashboard-team-admins", {}, async (stack, proxyUrl) => {
  token = await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, { mcp: { everything: { url: stack.everything.url } }, dashboard_admins: ["user:alice@example.com"] }, "admins-e2e");
  const port = new URL(proxyUrl).port;
  idp = await startIdp({ accounts: [...DEFAULT_ACCOUNTS, NINA], redirectUris: [`http://localhost:${port}/t/${TEAM}/oauth/callback`] });
  for (const [path, body] of [
    ["secrets/IDP_SECRET", { value: idp.client.secret }],
    ["oauth", { issuer: idp.issuer, client_id: idp.client.id, client_secret: "IDP_SECRET", allowed_domains: ["example.com"] }],
  ] as const) {
    const res = await fetch(`${proxyUrl}/admin/teams/${TEAM}/${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`PUT ${path}: HTTP ${res.status} ${await res.text()}`);
  }
});

afterAll(async () => {
  await idp?.close();
});

/** The proxy as the browser names it: localhost, another site than the IdP's 127.0.0.1. */
const site = () => base().replace("127.0.0.1", "localhost");
const home = () => `${site()}/t/${TEAM}/dashboard`;


/** From the team's dashboard through the IdP's sign-in form as `account`, to wherever the proxy answers. */
async function signInAt(page: Page, account: string): Promise<void> {
  await page.goto(home());
  await page.getByRole("button", { name: `Sign in with ${new URL(idp!.issuer).host}` }).click();
  await arrive(page, (url) => url.origin === idp!.issuer && url.pathname.startsWith("/interaction/"), "the IdP's sign-in form");
  await page.locator('input[name="login"]').fill(account);
  await page.getByRole("button", { name: "Sign in" }).click();
  await arrive(page, (url) => url.origin === site() && url.pathname !== `/t/${TEAM}/dashboard/sign-in`, "the proxy again");
}

async function auditEntries(): Promise<Array<{ id: string; kind: string; tool: string }>> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/audit`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Array<{ id: string; kind: string; tool: string }> }).entries;
}

describe("a team's admins at /t/<team>/dashboard in Chromium under wrangler dev", () => {
  it("the admin signs in through the team's IdP, sees the live call and every page; a member who is not an admin is refused", async (ctx) => {
    const { browser } = fixtures(ctx);
    const host = await connectClient(`${base()}/t/${TEAM}/mcp`, token);
    expect(text(await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "admins-e2e" } } }))).toContain("admins-e2e");
    await host.client.close();
    expect(await waitFor(async () => (await auditEntries()).some((e) => e.kind === "tool_call"), { tries: 100, ms: 100 })).toBe(true);

    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(home());
    expect(await textOf(page.locator("h1"))).toBe(`Team ${TEAM}`);
    await checkPage(page, "team-admin-sign-in");
    await signInAt(page, "alice");
    // The callback's page went on by itself, and the cookie it set came along: the overview, signed in.
    await arrive(page, (url) => url.href === home(), "the team's overview");
    // (The sign-in page has the same address and title: the team's links say this is the overview. With a plain
    // redirect from the callback instead, Chromium did not send the new cookie and showed the sign-in again.)
    expect(await page.locator("nav.team-nav").count()).toBe(1);
    expect(await textOf(page.locator("h1"))).toBe(`Team ${TEAM}`);
    const [cookie] = (await context.cookies(site())).filter((c) => c.name === `__Host-dynmcp-team-admin-${TEAM}`);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    const problems = watchProblems(page);
    expect(await page.getByRole("link", { name: "All teams" }).count()).toBe(0);
    await checkPage(page, "team-admin-overview");

    // The audit trail, from the team's links: the live call.
    await Promise.all([page.waitForURL(`${home()}/audit`), page.getByRole("link", { name: "Audit trail" }).click()]);
    const calls = (await auditEntries()).filter((e) => e.kind === "tool_call").map((e) => e.id);
    expect(await page.locator(`tr[data-entry="${calls[0]}"]`).count()).toBe(1);
    await checkPage(page, "team-admin-audit");
    for (const [link, path] of [["Upstreams", "/upstreams"], ["Tools", "/tools"], ["Policies", "/policies"], ["Members and tokens", "/members"]] as const) {
      await Promise.all([page.waitForURL(`${home()}${path}`), page.getByRole("link", { name: link }).click()]);
      expect(await page.locator("nav.team-nav a[aria-current=page]").textContent()).toBe(link);
    }
    // The operator's pages stay shut to this cookie.
    await page.goto(`${site()}/dashboard/teams/${TEAM}`);
    expect(page.url()).toBe(`${site()}/dashboard`);
    expect(await page.getByLabel("Admin token").count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();

    // A member of the team who is not one of its admins: refused, and no cookie.
    const other = await browser.newContext({ viewport: DESKTOP });
    const refused = await other.newPage();
    await signInAt(refused, "nina");
    expect(await textOf(refused.locator("[role=alert]"))).toContain("not one of its dashboard admins");
    expect((await other.cookies(site())).map((c) => c.name)).not.toContain(`__Host-dynmcp-team-admin-${TEAM}`);
    await refused.goto(`${home()}/audit`);
    expect(refused.url()).toBe(home());
    await other.close();
  });
});
