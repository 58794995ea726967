// The dashboard's members page through the real Worker: members who signed in through the team's real identity
// provider (harness/idp.ts, the sign-in step, the token endpoint: sign-in-helpers.ts) shown with their grants as the
// admin API lists them, never a token; a grant revoked and a member removed by the page's forms, each refused without
// the session's CSRF token or from another site (nothing changed then), done through the admin API's code (its
// listing agrees afterwards, the tokens stop working) and recorded as its admin actions. A Worker without OAUTH_KV and
// a team without an identity provider get a sentence, not an error page; a long list is cut, and says so. Pages are
// asked at http://localhost:8787, the origin the OAuth library accepts over plain http.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { userIdFor } from "../../src/auth/user.ts";
import { MAX_MEMBERS_SHOWN } from "../../src/edge/admin/member-grants.ts";
import { app } from "../../src/edge/app.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { ADMIN, replayUrl, seedTeam, workerFetch } from "./helpers.ts";
import { COOKIE, csrfOf, expectPageHeaders, signIn } from "./dashboard-helpers.ts";
import { pkce } from "./oauth-helpers.ts";
import { BASE, authorizeUrl, exchange, initialize, member, redirected, register, store, teamWithIdp } from "./sign-in-helpers.ts";

const TEAM = "dm-members";
const ADDRESS = "192.0.2.61";

/** A member's sign-in from one host through the team's IdP: their user id, the grant's client and its tokens. */
async function signedInMember(account: string, host: string) {
  const clientId = await register(TEAM, host);
  const { verifier, challenge } = await pkce();
  const back = redirected(await signInAs(authorizeUrl(TEAM, clientId, challenge), member(account)));
  const tokens = await exchange(TEAM, clientId, back.searchParams.get("code")!, verifier);
  expect(tokens.status).toBe(200);
  const { access_token: access, refresh_token: refresh } = tokens.body;
  // The library's tokens are `<user>:<grant>:<secret part>`: neither whole nor the secret part may reach a page.
  const secrets = [access!, refresh!, access!.split(":")[2]!, refresh!.split(":")[2]!];
  return { userId: await userIdFor(TEAM, env.IDP_ISSUER, account), clientId, access: access!, secrets };
}

const page = (path: string, cookie: string, bindings: object = env) =>
  app.fetch(new Request(`${BASE}${path}`, { headers: { "cf-connecting-ip": ADDRESS, cookie: `${COOKIE}=${cookie}` } }), bindings, createExecutionContext());

const post = (path: string, cookie: string, form: Record<string, string>, origin = BASE) =>
  workerFetch(`${BASE}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ADDRESS, origin, cookie: `${COOKIE}=${cookie}` },
    body: new URLSearchParams(form).toString(),
  });

async function adminJson(path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await workerFetch(`${BASE}/admin/teams/${TEAM}${path}`, { headers: ADMIN });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const grantIds = async (userId: string): Promise<string[]> => {
  const got = await adminJson(`/users/${userId}`);
  return got.status === 404 ? [] : (got.json["grants"] as Array<{ id: string }>).map((g) => g.id);
};

async function adminEntries(): Promise<string[]> {
  const got = await adminJson("/audit?tool=admin/*&limit=1000");
  return (got.json["entries"] as Array<{ tool: string; target?: string; outcome: string }>).map((e) => `${e.tool} ${e.target} ${e.outcome}`).reverse();
}

/** The grant ids a member's section of the page shows. */
function pageGrants(html: string, userId: string): string[] {
  const section = new RegExp(`<section class="server" data-member="${userId.replace(".", "\\.")}">([\\s\\S]*?)</section>`).exec(html)?.[1] ?? "";
  return [...section.matchAll(/<tr data-grant="([^"]+)">/g)].map((m) => m[1]!);
}

describe("the dashboard's members page", () => {
  it("shows members and their grants as the admin API does, revokes a grant and removes a member, CSRF-checked and audited", async () => {
    await teamWithIdp(TEAM);
    const alice = await signedInMember("alice", "Claude <b>Desktop</b>");
    const aliceCursor = await signedInMember("alice", "Cursor");
    const dave = await signedInMember("dave", "Inspector");
    const cookie = await signIn(ADDRESS);
    const path = `/dashboard/teams/${TEAM}/members`;

    const shown = await page(path, cookie);
    expect(shown.status).toBe(200);
    expectPageHeaders(shown);
    const html = await shown.text();
    expect(html).toContain("<h3>alice@example.com</h3>");
    expect(html).toContain("<h3>dave@example.com</h3>");
    expect(html).toContain("Claude &lt;b&gt;Desktop&lt;/b&gt;");
    expect(html).toContain("<td>Cursor</td>");
    // The groups the provider gave at each member's last sign-in (what policies and dashboard_admins select by).
    expect([...html.matchAll(/<dd data-groups="">([^<]*)<\/dd>/g)].map((m) => m[1]).sort()).toEqual(["mcp-users, eng", "none"]);
    expect(pageGrants(html, alice.userId).sort()).toEqual((await grantIds(alice.userId)).sort());
    expect(pageGrants(html, alice.userId)).toHaveLength(2);
    expect(pageGrants(html, dave.userId)).toEqual(await grantIds(dave.userId));
    for (const secret of [...alice.secrets, ...aliceCursor.secrets, ...dave.secrets, env.IDP_CLIENT_SECRET]) expect(html).not.toContain(secret);
    const csrf = csrfOf(html);

    // Alice's grant from Claude Desktop: refused without the CSRF token or from another site, nothing revoked.
    const grant = (await grantIds(alice.userId)).find((id) => html.includes(`data-grant="${id}"><td>Claude`))!;
    const revoke = `/dashboard/teams/${TEAM}/members/${alice.userId}/grants/${grant}/revoke`;
    expect((await post(revoke, cookie, {})).status).toBe(403);
    expect((await post(revoke, cookie, { csrf }, "https://evil.example")).status).toBe(403);
    expect(await grantIds(alice.userId)).toContain(grant);
    expect((await initialize(TEAM, alice.access)).status).toBe(200);
    // With it: gone from the page and from the admin API's listing, its token refused; her other grant stands.
    const revoked = await post(revoke, cookie, { csrf });
    expect(revoked.status).toBe(200);
    const afterRevoke = await revoked.text();
    expect(afterRevoke).toContain(`Grant ${grant} of ${alice.userId} revoked`);
    expect(pageGrants(afterRevoke, alice.userId)).toEqual(await grantIds(alice.userId));
    expect(await grantIds(alice.userId)).toEqual(pageGrants(html, alice.userId).filter((id) => id !== grant));
    expect((await initialize(TEAM, alice.access)).status).toBe(401);
    expect((await initialize(TEAM, aliceCursor.access)).status).toBe(200);
    expect((await post(revoke, cookie, { csrf })).status).toBe(404);

    // Dave removed: refused likewise first, then every grant and his entry gone.
    const remove = `/dashboard/teams/${TEAM}/members/${dave.userId}/remove`;
    expect((await post(remove, cookie, {})).status).toBe(403);
    expect((await post(remove, cookie, { csrf }, "https://evil.example")).status).toBe(403);
    expect(await grantIds(dave.userId)).toHaveLength(1);
    const removed = await post(remove, cookie, { csrf });
    expect(removed.status).toBe(200);
    const afterRemove = await removed.text();
    expect(afterRemove).toContain(`Member ${dave.userId}: 1 grant(s) revoked and their entry deleted.`);
    expect(afterRemove).not.toContain(`data-member="${dave.userId}"`);
    expect(afterRemove).toContain(`data-member="${alice.userId}"`);
    expect((await adminJson(`/users/${dave.userId}`)).status).toBe(404);
    expect(((await adminJson("/users")).json["users"] as Array<{ id: string }>).map((u) => u.id)).toEqual([alice.userId]);
    expect((await initialize(TEAM, dave.access)).status).toBe(401);

    // The changes are the admin API's admin actions in the trail (a refused form records nothing).
    expect(await adminEntries()).toEqual([
      `admin/grant.revoke ${alice.userId}/${grant} ok`,
      `admin/grant.revoke ${alice.userId}/${grant} refused`,
      `admin/user.delete ${dave.userId} ok`,
    ]);
    for (const text of [afterRevoke, afterRemove]) for (const secret of [...alice.secrets, ...aliceCursor.secrets, ...dave.secrets]) expect(text).not.toContain(secret);
  });

  it("shows the members who signed in most recently, at most MAX_MEMBERS_SHOWN, and says the list is cut", async () => {
    await teamWithIdp("dm-many");
    const users = store();
    const day = Date.parse("2026-01-01T00:00:00Z");
    const ids: string[] = [];
    for (let i = 0; i <= MAX_MEMBERS_SHOWN; i++) {
      const id = await userIdFor("dm-many", env.IDP_ISSUER, `m${i}`);
      await users.recordUser("dm-many", id, { sub: `m${i}`, issuer: env.IDP_ISSUER, email: `m${i}@example.com` }, new Date(day + i * 86_400_000));
      ids.push(id);
    }
    const html = await (await page("/dashboard/teams/dm-many/members", await signIn(ADDRESS))).text();
    expect(html).toContain(`Showing the ${MAX_MEMBERS_SHOWN} members who signed in most recently, of ${MAX_MEMBERS_SHOWN + 1}: GET /admin/teams/dm-many/users lists them all.`);
    // Newest first; the one who signed in longest ago left out.
    expect([...html.matchAll(/<section class="server" data-member="([^"]+)">/g)].map((m) => m[1])).toEqual(ids.slice(1).reverse());
  });

  it("says so when the Worker has no OAUTH_KV or the team no identity provider, with no error page", async () => {
    const cookie = await signIn(ADDRESS);
    const noKv = await page(`/dashboard/teams/${TEAM}/members`, cookie, { ...env, OAUTH_KV: undefined });
    expect(noKv.status).toBe(200);
    const noKvHtml = await noKv.text();
    expect(noKvHtml).toContain("this Worker has no OAUTH_KV binding");
    expect(noKvHtml).toContain("<h3>alice@example.com</h3>");
    expect(noKvHtml).toContain("The members are listed without their grants, and cannot be removed here.");
    expect(noKvHtml).not.toContain("Remove member");
    expect(noKvHtml).toContain("<h2>Tokens</h2>");

    await seedTeam("dm-no-idp", { mcp: { memory: { url: replayUrl("memory") } } });
    const noIdp = await page("/dashboard/teams/dm-no-idp/members", cookie);
    expect(noIdp.status).toBe(200);
    const noIdpHtml = await noIdp.text();
    expect(noIdpHtml).toContain("Team dm-no-idp has no identity provider: nobody signs in to it through OAuth");
    expect(noIdpHtml).toContain("Nobody has signed in to this team.");
  });
});
