// OAuth access tokens at the MCP URL (issue 16, increment 1, dark): minted by the team's own authorization server
// through the library's real code flow (a client, an authorization with PKCE, the token endpoint), then used as a
// bearer token. Only with OAUTH_HOSTS=on; each team's token works at that team's URL alone; revoked, altered and
// unknown tokens are the one 401; team tokens work as before.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base64url } from "../../src/lib/bytes.ts";
import { app } from "../../src/edge/app.ts";
import { authorizationServer, teamResource } from "../../src/edge/oauth/server.ts";
import { initializeBody, seedTeam, replayUrl } from "./helpers.ts";
import { OAUTH_BASE, OAUTH_REDIRECT, initializeWith, mintAccessToken, pkce, withOAuth } from "./oauth-helpers.ts";

const BASE = OAUTH_BASE;
const REDIRECT = OAUTH_REDIRECT;
/** The bindings with OAuth for hosts turned off (it is on by default). */
const withoutOAuth = { ...env, OAUTH_HOSTS: "off" };

const initialize = initializeWith;

describe("OAuth access tokens at the MCP URL (OAUTH_HOSTS=on)", () => {
  it("opens a session with a token of the team's own authorization server, short-lived as configured", async () => {
    await seedTeam("oa-one", { mcp: { memory: { url: replayUrl("memory") } } });
    const { accessToken, expiresIn } = await mintAccessToken("oa-one", "ada");
    expect(expiresIn).toBe(900);
    const res = await initialize("oa-one", accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeTruthy();
  });

  it("refuses a token at another team's URL, an altered or revoked one, and any of them with OAUTH_HOSTS off", async () => {
    await seedTeam("oa-a", { mcp: { memory: { url: replayUrl("memory") } } });
    await seedTeam("oa-b", { mcp: { memory: { url: replayUrl("memory") } } });
    const { accessToken, grantId, api } = await mintAccessToken("oa-a", "grace");
    expect((await initialize("oa-b", accessToken)).status).toBe(401);
    const altered = accessToken.slice(0, -2) + (accessToken.endsWith("aa") ? "bb" : "aa");
    expect((await initialize("oa-a", altered)).status).toBe(401);
    expect((await initialize("oa-a", accessToken, withoutOAuth)).status).toBe(401);
    expect((await initialize("oa-a", accessToken)).status).toBe(200);
    await api.revokeGrant(grantId, "grace");
    expect((await initialize("oa-a", accessToken)).status).toBe(401);
  });

  it("refuses an expired access token (its record's expiry rewritten into the past, as time would)", async () => {
    await seedTeam("oa-expired", { mcp: { memory: { url: replayUrl("memory") } } });
    const { accessToken } = await mintAccessToken("oa-expired", "late-user");
    expect((await initialize("oa-expired", accessToken)).status).toBe(200);
    const [user, grant] = accessToken.split(":");
    const { keys } = await env.OAUTH_KV!.list({ prefix: `token:${user}:${grant}:` });
    expect(keys).toHaveLength(1);
    const record = (await env.OAUTH_KV!.get(keys[0]!.name, "json")) as { expiresAt: number };
    await env.OAUTH_KV!.put(keys[0]!.name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    const res = await initialize("oa-expired", accessToken);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("keeps an accepted token for TOKEN_CACHE_SECONDS at most: a revoked grant stops within that bound", async () => {
    await seedTeam("oa-cache", { mcp: { memory: { url: replayUrl("memory") } } });
    const { accessToken, grantId, api } = await mintAccessToken("oa-cache", "cached-user");
    const cached = { ...withOAuth, TOKEN_CACHE_SECONDS: "30" };
    expect((await initialize("oa-cache", accessToken, cached)).status).toBe(200);
    await api.revokeGrant(grantId, "cached-user");
    // This isolate accepted it moments ago: still in, as a team token would be.
    expect((await initialize("oa-cache", accessToken, cached)).status).toBe(200);
    // Without the cache (the tests' setting), the revocation is seen at once.
    expect((await initialize("oa-cache", accessToken)).status).toBe(401);
  });

  it("answers the one 401, not a 500, when the proxy's base URL is not one the library takes (no PUBLIC_URL, plain http)", async () => {
    await seedTeam("oa-http", { mcp: { memory: { url: replayUrl("memory") } } });
    const res = await app.fetch(
      new Request("http://proxy.test/t/oa-http/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: "Bearer some-oauth-looking-token" },
        body: JSON.stringify(initializeBody),
      }),
      withOAuth,
      createExecutionContext(),
    );
    expect(res.status).toBe(401);
  });

  it("keeps team tokens working beside OAuth, and an unknown bearer is the one 401", async () => {
    const teamToken = await seedTeam("oa-static", { mcp: { memory: { url: replayUrl("memory") } } });
    expect((await initialize("oa-static", teamToken)).status).toBe(200);
    const res = await initialize("oa-static", "not-a-token-at-all");
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "unauthorized", message: "A valid bearer token for this team is required." });
  });
});

/** A GET or form POST to the router with OAuth on. */
const call = (path: string, init: RequestInit = {}, bindings: object = withOAuth) =>
  app.fetch(new Request(`${BASE}${path}`, init), bindings, createExecutionContext());
const form = (fields: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields),
});

describe("OAuth metadata and the 401's challenge (OAUTH_HOSTS=on)", () => {
  it("names the resource metadata in every 401 for a valid team name, with invalid_token when a token was sent", async () => {
    await seedTeam("oa-meta", { mcp: { memory: { url: replayUrl("memory") } } });
    const without = await call("/t/oa-meta/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(without.status).toBe(401);
    expect(without.headers.get("www-authenticate")).toBe(
      `Bearer realm="dynmcp-edge", resource_metadata="${BASE}/.well-known/oauth-protected-resource/t/oa-meta/mcp", scope="mcp"`,
    );
    const wrong = await initialize("oa-meta", "nope");
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // A team with no config answers alike (nothing to probe); with OAuth off the challenge is the plain one.
    expect((await initialize("oa-nobody", "nope")).headers.get("www-authenticate")).toContain("/t/oa-nobody/mcp");
    expect((await initialize("oa-meta", "nope", withoutOAuth)).headers.get("www-authenticate")).toBe('Bearer realm="dynmcp-edge"');
  });

  it("serves RFC 9728 and RFC 8414 documents that point at each other, and nothing with OAuth off", async () => {
    const prm = (await (await call("/.well-known/oauth-protected-resource/t/oa-docs/mcp")).json()) as Record<string, unknown>;
    expect(prm).toMatchObject({
      resource: `${BASE}/t/oa-docs/mcp`,
      authorization_servers: [`${BASE}/t/oa-docs`],
      scopes_supported: ["mcp"],
      bearer_methods_supported: ["header"],
    });
    const as = (await (await call("/.well-known/oauth-authorization-server/t/oa-docs")).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: `${BASE}/t/oa-docs`,
      authorization_endpoint: `${BASE}/t/oa-docs/oauth/authorize`,
      token_endpoint: `${BASE}/t/oa-docs/oauth/token`,
      registration_endpoint: `${BASE}/t/oa-docs/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
    });
    expect(as["grant_types_supported"]).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect((await call("/.well-known/oauth-protected-resource/t/oa-docs/mcp", {}, withoutOAuth)).status).toBe(404);
    expect((await call("/.well-known/oauth-authorization-server/t/oa-docs", {}, withoutOAuth)).status).toBe(404);
  });

  it("registers a client (RFC 7591), refreshes with a rotated token, and revokes (RFC 7009) so the token stops working", async () => {
    await seedTeam("oa-flow", { mcp: { memory: { url: replayUrl("memory") } } });
    const registered = await call("/t/oa-flow/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "registered host", grant_types: ["authorization_code", "refresh_token"] }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string };
    // The authorization itself (sign-in and consent) is the next increment's: the grant is completed here.
    const api = authorizationServer(BASE, "oa-flow").getOAuthApi(env);
    const { verifier, challenge } = await pkce();
    const authorize = new URL(`${BASE}/t/oa-flow/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", scope: "mcp offline_access", resource: teamResource(BASE, "oa-flow") })) authorize.searchParams.set(k, v);
    const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
    const { redirectTo } = await api.completeAuthorization({
      request: await api.parseAuthRequest(new Request(authorize)),
      userId: "lin",
      metadata: {},
      scope: ["mcp", "offline_access"],
      props: { team: "oa-flow", binding, user: { id: "lin" } },
    });
    const code = new URL(redirectTo).searchParams.get("code")!;
    // PKCE is held to: the wrong verifier is refused, the right one gets tokens.
    expect((await call("/t/oa-flow/oauth/token", form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: "x".repeat(43) }))).status).toBe(400);
    const issued = (await (await call("/t/oa-flow/oauth/token", form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier }))).json()) as { access_token: string; refresh_token: string };
    expect(issued.refresh_token).toBeTruthy();
    const refreshed = (await (await call("/t/oa-flow/oauth/token", form({ grant_type: "refresh_token", refresh_token: issued.refresh_token, client_id: client.client_id }))).json()) as { access_token: string; refresh_token: string };
    expect(refreshed.refresh_token).not.toBe(issued.refresh_token);
    expect((await initialize("oa-flow", refreshed.access_token)).status).toBe(200);
    const revoked = await call("/t/oa-flow/oauth/token", form({ token: refreshed.refresh_token, token_type_hint: "refresh_token", client_id: client.client_id }));
    expect(revoked.status).toBe(200);
    expect((await initialize("oa-flow", refreshed.access_token)).status).toBe(401);
  });
});
