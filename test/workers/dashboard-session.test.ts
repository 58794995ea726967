// The operator dashboard's door, through the real Worker: the sign-in form without a session, a wrong and a right
// admin token, the session cookie's attributes, cookies that must be refused (altered, expired, signed before the
// admin token changed), CSRF on sign-out (no token, another session's, a foreign or missing Origin), the failed
// sign-ins counted in the admin API's per-address budget, and the page headers on every answer.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/edge/app.ts";
import { ADDRESS_LIMIT } from "../../src/edge/common/address-limit.ts";
import { sealOperatorSession } from "../../src/edge/dashboard/operator-session.ts";
import { BASE, workerFetch } from "./helpers.ts";
import { captureConsole } from "./upstream-oauth-helpers.ts";
import { ADMIN_TOKEN, cookieValue, csrfOf, expectPageHeaders, getPage, postForm, sessionSetCookie, signIn } from "./dashboard-helpers.ts";

const secrets = { sessionKey: env.SESSION_KEY!, adminToken: ADMIN_TOKEN };
const logged = captureConsole();

/** Whether the answer is the sign-in form: a labelled password field and a submit button posting to sign-in. */
async function isSignInForm(res: Response): Promise<boolean> {
  const html = await res.text();
  return (
    /<form method="post" action="\/dashboard\/sign-in"/.test(html) &&
    /<label for="token">Admin token<\/label>/.test(html) &&
    /<input type="password" id="token" name="token"/.test(html) &&
    /<button type="submit">Sign in<\/button>/.test(html)
  );
}

describe("signing in", () => {
  it("answers GET /dashboard without a session with the sign-in form itself, 200, and the page headers", async () => {
    const res = await getPage("/dashboard", { address: "198.51.100.1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expectPageHeaders(res);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await isSignInForm(res)).toBe(true);
  });

  it("refuses a wrong token with the form again and 401, sets no cookie and never shows the token", async () => {
    const res = await postForm("/dashboard/sign-in", { token: "not-the-admin-token-x1" }, { address: "198.51.100.2" });
    expect(res.status).toBe(401);
    expectPageHeaders(res);
    expect(sessionSetCookie(res)).toBeUndefined();
    const html = await res.clone().text();
    expect(html).toContain('role="alert"');
    expect(html).not.toContain("not-the-admin-token-x1");
    expect(await isSignInForm(res)).toBe(true);
  });

  it("takes the right token: 303 to /dashboard with a __Host- cookie, HttpOnly, Secure, SameSite=Strict, Path=/, eight hours", async () => {
    const res = await postForm("/dashboard/sign-in", { token: ADMIN_TOKEN }, { address: "198.51.100.3" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    expectPageHeaders(res);
    const line = sessionSetCookie(res)!;
    const attributes = line.split(";").slice(1).map((a) => a.trim());
    expect(attributes.sort()).toEqual(["HttpOnly", "Max-Age=28800", "Path=/", "SameSite=Strict", "Secure"]);
    expect(cookieValue(line)).toMatch(/^[A-Za-z0-9_-]{22}\.dsh1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(line).not.toContain(ADMIN_TOKEN);
    const page = await getPage("/dashboard", { address: "198.51.100.3", cookie: cookieValue(line) });
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    const html = await page.text();
    expect(html).toContain("<h1>Teams</h1>");
    expect(html).not.toContain(ADMIN_TOKEN);
    expect(csrfOf(html)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("refuses a sign-in form posted from another origin or with none, whatever its token", async () => {
    for (const origin of ["https://evil.example", null, "null"]) {
      const res = await postForm("/dashboard/sign-in", { token: ADMIN_TOKEN }, { address: "198.51.100.4", origin });
      expect(res.status, String(origin)).toBe(403);
      expectPageHeaders(res);
      expect(sessionSetCookie(res)).toBeUndefined();
    }
  });

  it("counts wrong tokens in the admin API's per-address budget: past it, 429 here and at the admin API", async () => {
    const address = "198.51.100.5";
    for (let i = 0; i < ADDRESS_LIMIT; i++) {
      const res = await postForm("/dashboard/sign-in", { token: `wrong-${i}` }, { address });
      expect(res.status).toBe(401);
      await res.body?.cancel();
    }
    const over = await postForm("/dashboard/sign-in", { token: ADMIN_TOKEN }, { address });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expectPageHeaders(over);
    expect(sessionSetCookie(over)).toBeUndefined();
    const admin = await workerFetch(`${BASE}/admin/teams/a/config`, { headers: { "cf-connecting-ip": address, authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.status).toBe(429);
    // Each refusal is logged with the address and the route, never with the token given.
    const refusals = logged.filter((l) => l.includes('"admin_auth"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(refusals).toHaveLength(ADDRESS_LIMIT);
    expect(refusals[0]).toMatchObject({ outcome: "refused", reason: "wrong token", address, route: "dashboard" });
    expect(logged.join("\n")).not.toMatch(/wrong-\d/);
  });
});

describe("without its secrets", () => {
  it("is off without ADMIN_TOKEN or SESSION_KEY: a 503 page for the form and the sign-in, no cookie", async () => {
    for (const off of [{ ...env, ADMIN_TOKEN: undefined }, { ...env, SESSION_KEY: undefined }]) {
      const form = await app.request(`${BASE}/dashboard`, {}, off);
      const post = await app.request(
        `${BASE}/dashboard/sign-in`,
        { method: "POST", headers: { origin: BASE, "content-type": "application/x-www-form-urlencoded" }, body: `token=${ADMIN_TOKEN}` },
        off,
      );
      for (const res of [form, post]) {
        expect(res.status).toBe(503);
        expectPageHeaders(res);
        expect(await res.text()).toContain("The dashboard needs the ADMIN_TOKEN and SESSION_KEY secrets");
        expect(sessionSetCookie(res)).toBeUndefined();
      }
    }
  });
});

describe("the session cookie", () => {
  it("is refused when altered, expired, or signed before ADMIN_TOKEN changed: the sign-in form instead", async () => {
    const address = "198.51.100.6";
    const good = await signIn(address);
    const [nonce, tag, payload, mac] = good.split(".") as [string, string, string, string];
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    const longer = btoa(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 365 * 86400 })).replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_");
    const refused = {
      "altered mac": [nonce, tag, payload, flip(mac)].join("."),
      "altered nonce": [flip(nonce), tag, payload, mac].join("."),
      "extended expiry": [nonce, tag, longer, mac].join("."),
      expired: await sealOperatorSession(secrets, Date.now() - 8 * 3600 * 1000 - 1000),
      "another admin token": await sealOperatorSession({ ...secrets, adminToken: "the-admin-token-before" }),
      "another session key": await sealOperatorSession({ ...secrets, sessionKey: "another-session-key" }),
      garbage: "x",
    };
    for (const [what, cookie] of Object.entries(refused)) {
      const res = await getPage("/dashboard", { address, cookie });
      expect(res.status, what).toBe(200);
      expect(await isSignInForm(res), what).toBe(true);
      const overview = await getPage("/dashboard/teams/any", { address, cookie });
      expect([overview.status, overview.headers.get("location")], what).toEqual([303, "/dashboard"]);
    }
    // Just inside its eight hours, a cookie still works.
    const late = await sealOperatorSession(secrets, Date.now() - 8 * 3600 * 1000 + 60_000);
    expect(await (await getPage("/dashboard", { address, cookie: late })).text()).toContain("<h1>Teams</h1>");
  });
});

describe("CSRF on sign-out", () => {
  it("refuses a sign-out without the session's token, with another session's, from a foreign origin or none; takes the right one", async () => {
    const address = "198.51.100.7";
    const cookie = await signIn(address);
    const csrf = csrfOf(await (await getPage("/dashboard", { address, cookie })).text());
    const other = csrfOf(await (await getPage("/dashboard", { address, cookie: await signIn(address) })).text());
    expect(other).not.toBe(csrf);
    const attempts: Array<[string, Record<string, string>, string | null | undefined]> = [
      ["no token", {}, undefined],
      ["another session's token", { csrf: other }, undefined],
      ["a foreign origin", { csrf }, "https://evil.example"],
      ["no origin", { csrf }, null],
      ["an opaque origin", { csrf }, "null"],
    ];
    for (const [what, form, origin] of attempts) {
      const res = await postForm("/dashboard/sign-out", form, { address, cookie, origin });
      expect(res.status, what).toBe(403);
      expectPageHeaders(res);
      expect(res.headers.getSetCookie(), what).toEqual([]);
    }
    // Still signed in after every refusal.
    expect(await (await getPage("/dashboard", { address, cookie })).text()).toContain("<h1>Teams</h1>");
    const out = await postForm("/dashboard/sign-out", { csrf }, { address, cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/dashboard");
    expectPageHeaders(out);
    const cleared = sessionSetCookie(out)!;
    expect(cleared).toMatch(/^__Host-dynmcp-dashboard=;/);
    expect(cleared).toContain("Max-Age=0");
  });

  it("refuses a sign-out without a session", async () => {
    const res = await postForm("/dashboard/sign-out", { csrf: "x" }, { address: "198.51.100.8" });
    expect(res.status).toBe(403);
    expectPageHeaders(res);
  });
});

describe("headers on every answer", () => {
  it("the stylesheet, an unknown page and an unknown team carry them too", async () => {
    const address = "198.51.100.9";
    const css = await getPage("/dashboard/dashboard.css", { address });
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain(".total");
    expectPageHeaders(css);
    const missing = await getPage("/dashboard/nothing-here", { address });
    expect(missing.status).toBe(404);
    expectPageHeaders(missing);
    const cookie = await signIn(address);
    for (const team of ["no-such-team", "Not_A_Team!"]) {
      const res = await getPage(`/dashboard/teams/${team}`, { address, cookie });
      expect(res.status, team).toBe(404);
      expectPageHeaders(res);
      expect(await res.text()).toContain("No such team");
    }
  });
});
