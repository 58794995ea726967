// What the proxy holds for an OAuth-protected upstream (docs/oauth.md 3.3): one credential per team, server
// and account ("shared", or a signed-in member's user id), sealed with SECRETS_KEY in the team's index object; the
// state of a connect between its start and the authorization server's callback; and the refresh of an access token.
// Shapes and pure steps only: the index object stores, the connect routes create, the session's client uses.
import * as z from "zod";
import * as oauth from "oauth4webapi";
import { guardedFetchOptions } from "../lib/guarded-fetch.ts";
import type { UrlPolicy } from "../lib/url-guard.ts";

/** The account of a shared upstream: one for the whole team. */
export const SHARED_ACCOUNT = "shared";

/** How the proxy authenticates at the upstream's token endpoint. */
export const ClientAuthMethod = z.enum(["none", "client_secret_basic", "client_secret_post"]);
export type ClientAuthMethod = z.output<typeof ClientAuthMethod>;

/**
 * One account's tokens at one upstream, and what refreshing them needs. Sealed as a whole (AES-GCM under SECRETS_KEY,
 * bound to team, server and account): nothing of it is ever stored, logged or answered in clear.
 */
export const UpstreamCredential = z.object({
  /** The upstream's authorization server (its issuer) and the resource (the entry's URL) the tokens were granted for. */
  issuer: z.string(),
  resource: z.string(),
  tokenEndpoint: z.string(),
  clientId: z.string(),
  /** A confidential client's secret (configured, or from registration), kept with the tokens it refreshes. */
  clientSecret: z.string().optional(),
  authMethod: ClientAuthMethod,
  accessToken: z.string(),
  refreshToken: z.string().optional(),
  /** When the access token expires (ms since the epoch); absent when the server did not say. */
  expiresAt: z.number().optional(),
  scope: z.string().optional(),
  connectedAt: z.string(),
});
export type UpstreamCredential = z.output<typeof UpstreamCredential>;

/**
 * What may be shown of a credential (admin API, listings): who and what, never a token or a secret. (The team index's
 * RPC types in src/lib/env.ts repeat this and the answer below; `TeamIndex implements TeamIndexRpc` keeps them equal.)
 */
export interface CredentialInfo {
  server: string;
  account: string;
  issuer: string;
  resource: string;
  scope?: string;
  expiresAt?: number;
  connectedAt: string;
  refreshable: boolean;
}

/** An access token for an upstream call, or why there is none. */
export type UpstreamTokenAnswer =
  | { ok: true; token: string; expiresAt?: number }
  | { ok: false; reason: "not_connected" | "refresh_failed" | "resource_changed"; detail: string };

export const credentialInfo = (server: string, account: string, c: UpstreamCredential): CredentialInfo => ({
  server,
  account,
  issuer: c.issuer,
  resource: c.resource,
  ...(c.scope === undefined ? {} : { scope: c.scope }),
  ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }),
  connectedAt: c.connectedAt,
  refreshable: c.refreshToken !== undefined,
});


/**
 * A connect between its start (the browser sent to the upstream's authorization server) and the callback: kept in
 * the team's index under the `state` sent, used once, for ten minutes. No secret in it: a confidential client's
 * secret is read again at the callback.
 */
export const ConnectTransaction = z.object({
  server: z.string(),
  account: z.string(),
  resource: z.string(),
  issuer: z.string(),
  tokenEndpoint: z.string(),
  clientId: z.string(),
  authMethod: ClientAuthMethod,
  verifier: z.string(),
  redirectUri: z.string(),
  scope: z.string().optional(),
  expiresAt: z.number(),
});
export type ConnectTransaction = z.output<typeof ConnectTransaction>;

export const CONNECT_TTL_MS = 10 * 60_000;

/** An access token this close to its expiry is refreshed before use. */
export const REFRESH_AHEAD_MS = 60_000;

/** Whether the credential's access token should be refreshed before use. */
export const needsRefresh = (c: UpstreamCredential, now = Date.now()): boolean =>
  c.refreshToken !== undefined && c.expiresAt !== undefined && c.expiresAt - now < REFRESH_AHEAD_MS;

/** Characters no form encoding changes: an id and secret made of them go into Basic auth as they are. */
const UNRESERVED = /^[A-Za-z0-9._~-]*$/;

/**
 * HTTP Basic client authentication (RFC 6749 2.3.1). The RFC form-encodes id and secret first; many servers compare
 * the raw strings instead, so credentials that encoding would not change are sent raw (which every server reads
 * alike), and only others are encoded (oauth4webapi's way, which also encodes `-`, `.` and `_`).
 */
function basicAuth(secret: string): oauth.ClientAuth {
  const encoded = oauth.ClientSecretBasic(secret);
  return (as, client, body, headers) => {
    if (!UNRESERVED.test(client.client_id) || !UNRESERVED.test(secret)) return encoded(as, client, body, headers);
    headers.set("authorization", `Basic ${btoa(`${client.client_id}:${secret}`)}`);
  };
}

/** How the proxy authenticates at a token endpoint, by the method its registration (or its config) names. */
export function clientAuthFor(method: ClientAuthMethod, secret: string | undefined): oauth.ClientAuth {
  if (method === "client_secret_basic" && secret !== undefined) return basicAuth(secret);
  if (method === "client_secret_post" && secret !== undefined) return oauth.ClientSecretPost(secret);
  return oauth.None();
}

/** Why a refresh failed, in words that carry no token: the server's error code, or the transport's failure. */
export class RefreshError extends Error {
  override readonly name = "RefreshError";
  /** The grant is gone for good (`invalid_grant`): the credential should be deleted and the account reconnected. */
  readonly revoked: boolean;
  constructor(message: string, revoked: boolean) {
    super(message);
    this.revoked = revoked;
  }
}

/**
 * The credential with fresh tokens from its refresh token (RFC 6749 6, with `resource`, RFC 8707). A server that
 * rotates refresh tokens sends a new one, which replaces the old; one that does not keeps the old one valid.
 */
export async function refreshCredential(c: UpstreamCredential, policy: UrlPolicy, now = Date.now()): Promise<UpstreamCredential> {
  if (c.refreshToken === undefined) throw new RefreshError("the upstream gave no refresh token: reconnect the account", true);
  const server: oauth.AuthorizationServer = { issuer: c.issuer, token_endpoint: c.tokenEndpoint };
  const client: oauth.Client = { client_id: c.clientId };
  let tokens: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.refreshTokenGrantRequest(server, client, clientAuthFor(c.authMethod, c.clientSecret), c.refreshToken, {
      ...guardedFetchOptions(policy),
      additionalParameters: { resource: c.resource },
    });
    tokens = await oauth.processRefreshTokenResponse(server, client, response);
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) {
      throw new RefreshError(`the upstream's authorization server refused the refresh: ${err.error}`, err.error === "invalid_grant");
    }
    throw new RefreshError(`refreshing at the upstream's authorization server failed: ${err instanceof Error ? err.message : "unknown error"}`, false);
  }
  return {
    ...c,
    accessToken: tokens.access_token,
    ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
    ...(tokens.expires_in === undefined ? { expiresAt: undefined } : { expiresAt: now + tokens.expires_in * 1000 }),
    ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
  };
}
