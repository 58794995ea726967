// OAuth grants and access tokens for workers tests, minted through the library's real flow (a client, an
// authorization request with PKCE S256 and `resource`, `completeAuthorization`, the token endpoint): what the sign-in
// step does once a member is admitted, without the browser. For tests of what a token does once it exists.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { base64url } from "../../src/bytes.ts";
import { authorizationServer, teamResource } from "../../src/oauth/server.ts";

/** The library takes an http issuer on loopback only: these requests come to the proxy as a local one would. */
export const OAUTH_BASE = "http://localhost:8787";
export const OAUTH_REDIRECT = "http://127.0.0.1:1/callback";
/** The test bindings with OAuth for hosts on. */
export const withOAuth = { ...env, OAUTH_HOSTS: "on" };

export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/**
 * A public client, an authorization for `user` at `team`'s URL with PKCE, and the code exchanged: the access token,
 * the grant's binding and id. Each call is a new client, so one user can hold several grants.
 */
export async function mintAccessToken(team: string, user: string, email = `${user}@example.test`) {
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
    scope: "mcp",
    resource: teamResource(OAUTH_BASE, team),
  })) authorize.searchParams.set(k, v);
  const request = await api.parseAuthRequest(new Request(authorize));
  const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const { redirectTo } = await api.completeAuthorization({
    request,
    userId: user,
    metadata: { team },
    scope: ["mcp"],
    props: { team, binding, user: { id: user, email } },
  });
  const code = new URL(redirectTo).searchParams.get("code")!;
  const res = await server.fetch(
    new Request(`${OAUTH_BASE}/t/${team}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: OAUTH_REDIRECT, client_id: client.clientId, code_verifier: verifier }),
    }),
    env,
    createExecutionContext(),
  );
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; expires_in: number };
  const grants = await api.listUserGrants(user);
  const grantId = grants.items.find((g) => g.clientId === client.clientId)!.id;
  return { accessToken: tokens.access_token, expiresIn: tokens.expires_in, binding, grantId, clientId: client.clientId, api };
}
