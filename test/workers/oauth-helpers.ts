// OAuth grants and access tokens for workers tests, minted through the library's real flow (a client, an
// authorization request with PKCE S256 and `resource`, `completeAuthorization`, the token endpoint): what the sign-in
// step does once a member is admitted, without the browser. For tests of what a token does once it exists.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { base64url } from "../../src/lib/bytes.ts";
import { app } from "../../src/edge/app.ts";
import { authorizationServer, teamResource } from "../../src/edge/oauth/server.ts";
import { initializeBody } from "./helpers.ts";

/** The library takes an http issuer on loopback only: these requests come to the proxy as a local one would. */
export const OAUTH_BASE = "http://localhost:8787";
export const OAUTH_REDIRECT = "http://127.0.0.1:1/callback";
/** The test bindings with OAuth for hosts on. */
export const withOAuth = { ...env, OAUTH_HOSTS: "on" };

/** An initialize at `team`'s URL with this bearer token, through the router with the given bindings. */
export const initializeWith = (team: string, token: string, bindings: object = withOAuth) =>
  app.fetch(
    new Request(`${OAUTH_BASE}/t/${team}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify(initializeBody),
    }),
    bindings,
    createExecutionContext(),
  );

export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/**
 * A public client and an authorization for `user` at `team`'s URL with PKCE, up to the code the host would exchange:
 * what the sign-in step does once a member is admitted. Each call is a new client, so one user can hold several grants.
 */
export async function authorizeCode(team: string, user: string, email = `${user}@example.test`, scope: string[] = ["mcp"]) {
  const server = authorizationServer(OAUTH_BASE, team);
  const api = server.getOAuthApi(env);
  const client = await api.createClient({ redirectUris: [OAUTH_REDIRECT], tokenEndpointAuthMethod: "none", clientName: "test host" });
  const { verifier, challenge } = await pkce();
  const authorize = new URL(`${OAUTH_BASE}/t/${team}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: OAUTH_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    scope: scope.join(" "),
    resource: teamResource(OAUTH_BASE, team),
  })) authorize.searchParams.set(k, v);
  const request = await api.parseAuthRequest(new Request(authorize));
  const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const { redirectTo } = await api.completeAuthorization({
    request,
    userId: user,
    metadata: { team },
    scope,
    props: { team, binding, user: { id: user, email } },
  });
  const code = new URL(redirectTo).searchParams.get("code")!;
  return { server, api, code, verifier, binding, clientId: client.clientId };
}

/** The token endpoint's form for exchanging `code`, as the host sends it. */
export const codeExchange = (clientId: string, code: string, verifier: string): Record<string, string> => ({
  grant_type: "authorization_code",
  code,
  redirect_uri: OAUTH_REDIRECT,
  client_id: clientId,
  code_verifier: verifier,
});

/**
 * `authorizeCode`, and the code exchanged at the library's token endpoint: the access and refresh tokens, the grant's
 * binding and id.
 */
export async function mintAccessToken(team: string, user: string, email = `${user}@example.test`) {
  const { server, api, code, verifier, binding, clientId } = await authorizeCode(team, user, email);
  const res = await server.fetch(
    new Request(`${OAUTH_BASE}/t/${team}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(codeExchange(clientId, code, verifier)),
    }),
    env,
    createExecutionContext(),
  );
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
  const grants = await api.listUserGrants(user);
  const grantId = grants.items.find((g) => g.clientId === clientId)!.id;
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, expiresIn: tokens.expires_in, binding, grantId, clientId, api };
}
