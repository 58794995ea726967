// Accounts at OAuth upstreams through the admin API (issue 16, docs/oauth.md 3.3 and 3.4): the connect link an admin
// opens for a shared entry, listing and disconnecting accounts, and what deleting a user or changing or deleting a
// config takes with it (credentials in the team index, the proxy's registration in TEAMS). Credentials are seeded
// straight into the team index's vault with recognisable fake tokens, and every answer is searched for them.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { checkConnectHandle, CONNECT_LINK_TTL_MS } from "../../src/auth/connect-link.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { app } from "../../src/edge/app.ts";
import { bindingKv } from "../../src/store/binding-kv.ts";
import { TeamStore } from "../../src/store/store.ts";
import { urlPolicy } from "../../src/lib/url-policy.ts";
import { ADMIN } from "./helpers.ts";

/** A local proxy's base: connect links are made from the request's origin when PUBLIC_URL is not set. */
const BASE = "http://localhost:8787";
const ISSUER = "https://idp.example";
const AS = "https://as.example";
const url = (name: string) => `https://${name}.example/mcp`;
const shared = { type: "oauth", mode: "shared" } as const;
const perUser = { type: "oauth", mode: "per_user" } as const;

/** Every answer body the admin API gave in this file, and every fake token seeded: none may be in any answer. */
const bodies: string[] = [];
const secrets: string[] = [];

async function admin(method: string, path: string, options: { body?: unknown; bindings?: object; headers?: Record<string, string> } = {}) {
  const { body, bindings = env, headers = ADMIN } = options;
  const init: RequestInit = {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
  const res = await app.fetch(new Request(`${BASE}/admin${path}`, init), bindings, createExecutionContext());
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, text, json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

/** Stores a config through the admin API (so the deletion hook runs) and answers its warnings. */
async function putConfig(team: string, config: unknown): Promise<string[]> {
  const res = await admin("PUT", `/teams/${team}/config`, { body: config });
  expect(res.status, res.text).toBe(200);
  return res.json!["warnings"] as string[];
}

const index = (team: string) => env.TEAM_INDEX.getByName(team);
const store = () => new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env) });

/** An account's credential, as the connect callback stores it, with fake tokens that name it. */
async function seed(team: string, server: string, account: string, extra: { expiresAt?: number; scope?: string; refreshable?: boolean } = {}) {
  const accessToken = `FAKE-ACCESS-${team}-${server}-${account}`;
  const refreshToken = `FAKE-REFRESH-${team}-${server}-${account}`;
  secrets.push(accessToken, refreshToken, "FAKE-CLIENT-SECRET");
  await index(team).putCredential(team, server, account, {
    issuer: AS,
    resource: url(server),
    tokenEndpoint: `${AS}/token`,
    clientId: "proxy-client",
    clientSecret: "FAKE-CLIENT-SECRET",
    authMethod: "client_secret_post",
    accessToken,
    ...(extra.refreshable === false ? {} : { refreshToken }),
    ...(extra.expiresAt === undefined ? {} : { expiresAt: extra.expiresAt }),
    ...(extra.scope === undefined ? {} : { scope: extra.scope }),
    connectedAt: "2026-11-20T10:00:00.000Z",
  });
}

/** The proxy's registration at a server's authorization server, as the connect routes keep it. */
const register = (team: string, server: string) =>
  env.TEAMS.put(kvKeys.upstreamClient(team, server), JSON.stringify({ issuer: AS, redirectUri: `${BASE}/oauth/upstream/callback`, clientId: `reg-${server}`, authMethod: "none", registeredAt: "2026-11-20T10:00:00.000Z" }));
const registered = async (team: string, server: string) => (await env.TEAMS.get(kvKeys.upstreamClient(team, server))) !== null;

/** Which accounts the team's vault holds, as `server/account`, sorted. */
const held = async (team: string) => (await index(team).listCredentials(team)).map((c) => `${c.server}/${c.account}`).sort();

describe("connect links for shared OAuth upstreams", () => {
  it("mints a ten-minute link for a shared entry, bound to the team, server and shared account", async () => {
    const t = "uac-connect";
    await putConfig(t, { mcp: { github: { url: url("github"), auth: shared }, docs: { url: url("docs"), auth: perUser }, plain: { url: url("plain") } } });
    const before = Date.now();
    const res = await admin("POST", `/teams/${t}/upstreams/github/connect`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json!).sort()).toEqual(["expiresAt", "url"]);
    const link = res.json as { url: string; expiresAt: string };
    expect(link.url).toMatch(new RegExp(`^http://localhost:8787/t/${t}/connect/github\\?h=[A-Za-z0-9_-]{22}\\.cx2\\.[A-Za-z0-9_.-]+$`));
    const handle = new URL(link.url).searchParams.get("h")!;
    const check = await checkConnectHandle(env.SESSION_KEY!, handle, t, "github", "shared");
    expect(check).toMatchObject({ ok: true });
    expect(check.ok && check.expiresAt.toISOString()).toBe(link.expiresAt);
    // The expiry is whole seconds, cut down from the minting instant, which lies between `before` and `after`.
    const after = Date.now();
    const expiresAt = Date.parse(link.expiresAt);
    expect(expiresAt % 1000).toBe(0);
    expect(expiresAt).toBeGreaterThan(before + CONNECT_LINK_TTL_MS - 1_000);
    expect(expiresAt).toBeLessThanOrEqual(after + CONNECT_LINK_TTL_MS);
    // Another server, team or account does not take it.
    expect(await checkConnectHandle(env.SESSION_KEY!, handle, t, "docs", "shared")).toEqual({ ok: false, problem: "foreign" });
    expect(await checkConnectHandle(env.SESSION_KEY!, handle, "uac-other", "github", "shared")).toEqual({ ok: false, problem: "foreign" });
    const someone = await userIdFor(t, ISSUER, "ada");
    expect(await checkConnectHandle(env.SESSION_KEY!, handle, t, "github", someone)).toEqual({ ok: false, problem: "foreign" });
    // Each call is a new link.
    const again = (await admin("POST", `/teams/${t}/upstreams/github/connect`)).json as { url: string };
    expect(again.url).not.toBe(link.url);
    // PUBLIC_URL, when set, is the link's base (not the request's origin).
    const deployed = await admin("POST", `/teams/${t}/upstreams/github/connect`, { bindings: { ...env, PUBLIC_URL: "https://mcp.example.com" } });
    expect((deployed.json as { url: string }).url).toMatch(new RegExp(`^https://mcp\\.example\\.com/t/${t}/connect/github\\?h=[A-Za-z0-9_-]{22}\\.cx2\\.`));
    // Single-MCP mode: its one server is "mcp".
    await putConfig("uac-connect-single", { url: url("single"), auth: shared });
    expect((await admin("POST", "/teams/uac-connect-single/upstreams/mcp/connect")).status).toBe(200);
  });

  it("refuses entries without OAuth or per_user (409), unknown ones (404) and a missing SESSION_KEY (503)", async () => {
    const t = "uac-connect-refused";
    await putConfig(t, {
      mcp: {
        github: { url: url("github"), auth: shared },
        docs: { url: url("docs"), auth: perUser },
        plain: { url: url("plain") },
        off: { url: url("off"), auth: shared, enabled: false },
      },
    });
    const perUserRes = await admin("POST", `/teams/${t}/upstreams/docs/connect`);
    expect(perUserRes.status).toBe(409);
    expect(perUserRes.json).toMatchObject({ error: "per_user", message: expect.stringContaining("each member connects their own account") });
    const plainRes = await admin("POST", `/teams/${t}/upstreams/plain/connect`);
    expect(plainRes.status).toBe(409);
    expect(plainRes.json).toMatchObject({ error: "not_oauth", message: expect.stringContaining("does not sign in with OAuth") });
    for (const path of [`/teams/${t}/upstreams/nope/connect`, `/teams/${t}/upstreams/off/connect`, "/teams/uac-no-config/upstreams/github/connect"]) {
      const res = await admin("POST", path);
      expect(res.status, path).toBe(404);
      expect(res.json).toMatchObject({ error: "not_found" });
    }
    expect((await admin("POST", `/teams/${t}/upstreams/b@d/connect`)).status).toBe(400);
    const { SESSION_KEY: _, ...noSessionKey } = env;
    const unsigned = await admin("POST", `/teams/${t}/upstreams/github/connect`, { bindings: noSessionKey });
    expect(unsigned.status).toBe(503);
    expect(unsigned.json).toMatchObject({ message: expect.stringContaining("SESSION_KEY") });
    expect(unsigned.text).not.toContain(".cx2.");
  });
});

describe("upstream accounts (admin API)", () => {
  it("lists a team's accounts, all or one server's, with ISO times and never a token", async () => {
    const t = "uac-list";
    const ada = await userIdFor(t, ISSUER, "ada");
    const bob = await userIdFor(t, ISSUER, "bob");
    const expiresAt = Date.parse("2026-12-01T12:00:00.000Z");
    await seed(t, "github", "shared", { expiresAt, scope: "repo read:org" });
    await seed(t, "docs", bob, { refreshable: false });
    await seed(t, "docs", ada, { expiresAt });
    await seed("uac-list-other", "github", "shared");

    const all = await admin("GET", `/teams/${t}/accounts`);
    expect(all.status).toBe(200);
    const [first, second] = [ada, bob].sort();
    const expected = {
      ["github/shared"]: { server: "github", account: "shared", issuer: AS, resource: url("github"), scope: "repo read:org", expiresAt: "2026-12-01T12:00:00.000Z", connectedAt: "2026-11-20T10:00:00.000Z", refreshable: true },
      [`docs/${ada}`]: { server: "docs", account: ada, issuer: AS, resource: url("docs"), expiresAt: "2026-12-01T12:00:00.000Z", connectedAt: "2026-11-20T10:00:00.000Z", refreshable: true },
      [`docs/${bob}`]: { server: "docs", account: bob, issuer: AS, resource: url("docs"), connectedAt: "2026-11-20T10:00:00.000Z", refreshable: false },
    };
    expect(all.json).toEqual({ accounts: [expected[`docs/${first}`], expected[`docs/${second}`], expected["github/shared"]] });
    expect((await admin("GET", `/teams/${t}/upstreams/docs/accounts`)).json).toEqual({ accounts: [expected[`docs/${first}`], expected[`docs/${second}`]] });
    expect((await admin("GET", `/teams/${t}/upstreams/github/accounts`)).json).toEqual({ accounts: [expected["github/shared"]] });
    expect((await admin("GET", `/teams/${t}/upstreams/nothing/accounts`)).json).toEqual({ accounts: [] });
    expect((await admin("GET", "/teams/uac-nobody/accounts")).json).toEqual({ accounts: [] });
    for (const secret of secrets) expect(all.text).not.toContain(secret);
  });

  it("disconnects one account (404 when there is none), and refuses malformed or another team's accounts", async () => {
    const t = "uac-disconnect";
    const ada = await userIdFor(t, ISSUER, "ada");
    const stranger = await userIdFor("uac-disconnect-other", ISSUER, "ada");
    await seed(t, "github", "shared");
    await seed(t, "docs", ada);
    await seed(t, "wiki", ada);
    await seed("uac-disconnect-other", "docs", stranger);

    expect((await admin("DELETE", `/teams/${t}/upstreams/docs/accounts/${ada}`)).status).toBe(204);
    expect(await held(t)).toEqual(["github/shared", `wiki/${ada}`]);
    expect(await index(t).upstreamToken(t, "docs", ada, url("docs"))).toMatchObject({ ok: false, reason: "not_connected" });
    const again = await admin("DELETE", `/teams/${t}/upstreams/docs/accounts/${ada}`);
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ error: "not_found" });
    expect((await admin("DELETE", `/teams/${t}/upstreams/github/accounts/shared`)).status).toBe(204);
    expect(await held(t)).toEqual([`wiki/${ada}`]);

    for (const account of ["bob", "Shared", `${t}.short`]) {
      expect((await admin("DELETE", `/teams/${t}/upstreams/wiki/accounts/${account}`)).status, account).toBe(400);
    }
    const foreign = await admin("DELETE", `/teams/${t}/upstreams/docs/accounts/${stranger}`);
    expect(foreign.status).toBe(400);
    expect(foreign.json).toMatchObject({ error: "invalid_path", issues: [{ path: "account" }] });
    expect(await held("uac-disconnect-other")).toEqual([`docs/${stranger}`]);
    expect(await held(t)).toEqual([`wiki/${ada}`]);
  });

  it("deleting a user deletes their accounts at every upstream, and no one else's", async () => {
    const t = "uac-user";
    const ada = await userIdFor(t, ISSUER, "ada");
    const bob = await userIdFor(t, ISSUER, "bob");
    await store().recordUser(t, ada, { sub: "ada", issuer: ISSUER });
    await seed(t, "docs", ada);
    await seed(t, "wiki", ada);
    await seed(t, "docs", bob);
    await seed(t, "github", "shared");

    const removed = await admin("DELETE", `/teams/${t}/users/${ada}`);
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ id: ada, grantsRevoked: 0, userDeleted: true, complete: true, accountsDeleted: 2 });
    expect(await held(t)).toEqual([`docs/${bob}`, "github/shared"]);
    // A user with accounts but no index entry and no grant (it went earlier): the accounts still go.
    const gone = await admin("DELETE", `/teams/${t}/users/${bob}`);
    expect(gone.json).toEqual({ id: bob, grantsRevoked: 0, userDeleted: false, complete: true, accountsDeleted: 1 });
    expect(await held(t)).toEqual(["github/shared"]);
    expect((await admin("DELETE", `/teams/${t}/users/${bob}`)).status).toBe(404);
  });
});

describe("config changes delete the accounts they make stale", () => {
  it("a config put that drops a server, takes its auth or changes its URL deletes its accounts and registration; others stay", async () => {
    const t = "uac-config";
    const other = "uac-config-other";
    const ada = await userIdFor(t, ISSUER, "ada");
    const config = {
      mcp: {
        dropped: { url: url("dropped"), auth: shared },
        unauthed: { url: url("unauthed"), auth: perUser },
        moved: { url: url("moved"), auth: shared },
        kept: { url: url("kept"), auth: shared },
        disabled: { url: url("disabled"), auth: perUser },
        plain: { url: url("plain") },
      },
    };
    expect(await putConfig(t, config)).toEqual([]);
    await putConfig(other, config);
    for (const team of [t, other]) {
      for (const server of ["dropped", "moved", "kept"]) {
        await seed(team, server, "shared");
        await register(team, server);
      }
      for (const server of ["unauthed", "disabled"]) {
        await seed(team, server, ada);
        await register(team, server);
      }
    }

    // A refused config deletes nothing.
    expect((await admin("PUT", `/teams/${t}/config`, { body: { mcp: { kept: { url: "ftp://nope" } } } })).status).toBe(400);
    expect((await held(t)).length).toBe(5);

    const warnings = await putConfig(t, {
      mcp: {
        unauthed: { url: url("unauthed") },
        moved: { url: "https://moved.example/v2/mcp", auth: shared },
        kept: { url: url("kept"), auth: shared, description: "Now lazy." },
        disabled: { url: url("disabled"), auth: perUser, enabled: false },
        plain: { url: url("plain") },
        added: { url: url("added"), auth: shared },
      },
    });
    expect(warnings).toEqual([]);
    expect(await held(t)).toEqual([`disabled/${ada}`, "kept/shared"]);
    for (const server of ["dropped", "unauthed", "moved"]) expect(await registered(t, server), server).toBe(false);
    for (const server of ["kept", "disabled"]) expect(await registered(t, server), server).toBe(true);
    // The other team's accounts and registrations of the same names are its own.
    expect((await held(other)).length).toBe(5);
    for (const server of ["dropped", "unauthed", "moved", "kept", "disabled"]) expect(await registered(other, server)).toBe(true);

    // Single-MCP mode to a config-file "mcp" entry at the same URL keeps the account; another URL does not.
    const single = "uac-config-single";
    await putConfig(single, { url: url("single"), auth: shared });
    await seed(single, "mcp", "shared");
    await putConfig(single, { mcp: { mcp: { url: url("single"), auth: shared } } });
    expect(await held(single)).toEqual(["mcp/shared"]);
    await putConfig(single, { url: url("elsewhere"), auth: shared });
    expect(await held(single)).toEqual([]);
  });

  it("a config delete deletes every account and registration of the team, also ones no config names", async () => {
    const t = "uac-config-delete";
    const ada = await userIdFor(t, ISSUER, "ada");
    await putConfig(t, { mcp: { github: { url: url("github"), auth: shared }, docs: { url: url("docs"), auth: perUser }, plain: { url: url("plain") } } });
    await putConfig("uac-config-delete-other", { mcp: { github: { url: url("github"), auth: shared } } });
    await seed(t, "github", "shared");
    await seed(t, "docs", ada);
    await seed(t, "leftover", "shared");
    await seed("uac-config-delete-other", "github", "shared");
    for (const server of ["github", "docs", "leftover"]) await register(t, server);
    await register("uac-config-delete-other", "github");

    expect((await admin("DELETE", `/teams/${t}/config`)).status).toBe(204);
    expect(await held(t)).toEqual([]);
    for (const server of ["github", "docs", "leftover"]) expect(await registered(t, server), server).toBe(false);
    expect(await held("uac-config-delete-other")).toEqual(["github/shared"]);
    expect(await registered("uac-config-delete-other", "github")).toBe(true);
    // Deleting a config that is not there touches nothing.
    await seed(t, "github", "shared");
    expect((await admin("DELETE", `/teams/${t}/config`)).status).toBe(404);
    expect(await held(t)).toEqual(["github/shared"]);
  });
});

describe("the upstream account routes", () => {
  it("need the admin token", async () => {
    const t = "uac-auth";
    await putConfig(t, { mcp: { github: { url: url("github"), auth: shared } } });
    await seed(t, "github", "shared");
    for (const [method, path] of [
      ["POST", `/teams/${t}/upstreams/github/connect`],
      ["GET", `/teams/${t}/accounts`],
      ["GET", `/teams/${t}/upstreams/github/accounts`],
      ["DELETE", `/teams/${t}/upstreams/github/accounts/shared`],
    ] as const) {
      for (const headers of [{}, { authorization: "Bearer wrong-admin-token" }, { authorization: `Bearer FAKE-ACCESS-${t}-github-shared` }] as Array<Record<string, string>>) {
        const res = await admin(method, path, { headers });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.json).toMatchObject({ error: "unauthorized" });
        expect(res.text).not.toContain(".cx2.");
      }
    }
    expect(await held(t)).toEqual(["github/shared"]);
  });

  it("are in the OpenAPI document", async () => {
    const doc = (await admin("GET", "/openapi.json")).json as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(Object.keys(doc.paths["/admin/teams/{team}/accounts"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/upstreams/{server}/accounts"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/upstreams/{server}/accounts/{account}"] ?? {})).toEqual(["delete"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/upstreams/{server}/connect"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/upstreams/{server}/connect"]!["post"]!.responses)).toEqual(expect.arrayContaining(["200", "404", "409", "503"]));
  });

  // Last: every body the admin API gave above, searched for every fake token and client secret seeded.
  it("never answer a token or a client secret", () => {
    expect(secrets.length).toBeGreaterThan(30);
    expect(bodies.length).toBeGreaterThan(30);
    const all = bodies.join("\n");
    expect(all).not.toContain("FAKE-");
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/"(?:accessToken|refreshToken|clientSecret|access_token|refresh_token)"/);
  });
});
