// Signed-in users and their grants through the admin API (issue 16, docs/oauth.md 3.4): the team's user list, a
// user's grants, revoking one grant or all of a user's, with the tokens checked at the team's MCP URL afterwards.
// Grants are minted through the library's real flow (a client, an authorization with PKCE, `completeAuthorization`
// as the sign-in step calls it, the token endpoint); the user index is written as the sign-in step writes it. The
// admin calls run with OAUTH_HOSTS off (an admin may clean up after turning sign-in off); the MCP calls with it on.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base64url } from "../../src/lib/bytes.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { app } from "../../src/edge/app.ts";
import { authorizationServer, teamResource } from "../../src/edge/oauth/server.ts";
import { bindingKv } from "../../src/store/binding-kv.ts";
import { TeamStore } from "../../src/store/store.ts";
import { urlPolicy } from "../../src/lib/url-policy.ts";
import { ADMIN, adminFetch, initializeBody, replayUrl, seedTeam } from "./helpers.ts";

/** The library takes an http issuer on loopback only: these requests come to the proxy as a local one would. */
const BASE = "http://localhost:8787";
const ISSUER = "https://idp.example";
const REDIRECT = "http://127.0.0.1:1/callback";
const withOAuth = { ...env, OAUTH_HOSTS: "on" };
/** The team store as the Worker builds it (the user index is TEAMS'). */
const store = () => new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env) });

/** Every answer body the admin API gave in this file: none may hold anything token-like. */
const bodies: string[] = [];
/** Every secret the flows minted: tokens, and the grants' bindings (kept encrypted in their props). */
const secrets: string[] = [];

async function admin(method: string, path: string, bindings: object = env, headers: Record<string, string> = ADMIN) {
  const res = await app.fetch(new Request(`${BASE}/admin${path}`, { method, headers }), bindings, createExecutionContext());
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, text, json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

const post = (path: string, init: RequestInit, bindings: object = withOAuth) =>
  app.fetch(new Request(`${BASE}${path}`, init), bindings, createExecutionContext());

/** An initialize at the team's MCP URL with this bearer token: 200 while the grant stands, 401 after. */
async function mcpStatus(team: string, token: string): Promise<number> {
  const res = await post(`/t/${team}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify(initializeBody),
  });
  await res.body?.cancel();
  return res.status;
}

async function refreshStatus(team: string, clientId: string, refreshToken: string): Promise<number> {
  const res = await post(`/t/${team}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
  });
  await res.body?.cancel();
  return res.status;
}

/**
 * A member's sign-in from one host, as src/edge/oauth/authorize.ts finishes it: the user index entry, then the grant with
 * its code, exchanged at the team's token endpoint. Returns the user id, the host's client id and its tokens.
 */
async function signIn(team: string, sub: string, host: string) {
  const userId = await userIdFor(team, ISSUER, sub);
  const email = `${sub}@example.com`;
  await store().recordUser(team, userId, { sub, issuer: ISSUER, email });
  const api = authorizationServer(BASE, team).getOAuthApi(env);
  const client = await api.createClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: "none", clientName: host });
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  const authorize = new URL(`${BASE}/t/${team}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "mcp offline_access",
    resource: teamResource(BASE, team),
  })) authorize.searchParams.set(k, v);
  const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const { redirectTo } = await api.completeAuthorization({
    request: await api.parseAuthRequest(new Request(authorize)),
    userId,
    metadata: { team, email },
    scope: ["mcp", "offline_access"],
    props: { team, binding, user: { id: userId, email } },
  });
  const code = new URL(redirectTo).searchParams.get("code")!;
  const res = await post(`/t/${team}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.clientId, code_verifier: verifier }),
  });
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; refresh_token: string };
  expect(tokens.refresh_token).toBeTruthy();
  // The library's tokens are `<user>:<grant>:<secret part>`: the secret part is what must never be shown.
  secrets.push(tokens.access_token, tokens.refresh_token, tokens.access_token.split(":")[2]!, tokens.refresh_token.split(":")[2]!, binding);
  return { userId, clientId: client.clientId, access: tokens.access_token, refresh: tokens.refresh_token };
}

const team = async (name: string) => {
  await seedTeam(name, { mcp: { memory: { url: replayUrl("memory") } } });
  return name;
};

interface GrantView {
  id: string;
  clientId: string;
  clientName?: string;
  scope: string[];
  createdAt: string;
  expiresAt?: string;
}

async function grantsOf(teamName: string, userId: string): Promise<GrantView[]> {
  const got = await admin("GET", `/teams/${teamName}/users/${userId}`);
  expect(got.status).toBe(200);
  return got.json!["grants"] as GrantView[];
}

describe("signed-in users and their grants (admin API)", () => {
  it("lists the team's users and a user's grants with client names and times, never another team's", async () => {
    const t = await team("oad-list");
    const other = await team("oad-list-other");
    const ada1 = await signIn(t, "ada", "Claude Desktop");
    await signIn(t, "ada", "Cursor");
    const bob = await signIn(t, "bob", "Inspector");
    const stranger = await signIn(other, "ada", "Claude Desktop");
    expect(stranger.userId).not.toBe(ada1.userId);

    const list = await admin("GET", `/teams/${t}/users`);
    expect(list.status).toBe(200);
    const users = list.json!["users"] as Array<Record<string, string>>;
    expect(users.map((u) => u["id"]).sort()).toEqual([ada1.userId, bob.userId].sort());
    const ada = users.find((u) => u["id"] === ada1.userId)!;
    expect(ada).toEqual({ id: ada1.userId, sub: "ada", issuer: ISSUER, email: "ada@example.com", firstSeen: expect.any(String), lastSeen: expect.any(String) });
    expect(Date.parse(ada["lastSeen"]!)).toBeGreaterThan(Date.now() - 60_000);

    const detail = await admin("GET", `/teams/${t}/users/${ada1.userId}`);
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({ id: ada1.userId, user: { sub: "ada", issuer: ISSUER, email: "ada@example.com" }, complete: true });
    const grants = detail.json!["grants"] as GrantView[];
    expect(grants.map((g) => g.clientName).sort()).toEqual(["Claude Desktop", "Cursor"]);
    for (const g of grants) {
      expect(Object.keys(g).sort()).toEqual(["clientId", "clientName", "createdAt", "expiresAt", "id", "scope"]);
      expect(g.id).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(g.scope).toEqual(["mcp", "offline_access"]);
      // The grant lives as long as its refresh token: 30 days from the code's exchange (just after its creation).
      const lifetime = Date.parse(g.expiresAt!) - Date.parse(g.createdAt);
      expect(lifetime).toBeGreaterThanOrEqual(30 * 24 * 3600 * 1000);
      expect(lifetime).toBeLessThan(30 * 24 * 3600 * 1000 + 60_000);
    }
    expect(grants.find((g) => g.clientName === "Claude Desktop")!.clientId).toBe(ada1.clientId);
    // The other team's Ada is not this team's: its list shows only her.
    const others = (await admin("GET", `/teams/${other}/users`)).json!["users"] as Array<{ id: string }>;
    expect(others.map((u) => u.id)).toEqual([stranger.userId]);
    expect((await admin("GET", "/teams/oad-nobody/users")).json).toEqual({ users: [] });
  });

  it("revokes one grant: its access and refresh tokens stop, the user's other grant keeps working", async () => {
    const t = await team("oad-one");
    const first = await signIn(t, "grace", "Claude Desktop");
    const second = await signIn(t, "grace", "Cursor");
    expect(await mcpStatus(t, first.access)).toBe(200);
    expect(await mcpStatus(t, second.access)).toBe(200);
    const grants = await grantsOf(t, first.userId);
    const target = grants.find((g) => g.clientId === first.clientId)!;

    expect((await admin("DELETE", `/teams/${t}/users/${first.userId}/grants/${target.id}`)).status).toBe(204);
    expect(await mcpStatus(t, first.access)).toBe(401);
    expect(await refreshStatus(t, first.clientId, first.refresh)).toBe(400);
    expect(await mcpStatus(t, second.access)).toBe(200);
    expect((await grantsOf(t, first.userId)).map((g) => g.clientId)).toEqual([second.clientId]);
    // Gone now: a second revocation finds nothing.
    const again = await admin("DELETE", `/teams/${t}/users/${first.userId}/grants/${target.id}`);
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ error: "not_found" });
  });

  it("revokes a user: every token stops, the index entry goes, another user of the team is untouched", async () => {
    const t = await team("oad-user");
    const a = await signIn(t, "lin", "Claude Desktop");
    const b = await signIn(t, "lin", "Cursor");
    const keep = await signIn(t, "max", "Cursor");
    const removed = await admin("DELETE", `/teams/${t}/users/${a.userId}`);
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ id: a.userId, grantsRevoked: 2, userDeleted: true, complete: true });
    for (const s of [a, b]) {
      expect(await mcpStatus(t, s.access)).toBe(401);
      expect(await refreshStatus(t, s.clientId, s.refresh)).toBe(400);
    }
    expect(await store().getUser(t, a.userId)).toBeUndefined();
    expect(((await admin("GET", `/teams/${t}/users`)).json!["users"] as Array<{ id: string }>).map((u) => u.id)).toEqual([keep.userId]);
    expect((await admin("GET", `/teams/${t}/users/${a.userId}`)).status).toBe(404);
    expect((await admin("DELETE", `/teams/${t}/users/${a.userId}`)).status).toBe(404);
    expect(await mcpStatus(t, keep.access)).toBe(200);
  });

  it("still shows and revokes the grants of a user whose index entry is gone, and an entry without grants", async () => {
    const t = await team("oad-partial");
    const s = await signIn(t, "kim", "Cursor");
    expect(await store().deleteUser(t, s.userId)).toBe(true);
    const detail = await admin("GET", `/teams/${t}/users/${s.userId}`);
    expect(detail.status).toBe(200);
    expect(detail.json!["user"]).toBeUndefined();
    expect((detail.json!["grants"] as GrantView[]).length).toBe(1);
    expect((await admin("DELETE", `/teams/${t}/users/${s.userId}`)).json).toEqual({ id: s.userId, grantsRevoked: 1, userDeleted: false, complete: true });
    expect(await mcpStatus(t, s.access)).toBe(401);
    // An index entry whose grants expired (or were revoked): shown with none, deleted with none to revoke.
    const lone = await userIdFor(t, ISSUER, "lone");
    await store().recordUser(t, lone, { sub: "lone", issuer: ISSUER });
    expect((await admin("GET", `/teams/${t}/users/${lone}`)).json).toMatchObject({ id: lone, user: { sub: "lone" }, grants: [] });
    expect((await admin("DELETE", `/teams/${t}/users/${lone}`)).json).toEqual({ id: lone, grantsRevoked: 0, userDeleted: true, complete: true });
  });

  it("refuses another team's user, another user's grant and malformed ids, and touches nothing of theirs", async () => {
    const a = await team("oad-guard-a");
    const b = await team("oad-guard-b");
    const theirs = await signIn(b, "eve", "Cursor");
    const ours = await signIn(a, "ann", "Cursor");
    const [theirGrant] = await grantsOf(b, theirs.userId);
    const [ourGrant] = await grantsOf(a, ours.userId);
    // Another team's user id in this team's path: a 400 naming the user, whatever the route.
    for (const [method, path] of [
      ["GET", `/teams/${a}/users/${theirs.userId}`],
      ["DELETE", `/teams/${a}/users/${theirs.userId}`],
      ["DELETE", `/teams/${a}/users/${theirs.userId}/grants/${theirGrant!.id}`],
    ] as const) {
      const res = await admin(method, path);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: "invalid_path", issues: [{ path: "user", message: expect.stringContaining("not one of this team's") }] });
    }
    // Another user's grant of the same team: not this user's, so 404, and it stands.
    const user2 = await signIn(a, "bea", "Claude Desktop");
    expect((await admin("DELETE", `/teams/${a}/users/${user2.userId}/grants/${ourGrant!.id}`)).status).toBe(404);
    expect(await mcpStatus(a, ours.access)).toBe(200);
    expect(await mcpStatus(b, theirs.access)).toBe(200);
    expect((await grantsOf(b, theirs.userId)).length).toBe(1);
    // Malformed ids are 400s; well-formed unknown ones 404s.
    expect((await admin("GET", `/teams/${a}/users/ann`)).status).toBe(400);
    expect((await admin("GET", `/teams/${a}/users/${a}.short`)).status).toBe(400);
    expect((await admin("DELETE", `/teams/${a}/users/${ours.userId}/grants/not:a:grant`)).status).toBe(400);
    expect((await admin("DELETE", `/teams/${a}/users/${ours.userId}/grants/${"A".repeat(17)}`)).status).toBe(400);
    const unknown = await userIdFor(a, ISSUER, "nobody");
    expect((await admin("GET", `/teams/${a}/users/${unknown}`)).status).toBe(404);
    expect((await admin("DELETE", `/teams/${a}/users/${unknown}`)).status).toBe(404);
    expect((await admin("DELETE", `/teams/${a}/users/${ours.userId}/grants/${"A".repeat(16)}`)).status).toBe(404);
    expect(await mcpStatus(a, ours.access)).toBe(200);
  });

  it("needs the admin token on every route", async () => {
    const t = await team("oad-auth");
    const s = await signIn(t, "zoe", "Cursor");
    const [grant] = await grantsOf(t, s.userId);
    const routes = [
      ["GET", `/teams/${t}/users`],
      ["GET", `/teams/${t}/users/${s.userId}`],
      ["DELETE", `/teams/${t}/users/${s.userId}`],
      ["DELETE", `/teams/${t}/users/${s.userId}/grants/${grant!.id}`],
    ] as const;
    for (const [method, path] of routes) {
      for (const headers of [{}, { authorization: "Bearer wrong-admin-token" }, { authorization: `Bearer ${s.access}` }] as Array<Record<string, string>>) {
        const res = await admin(method, path, env, headers);
        expect(res.status).toBe(401);
        expect(res.json).toMatchObject({ error: "unauthorized" });
      }
    }
    expect(await mcpStatus(t, s.access)).toBe(200);
    expect((await grantsOf(t, s.userId)).length).toBe(1);
  });

  it("answers 503 with the reason when grants cannot be reached: no OAUTH_KV, or a plain-http base off loopback", async () => {
    const t = await team("oad-503");
    const s = await signIn(t, "ivy", "Cursor");
    const { OAUTH_KV: _, ...noOAuthKv } = env;
    for (const [method, path] of [
      ["GET", `/teams/${t}/users/${s.userId}`],
      ["DELETE", `/teams/${t}/users/${s.userId}`],
      ["DELETE", `/teams/${t}/users/${s.userId}/grants/${"A".repeat(16)}`],
    ] as const) {
      const res = await admin(method, path, noOAuthKv);
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ error: "oauth_unavailable", message: expect.stringContaining("no OAUTH_KV binding") });
    }
    // The user list is the team index's: it needs no OAUTH_KV.
    expect((await admin("GET", `/teams/${t}/users`, noOAuthKv)).status).toBe(200);
    // http://proxy.test without PUBLIC_URL: the library takes no such issuer, and the answer says what to set.
    const plain = await adminFetch("GET", `/teams/${t}/users/${s.userId}`);
    expect(plain.status).toBe(503);
    expect(await plain.json()).toMatchObject({ error: "oauth_unavailable", message: expect.stringContaining("PUBLIC_URL") });
    expect(await mcpStatus(t, s.access)).toBe(200);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await (await adminFetch("GET", "/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/admin/teams/{team}/users"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/users/{user}"] ?? {}).sort()).toEqual(["delete", "get"]);
    expect(Object.keys(doc.paths["/admin/teams/{team}/users/{user}/grants/{grant}"] ?? {})).toEqual(["delete"]);
  });

  // Last: every body the admin API gave above, searched for every token and binding the flows minted.
  it("never shows a token, a refresh token or a grant's binding in any answer", () => {
    expect(secrets.length).toBeGreaterThan(50);
    expect(bodies.length).toBeGreaterThan(40);
    const all = bodies.join("\n");
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/"(?:access_token|refresh_token|token|props|binding|metadata)"/);
  });
});
