// A team's admins at /t/<team>/dashboard through the real Worker: they sign in at the team's real OpenID provider
// (harness/idp.ts, started by global-setup; driven by test/shared/oauth-driver.ts), the team's `dashboard_admins`
// (user:, domain:, group:) decides who is one, a member who is not gets a 403 page and no cookie; the session is bound
// to its team and checked at every request (a member taken off the list, or whose groups changed, is out at the next
// page); its POSTs need its CSRF token and are audited as the member; altered, expired and foreign cookies open
// nothing; the operator's cookie and a team admin's open only their own pages. OAUTH_HOSTS stays off: the dashboard's
// sign-in does not need the proxy to be an authorization server.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/edge/app.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { sealTeamAdminSession } from "../../src/edge/dashboard/team-admin-session.ts";
import { CookieJar } from "../../harness/cookie-jar.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { adminFetch, replayUrl, seedTeam } from "./helpers.ts";
import { BASE, store, teamWithIdp } from "./sign-in-helpers.ts";
import { COOKIE as OPERATOR_COOKIE, PAGE_HEADERS, csrfOf, expectPageHeaders } from "./dashboard-helpers.ts";

const proxy = async (request: Request): Promise<Response> => app.fetch(request, env, createExecutionContext());
const adminCookie = (team: string) => `__Host-dynmcp-team-admin-${team}`;
const home = (team: string) => `/t/${team}/dashboard`;

/** A team signing in through the test IdP, whose config names its dashboard admins. */
async function adminTeam(team: string, admins: string[] | undefined, rules: { allowed_domains?: string[]; allowed_groups?: string[] } = { allowed_domains: ["example.com"] }) {
  await teamWithIdp(team, rules);
  return seedTeam(team, { mcp: { memory: { url: replayUrl("memory") } }, ...(admins ? { dashboard_admins: admins } : {}) });
}

/** `account` signs in at the team's dashboard in a new browser: where it ended, and the browser's cookies. */
async function signInTo(team: string, account: string) {
  const outcome = await signInAs(`${BASE}${home(team)}`, { proxyOrigin: BASE, proxy, account });
  if (outcome.kind !== "page") throw new Error(`expected a page, went to ${outcome.url.href}`);
  return { status: outcome.status, text: outcome.text, jar: outcome.trail.jar, steps: outcome.trail.steps };
}

/** A request of the browser that holds `jar` (its cookies sent and kept, a POST from `origin`). */
async function browse(jar: CookieJar, path: string, form?: Record<string, string>, origin = BASE): Promise<Response> {
  const url = new URL(path, BASE);
  const headers = new Headers({ cookie: jar.header(url) });
  if (form) headers.set("content-type", "application/x-www-form-urlencoded");
  if (form) headers.set("origin", origin);
  const res = await proxy(new Request(url, { method: form ? "POST" : "GET", headers, redirect: "manual", ...(form ? { body: new URLSearchParams(form) } : {}) }));
  jar.store(url, res.headers.getSetCookie());
  return res;
}

/** A request bearing exactly this Cookie header. */
const withCookie = (path: string, cookie: string) => proxy(new Request(new URL(path, BASE), { headers: { cookie }, redirect: "manual" }));

const cookieOf = (jar: CookieJar, team: string) => jar.header(new URL(home(team), BASE)).split("; ").find((c) => c.startsWith(`${adminCookie(team)}=`))?.split("=")[1];

describe("a team admin signs in through the team's identity provider", () => {
  it("user: admits the named member (the cookie's attributes, a page that goes on to the overview); another member gets 403 and no cookie", async () => {
    await adminTeam("ta-user", ["user:alice@EXAMPLE.com"]);
    const first = await proxy(new Request(`${BASE}${home("ta-user")}`));
    expect(first.status).toBe(200);
    // The page headers, its form-action widened to the provider alone: the button's POST goes on there.
    for (const [name, value] of Object.entries(PAGE_HEADERS)) {
      expect(first.headers.get(name)).toBe(name === "content-security-policy" ? value.replace("form-action 'self'", `form-action 'self' ${new URL(env.IDP_ISSUER).origin}`) : value);
    }
    expect(first.headers.has("x-dashboard-form-target")).toBe(false);
    const signInHtml = await first.text();
    expect(signInHtml).toMatch(new RegExp(`<form method="post" action="${home("ta-user")}/sign-in"`));
    expect(signInHtml).toContain(`Sign in with ${new URL(env.IDP_ISSUER).host}`);

    const alice = await signInTo("ta-user", "alice");
    expect(alice.status, alice.text).toBe(200);
    const done = alice.steps.at(-1)!;
    expect(done.url).toContain("/t/ta-user/oauth/callback");
    expect(done.body).toMatch(/<meta http-equiv="refresh" content="0; url=\/t\/ta-user\/dashboard"/);
    expect(done.body).toContain(`<a href="${home("ta-user")}">`);
    const set = done.setCookies!.find((line) => line.startsWith(`${adminCookie("ta-user")}=`))!;
    expect(set.split("; ").slice(1).sort()).toEqual(["HttpOnly", "Max-Age=28800", "Path=/", "SameSite=Strict", "Secure"]);
    const overview = await browse(alice.jar, home("ta-user"));
    expect(overview.status).toBe(200);
    expectPageHeaders(overview);
    const html = await overview.text();
    expect(html).toContain("<h1>Team ta-user</h1>");
    expect(html).not.toContain("All teams");
    expect(html).toContain(`href="${home("ta-user")}/audit"`);
    expect(html).toContain(`action="${home("ta-user")}/sign-out"`);
    expect(html).not.toContain("/dashboard/teams/");


    const dave = await signInTo("ta-user", "dave");
    expect(dave.status).toBe(403);
    expect(dave.text).toContain("not one of its dashboard admins");
    expect(cookieOf(dave.jar, "ta-user")).toBeUndefined();
    expect((await browse(dave.jar, `${home("ta-user")}/audit`)).status).toBe(303);
  });

  it("domain: admits verified addresses of the domain only; group: admits the group's members", async () => {
    await adminTeam("ta-domain", ["domain:example.com"], { allowed_domains: ["example.com"], allowed_groups: ["mcp-users"] });
    expect((await signInTo("ta-domain", "dave")).status).toBe(200);
    // erin is admitted to the team by her group, but her example.com address is not verified.
    const erin = await signInTo("ta-domain", "erin");
    expect(erin.status).toBe(403);
    expect(erin.text).toContain("not one of its dashboard admins");

    await adminTeam("ta-group", ["group:eng"], { allowed_groups: ["mcp-users"] });
    const dave = await signInTo("ta-group", "dave");
    expect(dave.status).toBe(200);
    expect((await browse(dave.jar, `${home("ta-group")}/tools`)).status).toBe(200);
    const bob = await signInTo("ta-group", "bob");
    expect(bob.status).toBe(403);
    expect(cookieOf(bob.jar, "ta-group")).toBeUndefined();
    // A member the team does not admit at all is refused by the team's rule first.
    const alice = await signInTo("ta-group", "alice");
    expect(alice.status).toBe(403);
    expect(alice.text).toContain("membership of an allowed group");
  });
});

describe("dashboard_admins in a team config", () => {
  it("takes user:, domain: and group: selectors; anything else is refused with a message naming the entry", async () => {
    const put = (admins: unknown) => adminFetch("PUT", "/teams/ta-config/config", { mcp: { memory: { url: replayUrl("memory") } }, dashboard_admins: admins });
    expect((await put(["user:alice@example.com", "domain:example.com", "group:eng"])).status).toBe(200);
    for (const [admins, words] of [
      [["*"], 'dashboard_admins names members: user:<email>, domain:<email domain> or group:<name>, not "*"'],
      [["token:ci"], 'not "token:ci"'],
      [["user:alice"], "user: takes an email address"],
      [["domain:alice@example.com"], "domain: takes the part after the @"],
      [[], "dashboard_admins is empty"],
    ] as const) {
      const res = await put(admins);
      expect(res.status, JSON.stringify(admins)).toBe(400);
      const body = (await res.json()) as { issues: Array<{ path: string; message: string }> };
      expect(body.issues.some((i) => i.path.startsWith("dashboard_admins") && i.message.includes(words)), JSON.stringify(body.issues)).toBe(true);
    }
  });
});

describe("a team admin's session", () => {
  it("is its team's alone: another team's path, the operator's pages and the operator's cookie do not mix with it", async () => {
    await adminTeam("ta-other", ["user:alice@example.com"]);
    await adminTeam("ta-pages", ["user:alice@example.com"]);
    const alice = await signInTo("ta-pages", "alice");
    expect(alice.status).toBe(200);
    const value = cookieOf(alice.jar, "ta-pages")!;
    expect(value).toBeDefined();
    // Under the other team's cookie name: the sign-in page, and a redirect to it from any of its pages.
    const other = await withCookie(home("ta-other"), `${adminCookie("ta-other")}=${value}`);
    expect(other.status).toBe(200);
    expect(await other.text()).toContain("Sign in with");
    expect((await withCookie(`${home("ta-other")}/members`, `${adminCookie("ta-other")}=${value}`)).status).toBe(303);
    // Not the operator's pages, under either name.
    for (const cookie of [`${adminCookie("ta-pages")}=${value}`, `${OPERATOR_COOKIE}=${value}`]) {
      const list = await withCookie("/dashboard", cookie);
      expect(list.status).toBe(200);
      expect(await list.text()).toContain('type="password"');
      expect((await withCookie("/dashboard/teams/ta-pages", cookie)).status).toBe(303);
    }
    // Nor does the operator's cookie open the team's own dashboard.
    const signedIn = await proxy(
      new Request(`${BASE}/dashboard/sign-in`, { method: "POST", redirect: "manual", headers: { origin: BASE, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": "192.0.2.90" }, body: "token=test-admin-token" }),
    );
    expect(signedIn.status).toBe(303);
    const operator = /__Host-dynmcp-dashboard=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!;
    const asOperator = await withCookie(home("ta-pages"), `${OPERATOR_COOKIE}=${operator}`);
    expect(await asOperator.text()).toContain("Sign in with");
    expect((await withCookie(`${home("ta-pages")}/audit`, `${OPERATOR_COOKIE}=${operator}; ${adminCookie("ta-other")}=${value}`)).status).toBe(303);
    // The operator's pages of the same team still say "All teams"; the team admin's never link there.
    expect(await (await withCookie("/dashboard/teams/ta-pages", `${OPERATOR_COOKIE}=${operator}`)).text()).toContain("All teams");
  });

  it("refuses altered, expired and other teams' cookies", async () => {
    await adminTeam("ta-removed", ["user:alice@example.com"]);
    const user = await userIdFor("ta-removed", env.IDP_ISSUER, "alice");
    const key = env.SESSION_KEY!;
    const good = await sealTeamAdminSession(key, "ta-removed", user);
    const at = (cookie: string) => withCookie(`${home("ta-removed")}/audit`, `${adminCookie("ta-removed")}=${cookie}`);
    // The user index must know alice for the good one to open: her sign-in records her.
    expect((await signInTo("ta-removed", "alice")).status).toBe(200);
    expect((await at(good)).status).toBe(200);
    const mac = good.lastIndexOf(".") + 5;
    const altered = good.slice(0, mac) + (good[mac] === "A" ? "B" : "A") + good.slice(mac + 1);
    const expired = await sealTeamAdminSession(key, "ta-removed", user, Date.now() - 9 * 3600_000);
    const foreign = await sealTeamAdminSession(key, "ta-other", user);
    const otherKey = await sealTeamAdminSession("another-session-key", "ta-removed", user);
    for (const bad of [altered, expired, foreign, otherKey, "", "garbage"]) expect((await at(bad)).status, bad).toBe(303);
  });

  it("ends at the next request once the member is off dashboard_admins or out of its group", async () => {
    await adminTeam("ta-removed", ["user:alice@example.com", "group:eng"], { allowed_domains: ["example.com"] });
    const alice = await signInTo("ta-removed", "alice");
    const dave = await signInTo("ta-removed", "dave");
    expect([alice.status, dave.status]).toEqual([200, 200]);
    expect((await browse(alice.jar, `${home("ta-removed")}/upstreams`)).status).toBe(200);
    expect((await browse(dave.jar, `${home("ta-removed")}/policies`)).status).toBe(200);

    await seedTeam("ta-removed", { mcp: { memory: { url: replayUrl("memory") } }, dashboard_admins: ["group:eng"] });
    const out = await browse(alice.jar, `${home("ta-removed")}/upstreams`);
    expect(out.status).toBe(403);
    expect(await out.text()).toContain("dashboard admins (dashboard_admins)");
    // Signed out: the cookie is gone, and the next page is the sign-in again.
    expect(cookieOf(alice.jar, "ta-removed")).toBeUndefined();
    expect((await browse(alice.jar, `${home("ta-removed")}/upstreams`)).status).toBe(303);
    expect((await browse(dave.jar, `${home("ta-removed")}/policies`)).status).toBe(200);

    // dave's groups as his next sign-in anywhere in the team records them: no longer in eng.
    const id = await userIdFor("ta-removed", env.IDP_ISSUER, "dave");
    await store().recordUser("ta-removed", id, { sub: "dave", issuer: env.IDP_ISSUER, email: "dave@example.com", emailVerified: true, groups: ["mcp-users"] });
    expect((await browse(dave.jar, `${home("ta-removed")}/policies`)).status).toBe(403);
  });

  it("needs its CSRF token and own origin for every POST; its actions are audited as the member; sign-out ends it", async () => {
    const seeded = await adminTeam("ta-csrf", ["user:alice@example.com"]);
    const alice = await signInTo("ta-csrf", "alice");
    expect(alice.status).toBe(200);
    const page = await browse(alice.jar, `${home("ta-csrf")}/members`);
    const html = await page.text();
    const csrf = csrfOf(html);
    expect(html).toContain(`action="${home("ta-csrf")}/tokens"`);

    for (const path of ["/reload", "/tokens", "/tools/promote", "/tools/pin", "/pins/approve", "/policies", "/sign-out"]) {
      expect((await browse(alice.jar, `${home("ta-csrf")}${path}`, { label: "x" })).status, `${path} without the token`).toBe(403);
      expect((await browse(alice.jar, `${home("ta-csrf")}${path}`, { csrf, label: "x" }, "https://evil.example")).status, `${path} from another site`).toBe(403);
    }
    const minted = await browse(alice.jar, `${home("ta-csrf")}/tokens`, { csrf, label: "from-team-admin" });
    expect(minted.status).toBe(201);
    const mintedHtml = await minted.text();
    const token = /data-minted-token[^>]*>([^<]+)</.exec(mintedHtml)?.[1];
    expect(token).toBeDefined();
    const reload = await browse(alice.jar, `${home("ta-csrf")}/reload`, { csrf });
    expect(reload.status).toBe(303);
    expect(reload.headers.get("location")).toBe(`${home("ta-csrf")}/upstreams?reloaded=0`);
    // The config edits are the team admin's too: their forms post under the team's base, and the write is theirs.
    const tools = await (await browse(alice.jar, `${home("ta-csrf")}/tools`)).text();
    expect(tools).toContain(`action="${home("ta-csrf")}/tools/pin"`);
    const version = /name="version" value="([0-9a-f]{64})"/.exec(tools)?.[1] ?? "";
    const pinned = await browse(alice.jar, `${home("ta-csrf")}/tools/pin`, { csrf, version, pin: "on" });
    expect(pinned.status).toBe(200);
    expect(((await (await adminFetch("GET", "/teams/ta-csrf/config")).json()) as { pin_tools?: boolean }).pin_tools).toBe(true);

    const audit = (await (await adminFetch("GET", "/teams/ta-csrf/audit?tool=admin/*")).json()) as { entries: Array<{ tool: string; principal: object }> };
    const user = await userIdFor("ta-csrf", env.IDP_ISSUER, "alice");
    expect(audit.entries.map((e) => e.tool).sort()).toEqual(["admin/config.put", "admin/sessions.reload", "admin/sessions.reload", "admin/token.mint"]);
    for (const entry of audit.entries) expect(entry.principal).toEqual({ kind: "member", id: user, email: "alice@example.com" });

    // Nothing secret on any page: not the IdP's client secret, the session key, the cookie, a team token.
    const cookie = cookieOf(alice.jar, "ta-csrf")!;
    for (const path of ["", "/upstreams", "/tools", "/policies", "/audit", "/audit.ndjson", "/members"]) {
      const res = await browse(alice.jar, `${home("ta-csrf")}${path}`);
      expect(res.status, path).toBe(200);
      if (!path.endsWith(".ndjson")) for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(res.headers.get(name)).toBe(value);
      const text = new TextDecoder().decode(await res.arrayBuffer());
      for (const secret of [env.IDP_CLIENT_SECRET, env.SESSION_KEY!, cookie, seeded, token!]) expect(text.includes(secret), `${path} shows a secret`).toBe(false);
    }

    const out = await browse(alice.jar, `${home("ta-csrf")}/sign-out`, { csrf });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe(home("ta-csrf"));
    expect(cookieOf(alice.jar, "ta-csrf")).toBeUndefined();
    // Nothing server-side forgets a session (as the operator's): a copy taken before sign-out lives out its hours.
    expect((await withCookie(`${home("ta-csrf")}/members`, `${adminCookie("ta-csrf")}=${cookie}`)).status).toBe(200);
  });
});
