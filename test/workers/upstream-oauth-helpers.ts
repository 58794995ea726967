// What the tests of OAuth-protected upstreams share (upstream-connect.test.ts, upstream-oauth.test.ts): a team whose
// upstream is the OAuth fixture (harness/oauth-upstream.ts), the test IdP as its provider, connect links, the fetch
// "browser", the fixture's control port, and ways to read what the proxy stored (the sealed credential opened with
// the test's SECRETS_KEY, every KV value) to check no token is anywhere else.
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, expect, vi } from "vitest";
import { app } from "../../src/edge/app.ts";
import { mintConnectHandle } from "../../src/auth/connect-link.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { openSecret, type SealedSecret } from "../../src/lib/secrets.ts";
import { urlPolicy } from "../../src/lib/url-policy.ts";
import { TeamStore } from "../../src/store/store.ts";
import { bindingKv } from "../../src/store/binding-kv.ts";
import { UpstreamCredential } from "../../src/upstream/oauth-credential.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { signInAs, type Outcome } from "../shared/oauth-driver.ts";
import { seedTeam } from "./helpers.ts";

export const SERVER = "up";
export const HOST_REDIRECT = "http://127.0.0.1:1/callback";

export const proxyWith = (bindings: Record<string, string>) => async (request: Request) => app.fetch(request, { ...env, ...bindings }, createExecutionContext());
export const proxy = proxyWith({});
/** The proxy, but a request to `path` arrives without cookies: another browser finishing a flow. */
export const withoutCookiesAt = (path: string) => async (request: Request) => {
  if (new URL(request.url).pathname !== path) return proxy(request);
  const headers = new Headers(request.headers);
  headers.delete("cookie");
  return proxy(new Request(request, { headers }));
};
export const store = () => new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env) });
export const index = (team: string) => env.TEAM_INDEX.getByName(team);

export type Auth = { mode: "shared" | "per_user"; client?: { id: string; secret?: string }; scopes?: string[] };
export async function oauthTeam(team: string, auth: Auth, extra: Record<string, unknown> = {}) {
  await seedTeam(team, { mcp: { [SERVER]: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", ...auth } }, ...extra } });
}

/** The test IdP as the team's provider: alice by her domain, bob by his group. */
export async function withIdp(team: string) {
  await store().putSecret(team, "IDP_SECRET", env.IDP_CLIENT_SECRET);
  const put = await store().putIdp(team, { issuer: env.IDP_ISSUER, client_id: env.IDP_CLIENT_ID, client_secret: "IDP_SECRET", allowed_domains: ["example.com"], allowed_groups: ["mcp-users"] });
  expect(put.ok).toBe(true);
}

export const link = async (team: string, account: string, server = SERVER, now?: number) =>
  `${BASE}/t/${team}/connect/${server}?h=${(await mintConnectHandle(env.SESSION_KEY!, team, server, account, now)).handle}`;

export const browser = (account: string, extra: Partial<Parameters<typeof signInAs>[1]> = {}) => ({ proxyOrigin: BASE, proxy, account, ...extra });

export function page(outcome: Outcome): { status: number; text: string; path: string } {
  if (outcome.kind !== "page") throw new Error(`expected a page, got a redirect to ${outcome.url.href}`);
  return { status: outcome.status, text: outcome.text, path: outcome.url.pathname };
}

export const control = async <T,>(path: string): Promise<T> => (await fetch(`${env.OAUTH_UPSTREAM_CONTROL}${path}`)).json() as Promise<T>;
export type Counts = { registrations: number; tokenByCode: number; logins: number };
export type TokenRequest = { grantType: string; clientId?: string; resource?: string; scope?: string; error?: string };
export const codeGrants = async (clientId: string) => (await control<TokenRequest[]>("/token-requests")).filter((r) => r.grantType === "authorization_code" && r.clientId === clientId && !r.error);

/** The stored registration (dynamic registration's client id). */
export const registration = async (team: string) => JSON.parse((await env.TEAMS.get(kvKeys.upstreamClient(team, SERVER)))!) as { clientId: string; issuer: string; authMethod: string; clientSecret?: unknown };

/** The credential as the index holds it, opened with the test's SECRETS_KEY: the real tokens, to look for elsewhere. */
export async function sealedCredential(team: string, account: string): Promise<UpstreamCredential> {
  const sealed = await runInDurableObject(index(team), async (_o, state) => state.storage.get<SealedSecret>(`cred:${SERVER}:${account}`));
  expect(sealed).toBeDefined();
  return UpstreamCredential.parse(JSON.parse((await openSecret(env.SECRETS_KEY!, team, `oauth:${SERVER}:${account}`, sealed!))!));
}

/** Every value in TEAMS, to check that no token or secret is there in clear. */
export async function allKvText(): Promise<string> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown> = await env.TEAMS.list(cursor ? { cursor } : {});
    for (const key of page.keys) out.push(`${key.name}=${await env.TEAMS.get(key.name)} ${JSON.stringify(key.metadata ?? null)}`);
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return out.join("\n");
}

/**
 * Collects every console line of each test of the calling file (the proxy logs there), silencing them; the array is
 * emptied before each test.
 */
export function captureConsole(): string[] {
  const lines: string[] = [];
  beforeEach(() => {
    lines.length = 0;
    for (const level of ["log", "error", "warn", "info"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
  });
  afterEach(() => vi.restoreAllMocks());
  return lines;
}
