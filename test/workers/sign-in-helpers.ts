// A member's sign-in through a host, driven as the tests of the sign-in step drive it: the router with OAuth on, a team
// whose provider is the test IdP (harness/idp.ts; its callback must be one of test/shared/sign-in-teams.ts), a host
// registered by RFC 7591, its authorization request, the member's browser (test/shared/oauth-driver.ts), and the
// code exchanged at the token endpoint.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../src/edge/app.ts";
import { TeamStore } from "../../src/store/store.ts";
import { bindingKv } from "../../src/store/binding-kv.ts";
import { urlPolicy } from "../../src/lib/url-policy.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { signInAs, type Outcome } from "../shared/oauth-driver.ts";
import { replayUrl, seedTeam } from "./helpers.ts";
import { withOAuth } from "./oauth-helpers.ts";

export { BASE };

export const HOST_REDIRECT = "http://127.0.0.1:1/callback";
/** The router with OAuth on: what hosts and the member's browser reach. */
export const proxy = async (request: Request): Promise<Response> => app.fetch(request, withOAuth, createExecutionContext());
export const proxyFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => proxy(new Request(input, init));

export const store = () => new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env) });

/** A team with one upstream and the test IdP as its provider; `rules` says who may sign in (default: example.com). */
export async function teamWithIdp(team: string, rules: { allowed_domains?: string[]; allowed_groups?: string[] } = { allowed_domains: ["example.com"] }) {
  await seedTeam(team, { mcp: { memory: { url: replayUrl("memory"), description: "Knowledge graph memory" } } });
  await store().putSecret(team, "IDP_SECRET", env.IDP_CLIENT_SECRET);
  const put = await store().putIdp(team, { issuer: env.IDP_ISSUER, client_id: env.IDP_CLIENT_ID, client_secret: "IDP_SECRET", ...rules });
  expect(put.ok).toBe(true);
}

/** A public client registered at the team's server (RFC 7591), as a host registers itself. */
export async function register(team: string, name = "Test Host"): Promise<string> {
  const res = await proxyFetch(`${BASE}/t/${team}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [HOST_REDIRECT], token_endpoint_auth_method: "none", client_name: name, grant_types: ["authorization_code", "refresh_token"] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** An authorization request as a host builds it; `change` edits or removes parameters. */
export function authorizeUrl(team: string, clientId: string, challenge: string, change: Record<string, string | null> = {}): string {
  const url = new URL(`${BASE}/t/${team}/oauth/authorize`);
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: HOST_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "host-state-1",
    scope: "mcp offline_access",
    resource: `${BASE}/t/${team}/mcp`,
    ...change,
  };
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.href;
}

export const member = (account: string, extra: Partial<Parameters<typeof signInAs>[1]> = {}) => ({ proxyOrigin: BASE, proxy, account, ...extra });

export function redirected(outcome: Outcome): URL {
  if (outcome.kind !== "redirect") throw new Error(`expected a redirect to the host, got HTTP ${outcome.status} at ${outcome.url.pathname}: ${outcome.text}`);
  return outcome.url;
}

export const form = (fields: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields),
});

export async function exchange(team: string, clientId: string, code: string, verifier: string) {
  const res = await proxyFetch(`${BASE}/t/${team}/oauth/token`, form({ grant_type: "authorization_code", code, redirect_uri: HOST_REDIRECT, client_id: clientId, code_verifier: verifier }));
  return { status: res.status, body: (await res.json()) as { access_token?: string; refresh_token?: string; scope?: string; error?: string } };
}

export const initialize = (team: string, token: string) =>
  proxyFetch(`${BASE}/t/${team}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
  });
