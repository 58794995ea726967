// The dashboard's members page in a real browser, under `wrangler dev` at http://127.0.0.1:<port>: a member signs in
// through the team's identity provider (the oidc-provider fixture, harness/idp.ts) as a host meets it (the v2 SDK's
// auth provider, the member's browser driven over HTTP) and lists tools with the token; then Chromium signs in to the
// dashboard, follows the team's link to the members page, finds the member and the grant the admin API lists (never
// a token), and revokes it by clicking: the admin API lists it no more, the host's token is refused, and the trail
// holds the admin action. No CSP violation; axe-core clean at desktop and phone widths; the page's screenshot with
// DASHBOARD_SCREENSHOTS=<dir>.
import { afterAll, describe, expect, it } from "vitest";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { provisionByAdmin } from "../../harness/clients.ts";
import { startIdp, type Idp } from "../../harness/idp.ts";
import { HostProvider } from "../shared/host-provider.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { waitFor } from "../shared/wait.ts";
import { ADMIN_TOKEN, browserStack, checkPage, operatorPage, textOf } from "./dashboard-pages.ts";

const TEAM = "dash-members";
const MEMBER = { sub: "sam", email: "sam@example.com", email_verified: true, groups: ["staff"] };
const HOST = "Sam's MCP host";
let idp: Idp | undefined;

const admin = (base: string, path: string, init: RequestInit = {}) =>
  fetch(`${base}/admin/teams/${TEAM}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" } });

const { base, fixtures } = browserStack("dashboard-members", {}, async (stack, proxyUrl) => {
  await provisionByAdmin(proxyUrl, ADMIN_TOKEN, TEAM, { mcp: { everything: { url: stack.everything.url } } }, "dashboard-e2e");
  // The IdP's one client may be sent back only to this proxy's callback, whose port is known now.
  idp = await startIdp({ accounts: [MEMBER], redirectUris: [`${proxyUrl}/t/${TEAM}/oauth/callback`] });
  for (const [path, body] of [
    ["/secrets/IDP_SECRET", { value: idp.client.secret }],
    ["/oauth", { issuer: idp.issuer, client_id: idp.client.id, client_secret: "IDP_SECRET", allowed_groups: ["staff"] }],
  ] as const) {
    const res = await admin(proxyUrl, path, { method: "PUT", body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`PUT ${path}: HTTP ${res.status} ${await res.text()}`);
  }
});
afterAll(async () => {
  await idp?.close();
});

/** The member signs in as a host meets it: 401, discovery, registration, the browser through consent and the IdP, the code exchanged. */
async function memberSignsIn(mcpUrl: string): Promise<HostProvider> {
  const host = new HostProvider({ name: HOST, redirectUri: "http://127.0.0.1:1/callback" });
  const first = new ModernTransport(new URL(mcpUrl), { authProvider: host });
  await expect(new ModernClient({ name: "members-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const outcome = await signInAs(host.authorizations[0]!.href, { proxyOrigin: base(), proxy: (request) => fetch(request), account: MEMBER.sub });
  if (outcome.kind !== "redirect") throw new Error(`the sign-in stopped at ${outcome.url.pathname}: ${outcome.text}`);
  await first.finishAuth(outcome.url.searchParams);
  return host;
}

/** An initialize with this bearer token: 200 while its grant stands, 401 after. */
async function initializeStatus(mcpUrl: string, token: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
  });
  await res.body?.cancel();
  return res.status;
}

describe("the dashboard's members page in Chromium under wrangler dev", () => {
  it("shows a member signed in through the IdP with their grant, never a token, and revokes the grant by a click", async (ctx) => {
    const { browser } = fixtures(ctx);
    const mcpUrl = `${base()}/t/${TEAM}/mcp`;
    const host = await memberSignsIn(mcpUrl);
    const client = new ModernClient({ name: "members-host", version: "1.0.0" });
    await client.connect(new ModernTransport(new URL(mcpUrl), { authProvider: host }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("discover_tool");
    await client.close();
    const users = ((await (await admin(base(), "/users")).json()) as { users: Array<{ id: string; email: string }> }).users;
    expect(users.map((u) => u.email)).toEqual([MEMBER.email]);
    const userId = users[0]!.id;
    const grantsOf = async () => ((await (await admin(base(), `/users/${userId}`)).json()) as { grants: Array<{ id: string; clientName?: string }> }).grants;
    const [grant] = await grantsOf();
    expect(grant?.clientName).toBe(HOST);

    const { context, page, problems } = await operatorPage(browser, base());
    await page.goto(`${base()}/dashboard/teams/${TEAM}`);
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}/members`), page.getByRole("link", { name: "Members and tokens" }).click()]);

    // The member and their grant, as the admin API lists them; nothing of the host's tokens.
    const section = page.locator(`section[data-member="${userId}"]`);
    expect(await textOf(section.getByRole("heading"))).toBe(MEMBER.email);
    const rows = section.locator("tr[data-grant]");
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-grant")))).toEqual([grant!.id]);
    expect(await textOf(rows.first().locator("td").first())).toBe(HOST);
    const html = await page.content();
    for (const token of [host.stored!.access_token, host.stored!.refresh_token!]) {
      expect(html).not.toContain(token);
      expect(html).not.toContain(token.split(":")[2]!);
    }
    await checkPage(page, "members");

    // Revoked by a click: gone from the page and the admin API, the host's token refused, the action in the trail.
    expect(await initializeStatus(mcpUrl, host.stored!.access_token)).toBe(200);
    await Promise.all([page.waitForLoadState("load"), section.getByRole("button", { name: `Revoke the grant of ${HOST}` }).click()]);
    expect(await textOf(page.getByRole("status"))).toMatch(new RegExp(`^Grant ${grant!.id} of ${userId.replace(".", "\\.")} revoked with its tokens`));
    expect(await page.locator(`tr[data-grant="${grant!.id}"]`).count()).toBe(0);
    expect(await grantsOf()).toEqual([]);
    // Refused once the isolate that accepted it lets go of it (TOKEN_CACHE_SECONDS, 30 by default).
    expect(await waitFor(async () => (await initializeStatus(mcpUrl, host.stored!.access_token)) === 401, { tries: 400, ms: 100 })).toBe(true);
    const trail = (await (await admin(base(), "/audit?tool=admin/grant.revoke")).json()) as { entries: Array<{ target: string; outcome: string }> };
    expect(trail.entries.map((e) => `${e.target} ${e.outcome}`)).toEqual([`${userId}/${grant!.id} ok`]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
