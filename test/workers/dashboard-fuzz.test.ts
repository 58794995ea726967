// Hostile input at the operator dashboard, through the real Worker: a few hundred generated requests (seeded, so a
// failure replays) at /dashboard and a team's pages: odd paths (real page names, `..`, odd encodings, very long and
// unicode segments), every method, query strings (huge, repeated keys, the audit filters with junk, markup), form
// bodies (oversized, wrong content types, a CSRF token missing, forged or another session's, foreign origins), and
// cookies (none, the session's, garbage, expired, tampered). Every answer: never a 5xx; the page headers on all the
// dashboard answers; no secret in any body (ADMIN_TOKEN, SESSION_KEY, a team token, an upstream's header value);
// no payload reflected as markup. And since no request carries its session's CSRF token, nothing changes: the team's
// tokens, config and secrets read back the same, the audit trail has no new admin action, KV holds the same keys.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sealOperatorSession } from "../../src/edge/dashboard/operator-session.ts";
import { seededRandom, type SeededRandom } from "../shared/seeded-random.ts";
import { ADMIN_TOKEN, COOKIE, PAGE_HEADERS, csrfOf, getPage, signIn } from "./dashboard-helpers.ts";
import { BASE, adminFetch, connect, replayUrl, seedTeam, waitFor, workerFetch } from "./helpers.ts";

const TEAM = "dash-fuzz";
const REQUESTS = 600;
const SECRET_VALUE = "fuzz-secret-header-value-never-shown";
const LITERAL_VALUE = "fuzz-literal-header-value-never-shown";

/** Markup for every place input can reach; what each would leave on a page were it not escaped. */
const PAYLOADS = ["<script>alert(1)</script>", '"><i data-fuzz-tag>', 'x" data-fuzz-attr="1', "</pre><i data-fuzz-tag>", "javascript:alert(1)"];
const RAW_MARKUP = ["<script", "<i data-fuzz-tag", 'data-fuzz-attr="', 'href="javascript:'];
const LABEL = '"><i data-fuzz-tag>bot';

const SEGMENTS = [
  "nope", "..", "%2e%2e", ".", "%2F", "a%2Fb", "%00", "%ff%fe", "%", "%zz", "x".repeat(5000), "A".repeat(64),
  "チーム", "%E3%83%81", "\u202e", `${TEAM}%20`, `${TEAM};x`, "-", ...PAYLOADS.map(encodeURIComponent),
];
const AUDIT_KEYS = ["since", "until", "principal", "tool", "outcome", "limit", "cursor", "format"];
/** A team's pages and the query keys each reads (the real pages three times as often as the wrong ones). */
const TEAM_PAGES: Record<string, string[]> = {
  "": [], "/upstreams": ["reloaded"], "/tools": ["q"], "/policies": ["label", "email", "groups"], "/audit": AUDIT_KEYS,
  "/audit.ndjson": AUDIT_KEYS, "/members": [],
};
const WRONG_PAGES = ["/", "/nope", "/tools/x", "/audit.ndjson/.."];
const TEAM_POSTS = [
  "/reload", "/tokens", "/tokens/0123456789abcdef/revoke", "/tokens/zz/revoke", "/tokens/%2e%2e/revoke", "/tools/promote", "/tools/pin", "/pins/approve",
  "/policies", "/members/x/remove", "/members/dz-fuzz.AAAAAAAAAAAAAAAAAAAAAA/grants/0123456789abcdef/revoke", "/sign-out", "/sign-in",
];
const TOP = ["", "/", "/sign-in", "/sign-out", "/dashboard.css", "/nope", "/..", "/%2e%2e/admin/teams", "//", "/teams", "/teams/", "/teams/../sign-out"];
const KEYS = [...new Set(Object.values(TEAM_PAGES).flat()), "junk"];
const VALUES = [
  ...PAYLOADS, "", " ", "-1", "0", "1e309", "NaN", "99999999999999999999", "2026-13-45", "2026-11-28T99:00:00Z", "%", "%zz",
  "☃", "\u0000", "admin/*", "a&b=c", "sam@acme.example", "bot", LABEL,
];

/** A path under /dashboard and the method its route takes (or, a fifth of the time, any other). */
function target(r: SeededRandom): { method: string; path: string; keys: string[] } {
  // Mostly the real team: its pages are where the data is.
  const team = () => (r.next() < 0.7 ? TEAM : r.pick(SEGMENTS));
  const kind = r.pick([0, 1, 1, 1, 2, 2, 3, 4, 5]);
  const page = r.next() < 0.75 ? r.pick(Object.keys(TEAM_PAGES)) : r.pick(WRONG_PAGES);
  const rest =
    kind === 0 ? r.pick(TOP)
    : kind === 1 ? `/teams/${team()}${page}`
    : kind === 2 ? `/teams/${team()}${r.pick(TEAM_POSTS)}`
    : kind === 3 ? `/teams/${team()}/${team()}/${team()}`
    // A team admin's mount of the same pages (the team has no IdP: nobody can sign in there).
    : kind === 4 ? `/t/${team()}/dashboard${page}`
    : `/t/${team()}/dashboard${r.pick(TEAM_POSTS)}`;
  const posted = kind === 2 || kind === 5 || rest === "/sign-in" || rest === "/sign-out";
  const method = r.next() < 0.8 ? (posted ? "POST" : "GET") : r.pick(["GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]);
  return { method, path: kind >= 4 ? rest : `/dashboard${rest}`, keys: kind === 1 || kind === 4 ? (TEAM_PAGES[page] ?? []) : [] };
}

/** A query string: mostly the page's own keys (`keys`), with junk, markup and sizes for values. */
function query(r: SeededRandom, keys: string[]): string {
  if (r.next() < 0.3) return "";
  const huge = r.next() < 0.1;
  const count = huge ? 1 : r.pick([1, 2, 3, 10, 200]);
  const parts = Array.from({ length: count }, () => {
    const value = huge ? "x".repeat(r.pick([2_000, 20_000, 100_000])) : r.pick(VALUES);
    const key = keys.length > 0 && r.next() < 0.7 ? r.pick(keys) : r.pick(KEYS);
    return `${key}=${r.next() < 0.8 ? encodeURIComponent(value) : value.replaceAll("#", "%23")}`;
  });
  return `?${parts.join("&")}`;
}

interface Sessions {
  /** The session the fuzz signs in as (its cookie), and another session's CSRF token. */
  cookie: string;
  foreignCsrf: string;
  expired: string;
  tampered: string;
}

function cookieHeader(r: SeededRandom, s: Sessions): string | undefined {
  // Signed in half the time.
  if (r.next() < 0.5) return `${COOKIE}=${s.cookie}`;
  const garbage = r.pick(["", "garbage", "a.b.c.d", "x".repeat(5000), ";;;", ...PAYLOADS]);
  return r.pick([
    undefined, `${COOKIE}=${s.expired}`, `${COOKIE}=${s.tampered}`,
    `${COOKIE}=${garbage}`, `dynmcp-dashboard=${s.cookie}`, `${COOKIE}=${garbage}; ${COOKIE}=${s.cookie}`, garbage,
    // The operator's cookie under a team admin's name, and garbage there.
    `__Host-dynmcp-team-admin-${TEAM}=${s.cookie}`, `__Host-dynmcp-team-admin-${TEAM}=${garbage}`,
  ]);
}

/** A body as a form (or as anything else): never with the signed-in session's own CSRF token. */
function body(r: SeededRandom, s: Sessions): { type: string | undefined; text: string } {
  const form = new URLSearchParams();
  const csrf = r.pick([undefined, "", s.foreignCsrf, `${s.foreignCsrf}x`, "0".repeat(43), "x".repeat(10_000)]);
  if (csrf !== undefined) form.set("csrf", csrf);
  for (const key of ["label", "view", "token", "q", "tool", "action", "pin", "server", "version", "policies"]) if (r.next() < 0.4) form.append(key, r.pick(VALUES));
  if (r.next() < 0.1) form.set("pad", "a".repeat(r.pick([5_000, 100_000])));
  const text = r.next() < 0.05 ? r.pick(["%%%&&&==", "\u0000\u0001", '{"csrf":"x"}', "x".repeat(50_000)]) : form.toString();
  const FORM_TYPES = ["application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=utf-8"];
  const type = r.next() < 0.75 ? r.pick(FORM_TYPES) : r.pick(["application/json", "multipart/form-data; boundary=x", "text/plain", undefined]);
  return { type, text };
}

const underDashboard = (url: string) => /^\/(dashboard|t\/[^/]+\/dashboard)(\/|$)/.test(new URL(url).pathname);

/** Everything that must not change: the team's tokens, config and secrets, the admin actions in its trail, KV's keys. */
async function state(): Promise<string> {
  const read = async (p: string) => (await adminFetch("GET", `/teams/${TEAM}${p}`)).text();
  const audit = JSON.parse(await read("/audit?limit=1000")) as { entries: Array<{ kind: string }> };
  const keys = (await env.TEAMS.list()).keys.map((k) => k.name);
  return JSON.stringify([await read("/tokens"), await read("/config"), await read("/secrets"), audit.entries.filter((e) => e.kind === "admin"), keys]);
}

async function sessions(): Promise<Sessions> {
  const cookie = await signIn("203.0.113.200");
  const other = await signIn("203.0.113.201");
  const foreignCsrf = csrfOf(await (await getPage("/dashboard", { address: "203.0.113.201", cookie: other })).text());
  const expired = await sealOperatorSession({ sessionKey: env.SESSION_KEY!, adminToken: ADMIN_TOKEN }, Date.now() - 9 * 3600_000);
  // A character well inside the MAC changed (the last one may carry padding bits only).
  const at = cookie.length - 10;
  const tampered = `${cookie.slice(0, at)}${cookie[at] === "A" ? "B" : "A"}${cookie.slice(at + 1)}`;
  return { cookie, foreignCsrf, expired, tampered };
}

describe("the dashboard under fuzz", () => {
  it(`answers ${REQUESTS} hostile requests without a 5xx, a leak, a reflected payload or a change`, { timeout: 180_000 }, async () => {
    const token = await seedTeam(TEAM, {
      mcp: {
        ok: { url: replayUrl("dash-ok"), headers: { "x-api-key": "${secret:FUZZ_KEY}", "x-literal": LITERAL_VALUE } },
        down: { url: replayUrl("dash-down") },
      },
    });
    expect((await adminFetch("PUT", `/teams/${TEAM}/secrets/FUZZ_KEY`, { value: SECRET_VALUE })).status).toBe(204);
    // A token whose label is markup, and a call with it: the members page and the trail show that label.
    const labelled = await adminFetch("POST", `/teams/${TEAM}/tokens`, { label: LABEL });
    expect(labelled.status).toBe(201);
    const bot = (await labelled.json()) as { id: string; token: string };
    const { client } = await connect(TEAM, bot.token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "ok/read_graph", tool_input: {} } });
    await client.close();
    const called = async () => ((await (await adminFetch("GET", `/teams/${TEAM}/audit`)).json()) as { entries: Array<{ kind: string }> }).entries.some((e) => e.kind === "tool_call");
    expect(await waitFor(called, { tries: 100, ms: 50 })).toBe(true);

    const s = await sessions();
    const secrets = [ADMIN_TOKEN, env.SESSION_KEY!, env.SECRETS_KEY!, token, bot.token, SECRET_VALUE, LITERAL_VALUE];
    const before = await state();
    const r = seededRandom(20261129);
    const statuses = new Map<number, number>();
    // Pages that showed a payload, escaped: the label stored with the token, or what the query or path carried.
    let escapedShown = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const { method, path, keys } = target(r);
      const url = `${BASE}${path}${query(r, keys)}`;
      // A new client address every 40 requests, so the per-address budget of failed sign-ins is not what answers.
      const headers: Record<string, string> = { "cf-connecting-ip": `203.0.113.${Math.floor(i / 40)}` };
      const cookie = cookieHeader(r, s);
      if (cookie !== undefined) headers.cookie = cookie;
      const origin = r.next() < 0.7 ? BASE : r.pick(["https://evil.example", "null", undefined]);
      if (origin !== undefined) headers.origin = origin;
      const sent = method === "GET" || method === "HEAD" ? undefined : body(r, s);
      if (sent?.type !== undefined) headers["content-type"] = sent.type;
      const res = await workerFetch(url, { method, headers, redirect: "manual", ...(sent ? { body: sent.text } : {}) });
      const text = await res.text();
      const where = `request ${i}: ${method} ${url.slice(0, 160)} (${url.length} chars) → ${res.status}`;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `${where}: ${text.slice(0, 200)}`).toBeLessThan(500);
      if (underDashboard(url)) for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(res.headers.get(name), `${where}: ${name}`).toBe(value);
      for (const secret of secrets) expect(text.includes(secret), `${where}: a secret in the answer`).toBe(false);
      if ((res.headers.get("content-type") ?? "").includes("html")) for (const raw of RAW_MARKUP) expect(text.includes(raw), `${where}: ${raw} unescaped`).toBe(false);
      if (text.includes("&lt;i data-fuzz-tag") || text.includes("&lt;script")) escapedShown++;
    }
    expect(await state()).toBe(before);
    // The mix reached the pages themselves (200, with a stored or sent payload shown escaped), not only redirects
    // (303), refused queries (400), refused forms (403) and unknown pages (404).
    expect(escapedShown, "pages that showed a payload, escaped").toBeGreaterThan(0);
    for (const status of [200, 303, 400, 403, 404]) expect(statuses.get(status) ?? 0, `answers with ${status}: ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
  });
});
