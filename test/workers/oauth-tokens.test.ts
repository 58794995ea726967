// OAuth access tokens at the MCP URL (issue 16, increment 1, dark): minted by the team's own authorization server
// through the library's real code flow (a client, an authorization with PKCE, the token endpoint), then used as a
// bearer token. Only with OAUTH_HOSTS=on; each team's token works at that team's URL alone; revoked, altered and
// unknown tokens are the one 401; team tokens work as before.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base64url } from "../../src/bytes.ts";
import { app } from "../../src/http/app.ts";
import { authorizationServer, teamResource } from "../../src/oauth/server.ts";
import { initializeBody, seedTeam, replayUrl } from "./helpers.ts";

/** The library takes an http issuer on loopback only: these requests come to the proxy as a local one would. */
const BASE = "http://localhost:8787";

const REDIRECT = "http://127.0.0.1:1/callback";
const withOAuth = { ...env, OAUTH_HOSTS: "on" };

async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** A public client, an authorization for `user` at `team`'s URL with PKCE, and the code exchanged: the access token. */
async function mintAccessToken(team: string, user: string) {
  const server = authorizationServer(BASE, team);
  const api = server.getOAuthApi(env);
  const client = await api.createClient({ redirectUris: [REDIRECT], tokenEndpointAuthMethod: "none", clientName: "test host" });
  const { verifier, challenge } = await pkce();
  const authorize = new URL(`${BASE}/t/${team}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    scope: "mcp",
    resource: teamResource(BASE, team),
  })) authorize.searchParams.set(k, v);
  const request = await api.parseAuthRequest(new Request(authorize));
  const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const { redirectTo } = await api.completeAuthorization({
    request,
    userId: user,
    metadata: { team },
    scope: ["mcp"],
    props: { team, binding, user: { id: user, email: `${user}@example.test` } },
  });
  const code = new URL(redirectTo).searchParams.get("code")!;
  const res = await server.fetch(
    new Request(`${BASE}/t/${team}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.clientId, code_verifier: verifier }),
    }),
    env,
    createExecutionContext(),
  );
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; expires_in: number };
  const grants = await api.listUserGrants(user);
  return { accessToken: tokens.access_token, expiresIn: tokens.expires_in, binding, grantId: grants.items[0]!.id, api };
}

/** An initialize at `team`'s URL with this bearer token, through the router with the given bindings. */
const initialize = (team: string, token: string, bindings: object = withOAuth) =>
  app.fetch(
    new Request(`${BASE}/t/${team}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify(initializeBody),
    }),
    bindings,
    createExecutionContext(),
  );

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
    expect((await initialize("oa-a", accessToken, env)).status).toBe(401);
    expect((await initialize("oa-a", accessToken)).status).toBe(200);
    await api.revokeGrant(grantId, "grace");
    expect((await initialize("oa-a", accessToken)).status).toBe(401);
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
