// The proxy as a relying party of a team's OpenID Connect provider (issue 16, docs/oauth.md 1.3): where to send a
// member to sign in, and what the provider said about them once they are back. Built on oauth4webapi (discovery,
// PKCE, code exchange, ID token claim checks). Every URL the provider names is fetched through the upstream URL
// guard, with a time limit; plain http only where private upstreams are allowed (local runs and tests).
import * as oidc from "oauth4webapi";
import type { IdpConfig } from "../config/idp.ts";
import type { IdClaims } from "../auth/user.ts";
import type { UrlPolicy } from "../security/url-guard.ts";
import { GUARDED_FETCH_TIMEOUT_MS, GuardedFetchError, guardedFetchOptions } from "../security/guarded-fetch.ts";

/** A provider's discovery document is kept this long per isolate (two sign-in steps read it). */
const DISCOVERY_TTL_MS = 10 * 60_000;
const MAX_DISCOVERIES = 200;

/** Why a sign-in could not go on: said on the member's page and in the log (never a secret, never a token). */
export class SignInError extends Error {
  override readonly name = "SignInError";
}

/** What the callback needs back from the start of a sign-in (kept encrypted by the OAuth library's transaction). */
export interface SignInState {
  verifier: string;
  nonce: string;
}

interface Provider {
  idp: IdpConfig;
  /** The client secret's value (a team secret). */
  secret: string;
  /** The proxy's redirect URI at this provider: `<base>/t/<team>/oauth/callback`. */
  callback: string;
  policy: UrlPolicy;
}

const discoveries = new Map<string, { server: oidc.AuthorizationServer; until: number }>();

async function discover(issuer: string, policy: UrlPolicy): Promise<oidc.AuthorizationServer> {
  // Read under one policy, a document is not reused under another (a deployment that allows no private address).
  const key = `${policy.allowPrivate}\n${issuer}`;
  const cached = discoveries.get(key);
  if (cached && cached.until > Date.now()) return cached.server;
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
  if (discoveries.size >= MAX_DISCOVERIES) discoveries.clear();
  discoveries.set(key, { server, until: Date.now() + DISCOVERY_TTL_MS });
  return server;
}

/** A readable cause: oauth4webapi's own messages name the rule that failed and carry no secret. */
function failure(step: string, err: unknown): SignInError {
  if (err instanceof SignInError) return err;
  if (err instanceof GuardedFetchError) return new SignInError(`${step}: ${err.message}`);
  if (err instanceof oidc.ResponseBodyError) return new SignInError(`${step}: the provider answered ${err.error}`);
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
export async function finishSignIn(provider: Provider, callbackUrl: URL, saved: SignInState): Promise<IdClaims> {
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
    return claims as IdClaims;
  } catch (err) {
    throw failure("exchanging the sign-in code", err);
  }
}
