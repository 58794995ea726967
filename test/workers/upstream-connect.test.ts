// Connecting accounts to an OAuth-protected upstream (issue 16, docs/oauth.md 3.3): connect links for the team's shared
// account and for one member's own, the member check (a cookie from a sign-in at the team's IdP), discovery from the
// upstream's 401, the proxy's client at its authorization server (dynamic registration kept in KV, or the configured
// one), the code exchange at the callback, and the credential sealed in the team's index. The upstream and its AS
// are harness/oauth-upstream.ts, the team's IdP harness/idp.ts (both started by global-setup); the browser is the
// fetch driver with a cookie jar (test/shared/oauth-driver.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { userIdFor } from "../../src/auth/user.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { memberCookie } from "../../src/edge/oauth/member-cookie.ts";
import { CookieJar } from "../../harness/cookie-jar.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { pageText, signInAs } from "../shared/oauth-driver.ts";
import { adminFetch } from "./helpers.ts";
import {
  SERVER,
  HOST_REDIRECT,
  proxyWith,
  proxy,
  withoutCookiesAt,
  store,
  index,
  oauthTeam,
  withIdp,
  link,
  browser,
  page,
  control,
  codeGrants,
  registration,
  sealedCredential,
  allKvText,
  type Counts,
  captureConsole,
} from "./upstream-oauth-helpers.ts";

/** Every console line of the current test (the proxy's log lines), for searches. */
const logged = captureConsole();

/** The payload of the member cookie in a Cookie header (a handle of src/auth/signed.ts: `<nonce>.mc2.<payload>.<mac>`). */
const MEMBER_VALUE = /(__Host-dynmcp-member=[A-Za-z0-9_-]{22}\.mc2\.)([A-Za-z0-9_-]+)(\.[A-Za-z0-9_-]{22})/;
const fromBase64url = (text: string) => JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/"))) as { user: string; exp: number };
const toBase64url = (value: unknown) => btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

const connectLines = () => logged.filter((l) => l.includes('"upstream_oauth"')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe("connecting the team's shared account", () => {
  it("registers the proxy (DCR), sends the browser to the upstream's AS with PKCE and resource, and keeps the credential sealed", async () => {
    await oauthTeam("uc-shared", { mode: "shared" });
    const before = await control<Counts>("/counts");
    const outcome = await signInAs(await link("uc-shared", "shared"), browser("alice"));
    const end = page(outcome);
    expect(end.status, end.text).toBe(200);
    expect(end.text).toContain("Connected up for team uc-shared (the team's shared account); you can close this window and retry the call.");

    // The authorization request: the registered client, PKCE S256, the entry's URL as resource, the 401's scope plus
    // offline_access (the AS lists it), the callback and a team-prefixed state.
    const toAs = outcome.trail.steps.find((s) => s.url.startsWith(`${BASE}/t/uc-shared/connect/`))!;
    const authorize = new URL(toAs.location!);
    const reg = await registration("uc-shared");
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: reg.clientId,
      code_challenge_method: "S256",
      resource: env.OAUTH_UPSTREAM_URL,
      scope: "mcp offline_access",
      redirect_uri: `${BASE}/oauth/upstream/callback`,
      response_type: "code",
    });
    expect(authorize.searchParams.get("state")).toMatch(/^uc-shared\.[A-Za-z0-9_-]{22}\.fs2\.[A-Za-z0-9_-]{22}$/);
    expect(reg).toMatchObject({ authMethod: "none" });
    expect(reg.clientSecret).toBeUndefined();

    // One registration, one code exchange (with the resource) for that client.
    const after = await control<Counts>("/counts");
    expect(after.registrations - before.registrations).toBe(1);
    const grants = await codeGrants(reg.clientId);
    expect(grants).toHaveLength(1);
    expect(grants[0]!.resource).toBe(env.OAUTH_UPSTREAM_URL);

    // Listed without tokens; stored with them, sealed.
    const listed = await index("uc-shared").listCredentials("uc-shared", SERVER);
    expect(listed).toEqual([expect.objectContaining({ server: SERVER, account: "shared", resource: env.OAUTH_UPSTREAM_URL, refreshable: true })]);
    expect(JSON.stringify(listed)).not.toMatch(/accessToken|refreshToken|eyJ/);
    const credential = await sealedCredential("uc-shared", "shared");
    expect(credential).toMatchObject({ clientId: reg.clientId, authMethod: "none", resource: env.OAUTH_UPSTREAM_URL, scope: expect.stringContaining("mcp") });
    expect(credential.expiresAt! - Date.now()).toBeGreaterThan(30_000);
    expect(credential.refreshToken).toBeDefined();

    // Nothing token-like anywhere else: pages, log lines, KV.
    const secrets = [credential.accessToken, credential.refreshToken!];
    const pages = outcome.trail.steps.map((s) => `${s.body ?? ""} ${s.status}`).join("\n");
    const code = new URL(outcome.trail.steps.find((s) => s.url.startsWith(`${BASE}/oauth/upstream/callback`))!.url).searchParams.get("code")!;
    const kv = await allKvText();
    for (const secret of [...secrets, code]) {
      expect(pages).not.toContain(secret);
      expect(logged.join("\n")).not.toContain(secret);
      expect(kv).not.toContain(secret);
    }
    expect(pages).not.toContain("eyJ");
    expect(connectLines()).toEqual([expect.objectContaining({ team: "uc-shared", upstream: SERVER, action: "connect", outcome: "ok", account: "shared" })]);
  });

  it("reuses the stored registration at the next connect; a replayed callback, or one in another browser, is refused", async () => {
    await oauthTeam("uc-again", { mode: "shared" });
    const jar = new CookieJar();
    const first = await signInAs(await link("uc-again", "shared"), browser("alice", { jar }));
    expect(page(first).status).toBe(200);
    const reg = await registration("uc-again");
    const before = await control<Counts>("/counts");
    // A connected shared account is replaced only after a disconnect.
    expect((await adminFetch("DELETE", `/teams/uc-again/upstreams/${SERVER}/accounts/shared`)).status).toBe(204);
    const second = await signInAs(await link("uc-again", "shared"), browser("bob", { jar }));
    expect(page(second).status).toBe(200);
    expect((await control<Counts>("/counts")).registrations).toBe(before.registrations);
    expect(await registration("uc-again")).toEqual(reg);
    expect(await codeGrants(reg.clientId)).toHaveLength(2);

    // The same answer again, in the same browser: the connect was used up.
    const callback = second.trail.steps.find((s) => s.url.startsWith(`${BASE}/oauth/upstream/callback`))!;
    const replayed = await proxy(new Request(callback.url, { headers: { cookie: jar.header(new URL(callback.url)) } }));
    expect(replayed.status).toBe(400);
    expect(pageText(await replayed.text())).toContain("This connect has expired or was already finished. Start again from the connect link.");
    expect(await codeGrants(reg.clientId)).toHaveLength(2);

    // A connect finished in another browser (the callback without this flow's cookie) is refused, its code unused.
    expect((await adminFetch("DELETE", `/teams/uc-again/upstreams/${SERVER}/accounts/shared`)).status).toBe(204);
    const elsewhere = page(await signInAs(await link("uc-again", "shared"), browser("alice", { jar, proxy: withoutCookiesAt("/oauth/upstream/callback") })));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain("This connect was started in another browser.");
    expect(await codeGrants(reg.clientId)).toHaveLength(2);
  });

  it("uses the entry's configured client (its secret a team secret): no registration, Basic at the token endpoint", async () => {
    await oauthTeam("uc-configured", { mode: "shared", client: { id: env.OAUTH_UPSTREAM_CLIENT_ID, secret: "${secret:UP_CLIENT}" } });
    // Without the team secret: a local page, and nothing sent to the AS.
    const missing = page(await signInAs(await link("uc-configured", "shared"), browser("alice")));
    expect(missing.status).toBe(500);
    expect(missing.text).toContain("The client secret of up (team secret UP_CLIENT) is missing");

    await store().putSecret("uc-configured", "UP_CLIENT", env.OAUTH_UPSTREAM_CLIENT_SECRET);
    const before = await control<Counts>("/counts");
    const grantsBefore = (await codeGrants(env.OAUTH_UPSTREAM_CLIENT_ID)).length;
    const end = page(await signInAs(await link("uc-configured", "shared"), browser("alice")));
    expect(end.status, end.text).toBe(200);
    expect((await control<Counts>("/counts")).registrations).toBe(before.registrations);
    expect(await env.TEAMS.get(kvKeys.upstreamClient("uc-configured", SERVER))).toBeNull();
    expect(await codeGrants(env.OAUTH_UPSTREAM_CLIENT_ID)).toHaveLength(grantsBefore + 1);
    const credential = await sealedCredential("uc-configured", "shared");
    expect(credential).toMatchObject({ clientId: env.OAUTH_UPSTREAM_CLIENT_ID, authMethod: "client_secret_basic", clientSecret: env.OAUTH_UPSTREAM_CLIENT_SECRET });
    expect(await allKvText()).not.toContain(env.OAUTH_UPSTREAM_CLIENT_SECRET);
    expect(logged.join("\n")).not.toContain(env.OAUTH_UPSTREAM_CLIENT_SECRET);
  });

  it("says so when the upstream's AS refuses at the callback (the member cancels there)", async () => {
    await oauthTeam("uc-as-error", { mode: "shared" });
    const end = page(await signInAs(await link("uc-as-error", "shared"), browser("alice", { cancelAtIdp: true })));
    expect(end.status).toBe(400);
    expect(end.path).toBe("/oauth/upstream/callback");
    expect(end.text).toContain("The upstream's authorization server refused: access_denied. Start again from the connect link.");
    expect(await index("uc-as-error").listCredentials("uc-as-error")).toEqual([]);
    expect(connectLines()).toEqual([expect.objectContaining({ outcome: "refused", reason: expect.stringContaining("access_denied") })]);
  });
});

describe("connect links that are not good", () => {
  it("refuses expired, cut-short and wrong-mode links, unknown and non-OAuth servers, with a local page; altered ones ask who you are", async () => {
    await oauthTeam("uc-links", { mode: "shared" }, { plain: { url: "http://127.0.0.1:9/mcp" }, mine: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "per_user" } } });
    const open = async (url: string, headers: Record<string, string> = {}) => {
      const res = await proxy(new Request(url, { headers }));
      return { status: res.status, text: pageText(await res.text()), location: res.headers.get("location") };
    };
    const expired = await open(await link("uc-links", "shared", SERVER, Date.now() - 11 * 60_000));
    expect(expired).toMatchObject({ status: 400, location: null });
    expect(expired.text).toContain("This connect link has expired (links work for ten minutes): ask an admin for a new one.");

    // An altered link, or another server's, is no shared link: it could be a member's, whom the page asks to sign in.
    const good = await link("uc-links", "shared");
    const altered = good.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    for (const url of [altered, (await link("uc-links", "shared", "other")).replace("/connect/other?", `/connect/${SERVER}?`)]) {
      const res = await open(url);
      expect(res).toMatchObject({ status: 200, location: null });
      expect(res.text).toContain("Connecting your own up account needs to know which member of team uc-links you are.");
    }
    const cut = await open(`${BASE}/t/uc-links/connect/${SERVER}?h=cx1.abc`);
    expect(cut).toMatchObject({ status: 400 });
    expect(cut.text).toContain("This is not a whole connect link");
    // The config is read only for a link the proxy made for that server.
    expect((await open(`${BASE}/t/uc-links/connect/nope?h=x`)).status).toBe(400);
    const unknown = await open(await link("uc-links", "shared", "nope"));
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("Team uc-links has no server named nope.");
    expect((await open(await link("uc-links", "shared", "plain"))).text).toContain("plain does not sign in with OAuth");
    const perUser = await open(await link("uc-links", "shared", "mine"));
    expect(perUser.text).toContain("This link is for team uc-links's shared account, but mine connects each member's own account");
    const member = "uc-links.AAAAAAAAAAAAAAAAAAAAAA";
    const cookie = (await memberCookie(env.SESSION_KEY!, "uc-links", member)).split(";")[0]!;
    const memberLink = await open(await link("uc-links", member), { cookie });
    expect(memberLink.text).toContain("This link is for your own account, but up uses one shared account for team uc-links, which an admin connects: ask an admin for a new link.");
    expect((await proxy(new Request(`${BASE}/t/Not_A_Team/connect/${SERVER}`))).status).toBe(404);
    expect(await index("uc-links").listCredentials("uc-links")).toEqual([]);
    expect(connectLines().every((l) => l.outcome === "refused")).toBe(true);
  });
});

describe("a member's own account (per_user)", () => {
  async function hostSignIn(team: string, account: string, jar: CookieJar) {
    const reg = await proxy(new Request(`${BASE}/t/${team}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [HOST_REDIRECT], token_endpoint_auth_method: "none", client_name: "Host" }),
    }));
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const authorize = new URL(`${BASE}/t/${team}/oauth/authorize`);
    const params = { response_type: "code", client_id: clientId, redirect_uri: HOST_REDIRECT, code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", state: "s", scope: "mcp", resource: `${BASE}/t/${team}/mcp` };
    for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
    const outcome = await signInAs(authorize.href, browser(account, { jar }));
    expect(outcome.kind).toBe("redirect");
    return outcome;
  }

  it("works for the member it was made for, known by the cookie of their host sign-in", async () => {
    await oauthTeam("uc-member", { mode: "per_user" });
    await withIdp("uc-member");
    const jar = new CookieJar();
    const signedIn = await hostSignIn("uc-member", "alice", jar);
    expect(signedIn.trail.steps.some((s) => s.url.includes("/t/uc-member/oauth/callback"))).toBe(true);
    const alice = await userIdFor("uc-member", env.IDP_ISSUER, "alice");
    const outcome = await signInAs(await link("uc-member", alice), browser("alice", { jar }));
    const end = page(outcome);
    expect(end.status, end.text).toBe(200);
    expect(end.text).toContain("Connected up for team uc-member (your account)");
    // Straight to the upstream's AS: no second sign-in at the team's IdP.
    expect(outcome.trail.steps.some((s) => s.url.startsWith(env.IDP_ISSUER))).toBe(false);
    expect((await index("uc-member").listCredentials("uc-member")).map((c) => c.account)).toEqual([alice]);

    // The same cookie altered (its expiry pushed out) proves nobody: the link asks for a sign-in.
    const sent = jar.header(new URL(BASE));
    expect(sent).toMatch(MEMBER_VALUE);
    const cookie = sent.replace(MEMBER_VALUE, (_m, head: string, body: string, mac: string) => {
      const payload = fromBase64url(body);
      return `${head}${toBase64url({ ...payload, exp: payload.exp + 1 })}${mac}`;
    });
    const again = await proxy(new Request(await link("uc-member", alice), { headers: { cookie } }));
    expect(again.status).toBe(200);
    expect(pageText(await again.text())).toContain("Connecting your own up account needs to know which member of team uc-member you are.");
  });

  it("refuses the link in another member's browser, even after that member signs in", async () => {
    await oauthTeam("uc-other", { mode: "per_user" });
    await withIdp("uc-other");
    const alice = await userIdFor("uc-other", env.IDP_ISSUER, "alice");
    const aliceLink = await link("uc-other", alice);
    const jar = new CookieJar();
    await hostSignIn("uc-other", "bob", jar);

    // Bob's browser first gets a page saying the link is not his, with the sign-in button.
    const first = await proxy(new Request(aliceLink, { headers: { cookie: jar.header(new URL(aliceLink)) } }));
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(pageText(html)).toContain("This connect link was made for another member of team uc-other than the one signed in in this browser");
    expect(html).toContain("Sign in with uc-other's identity provider");

    // Signing in (as bob again) does not make it his.
    const end = page(await signInAs(aliceLink, browser("bob", { jar })));
    expect(end.status).toBe(403);
    expect(end.text).toContain("This connect link was made for another member of team uc-other, not for the account you signed in with");
    expect(await index("uc-other").listCredentials("uc-other")).toEqual([]);
  });

  it("without a cookie: the member signs in at the team's IdP (OAUTH_HOSTS off too), comes back, and connects", async () => {
    await oauthTeam("uc-nocookie", { mode: "per_user" });
    await withIdp("uc-nocookie");
    const bob = await userIdFor("uc-nocookie", env.IDP_ISSUER, "bob");
    const jar = new CookieJar();
    const off = proxyWith({ OAUTH_HOSTS: "off" });
    const outcome = await signInAs(await link("uc-nocookie", bob), { proxyOrigin: BASE, proxy: off, account: "bob", jar, accountAt: { [new URL(env.OAUTH_UPSTREAM_URL).origin]: "alice" } });
    const end = page(outcome);
    expect(end.status, end.text).toBe(200);
    expect(end.text).toContain("Connected up for team uc-nocookie (your account)");
    const paths = outcome.trail.steps.map((s) => new URL(s.url));
    // The link, the button, the IdP, its callback, the link again (now with the cookie), the upstream's AS, the callback.
    expect(paths.some((u) => u.origin === env.IDP_ISSUER)).toBe(true);
    expect(paths.filter((u) => u.pathname === "/t/uc-nocookie/connect/up").length).toBe(2);
    expect(paths.some((u) => u.pathname === "/t/uc-nocookie/oauth/callback")).toBe(true);
    expect((await index("uc-nocookie").listCredentials("uc-nocookie")).map((c) => c.account)).toEqual([bob]);
    // The member cookie: the member's id, its expiry and a mac; Secure, HttpOnly, SameSite=Lax, Path=/, 30 days.
    const callback = outcome.trail.steps.find((s) => s.url.includes("/t/uc-nocookie/oauth/callback"))!;
    expect(callback.status).toBe(302);
    const payload = fromBase64url(MEMBER_VALUE.exec(jar.header(new URL(BASE)))![2]!);
    expect(payload.user).toBe(bob);
    expect(Math.abs(payload.exp * 1000 - (Date.now() + 30 * 24 * 3600_000))).toBeLessThan(60_000);
    expect(await memberCookie(env.SESSION_KEY!, "uc-nocookie", bob)).toMatch(/^__Host-dynmcp-member=[^;]+; Path=\/; Max-Age=2592000; Secure; HttpOnly; SameSite=Lax$/);
  });

  it("refuses a member sign-in finished in another browser or replayed, and says when the team has no sign-in", async () => {
    await oauthTeam("uc-msi", { mode: "per_user" });
    await withIdp("uc-msi");
    const bob = await userIdFor("uc-msi", env.IDP_ISSUER, "bob");
    // Another browser at the IdP's callback: one without this flow's cookie.
    const elsewhere = page(await signInAs(await link("uc-msi", bob), browser("bob", { proxy: withoutCookiesAt("/t/uc-msi/oauth/callback") })));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain("This sign-in was started in another browser. Open the connect link again in the browser you use.");

    const jar = new CookieJar();
    const done = await signInAs(await link("uc-msi", bob), browser("bob", { jar }));
    expect(page(done).status).toBe(200);
    const callback = done.trail.steps.find((s) => s.url.includes("/t/uc-msi/oauth/callback"))!;
    const replayed = await proxy(new Request(callback.url, { headers: { cookie: jar.header(new URL(callback.url)) } }));
    expect(replayed.status).toBe(400);
    expect(pageText(await replayed.text())).toContain("This sign-in has expired or was already used. Open the connect link again.");

    await oauthTeam("uc-noidp", { mode: "per_user" });
    const noIdp = page(await signInAs(await link("uc-noidp", bob), browser("bob")));
    expect(noIdp.status).toBe(400);
    expect(noIdp.text).toContain("sign-in is not set up for team uc-noidp");
  });
});

describe("the proxy's client metadata document", () => {
  it("is served over https with the callback and a public client, and not over plain http", async () => {
    const https = proxyWith({ PUBLIC_URL: "https://mcp.example.test" });
    const res = await https(new Request("https://mcp.example.test/oauth/client-metadata.json"));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("max-age=");
    expect(await res.json()).toEqual({
      client_id: "https://mcp.example.test/oauth/client-metadata.json",
      client_name: "dynmcp-edge (mcp.example.test)",
      client_uri: "https://mcp.example.test",
      redirect_uris: ["https://mcp.example.test/oauth/upstream/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const plain = await proxy(new Request(`${BASE}/oauth/client-metadata.json`));
    expect(plain.status).toBe(404);
    expect(((await plain.json()) as { message: string }).message).toContain("only over https");
  });
});
