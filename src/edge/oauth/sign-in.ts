// The proxy as a relying party of a team's OpenID Connect provider (docs/oauth.md 1.3): the team's provider and its
// client secret, where to send a member to sign in, and what the provider said about them once they are back. Built on oauth4webapi (discovery,
// PKCE, code exchange, ID token claim checks). Every URL the provider names is fetched through the upstream URL
// guard, with a time limit; plain http only where private upstreams are allowed (local runs and tests).
import * as oidc from "oauth4webapi";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import type { IdpConfig } from "../../config/idp.ts";
import type { IdClaims } from "../../auth/user.ts";
import type { UrlPolicy } from "../../lib/url-guard.ts";
import { urlPolicy } from "../../lib/url-policy.ts";
import { TeamStore, readSecret } from "../../store/store.ts";
import { bindingKv } from "../../store/binding-kv.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { GUARDED_FETCH_TIMEOUT_MS, GuardedFetchError, guardedFetchOptions } from "../../lib/guarded-fetch.ts";


/**
 * Why a sign-in (or a grant's renewal) could not go on: said on the member's page and in the log (never a secret,
 * never a token). `refused`: the provider answered that the grant or code is no good (`invalid_grant`), for good;
 * `failed`: anything else (unreachable, a bad answer), which may pass.
 */
export class SignInError extends Error {
  override readonly name = "SignInError";
  readonly kind: "refused" | "failed";
  constructor(message: string, kind: "refused" | "failed" = "failed") {
    super(message);
    this.kind = kind;
  }
}

/** What the provider said at a sign-in or a renewal: the member's claims, and its refresh token if it gave one. */
export interface SignedIn {
  claims: IdClaims;
  refreshToken?: string;
}

/** What the callback needs back from the start of a sign-in (kept encrypted by the OAuth library's transaction). */
export interface SignInState {
  verifier: string;
  nonce: string;
}

export interface Provider {
  idp: IdpConfig;
  /** The client secret's value (a team secret). */
  secret: string;
  /** The proxy's redirect URI at this provider: `<base>/t/<team>/oauth/callback`. */
  callback: string;
  policy: UrlPolicy;
}

/** The team store the sign-in steps read the provider from and record members in. */
export const teamStore = (env: Env): TeamStore => new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env) });

/**
 * The team's provider with its client secret resolved and the proxy's redirect URI there, or why a member of this
 * team cannot sign in (said on the member's page, or to the host as an OAuth error).
 */
export async function teamProvider(env: Env, store: TeamStore, team: string, base: string): Promise<Provider | { reason: string }> {
  const idp = await store.getIdp(team);
  if (!idp) return { reason: `sign-in is not set up for team ${team}: an admin configures its identity provider (npm run team -- oauth set)` };
  const secret = await readSecret(bindingKv(env.TEAMS), env.SECRETS_KEY, team, idp.client_secret);
  if (secret === undefined) {
    log({ event: "misconfigured", reason: `team ${team}: the identity provider's client secret ${idp.client_secret} cannot be read` });
    return { reason: `sign-in for team ${team} is misconfigured: its identity provider's client secret is missing` };
  }
  return { idp, secret, callback: `${base}/t/${team}/oauth/callback`, policy: urlPolicy(env) };
}

/** Providers' discovery documents, kept 10 minutes per isolate (two sign-in steps read one), at most 200. */
const discoveries = new BoundedCache<string, oidc.AuthorizationServer>({ max: 200, ttlMs: 10 * 60_000 });

async function discover(issuer: string, policy: UrlPolicy): Promise<oidc.AuthorizationServer> {
  // Read under one policy, a document is not reused under another (a deployment that allows no private address).
  const key = `${policy.allowPrivate}\n${issuer}`;
  const cached = discoveries.get(key);
  if (cached) return cached;
  const url = new URL(issuer);
  let server: oidc.AuthorizationServer;
  try {
    server = await oidc.processDiscoveryResponse(url, await oidc.discoveryRequest(url, guardedFetchOptions(policy)));
  } catch (err) {
    throw failure("reading the identity provider's discovery document", err);
  }
  if (!server.authorization_endpoint || !server.token_endpoint) {
    throw new SignInError("the identity provider's discovery document names no authorization or token endpoint");
  }
  discoveries.set(key, server);
  return server;
}

/** A readable cause: oauth4webapi's own messages name the rule that failed and carry no secret. */
function failure(step: string, err: unknown): SignInError {
  if (err instanceof SignInError) return err;
  if (err instanceof GuardedFetchError) return new SignInError(`${step}: ${err.message}`);
  if (err instanceof oidc.ResponseBodyError) return new SignInError(`${step}: the provider answered ${err.error}`, err.error === "invalid_grant" ? "refused" : "failed");
  if (err instanceof oidc.AuthorizationResponseError) return new SignInError(`${step}: the provider answered ${err.error}`);
  const timedOut = err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError");
  if (timedOut) return new SignInError(`${step}: the provider did not answer within ${GUARDED_FETCH_TIMEOUT_MS / 1000} s`);
  return new SignInError(`${step}: ${err instanceof Error ? err.message : "failed"}`);
}

/** The client authentication the provider offers: Basic unless it lists only the form-post method. */
function clientAuth(server: oidc.AuthorizationServer, secret: string): oidc.ClientAuth {
  const methods = server.token_endpoint_auth_methods_supported;
  if (methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")) return oidc.ClientSecretPost(secret);
  return oidc.ClientSecretBasic(secret);
}

/** Where to send the member's browser: the provider's authorization endpoint with PKCE, a nonce and `state`. */
export async function signInUrl(provider: Provider, state: string, saved: SignInState): Promise<string> {
  const server = await discover(provider.idp.issuer, provider.policy);
  const url = new URL(server.authorization_endpoint!);
  const scopes = new Set(["openid", ...provider.idp.scopes]);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.idp.client_id);
  url.searchParams.set("redirect_uri", provider.callback);
  url.searchParams.set("scope", [...scopes].join(" "));
  url.searchParams.set("state", state);
  url.searchParams.set("nonce", saved.nonce);
  url.searchParams.set("code_challenge", await oidc.calculatePKCECodeChallenge(saved.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  return url.href;
}

/** A fresh PKCE verifier and nonce for one sign-in. */
export const newSignIn = (): SignInState => ({ verifier: oidc.generateRandomCodeVerifier(), nonce: oidc.generateRandomNonce() });

/**
 * The member's claims from the provider's answer at the callback: the authorization response checked (`iss` when the
 * provider sends it), the code exchanged with the verifier, and the ID token's issuer, audience, expiry and nonce
 * checked. The ID token comes straight from the token endpoint, so its signature is not checked again (OpenID
 * Connect Core 3.1.3.7). `state` was checked by the OAuth library's transaction before this is called.
 */
export async function finishSignIn(provider: Provider, callbackUrl: URL, saved: SignInState): Promise<SignedIn> {
  const server = await discover(provider.idp.issuer, provider.policy);
  const client: oidc.Client = { client_id: provider.idp.client_id };
  let params: URLSearchParams;
  try {
    params = oidc.validateAuthResponse(server, client, callbackUrl, oidc.skipStateCheck);
  } catch (err) {
    throw failure("the provider's answer", err);
  }
  try {
    const response = await oidc.authorizationCodeGrantRequest(server, client, clientAuth(server, provider.secret), params, provider.callback, saved.verifier, guardedFetchOptions(provider.policy));
    const tokens = await oidc.processAuthorizationCodeResponse(server, client, response, { expectedNonce: saved.nonce, requireIdToken: true });
    const claims = oidc.getValidatedIdTokenClaims(tokens);
    if (!claims) throw new SignInError("the provider sent no ID token");
    return signedIn(claims as IdClaims, tokens.refresh_token);
  } catch (err) {
    throw failure("exchanging the sign-in code", err);
  }
}

const signedIn = (claims: IdClaims, refreshToken: string | undefined): SignedIn => ({ claims, ...(refreshToken ? { refreshToken } : {}) });

/**
 * The member's claims of this moment, through the provider's refresh token (at a refresh of the member's grant): the
 * refreshed ID token's, checked as at sign-in, or when the provider sends none, its userinfo for the same subject.
 * The provider may rotate its refresh token: the new one is in the answer. The caller checks that the claims are of the
 * member who signed in (OpenID Connect Core 12.2).
 */
export async function renewSignIn(provider: Provider, refreshToken: string): Promise<SignedIn> {
  const server = await discover(provider.idp.issuer, provider.policy);
  const client: oidc.Client = { client_id: provider.idp.client_id };
  const options = guardedFetchOptions(provider.policy);
  try {
    const response = await oidc.refreshTokenGrantRequest(server, client, clientAuth(server, provider.secret), refreshToken, options);
    const tokens = await oidc.processRefreshTokenResponse(server, client, response);
    let claims = oidc.getValidatedIdTokenClaims(tokens) as IdClaims | undefined;
    if (!claims && server.userinfo_endpoint) {
      const info = await oidc.processUserInfoResponse(server, client, oidc.skipSubjectCheck, await oidc.userInfoRequest(server, client, tokens.access_token, options));
      claims = { ...info, iss: server.issuer, sub: info.sub };
    }
    if (!claims) throw new SignInError("the provider sent neither an ID token nor a userinfo endpoint");
    return signedIn(claims, tokens.refresh_token ?? refreshToken);
  } catch (err) {
    throw failure("renewing the member's sign-in", err);
  }
}
