// What a connect learns and sets up at an OAuth upstream's authorization server before the member's browser goes there
// (src/edge/oauth/upstream-connect.ts; docs/oauth.md 3.3): the server discovered from the upstream's 401 (RFC 9728, then
// RFC 8414 / OIDC), checked (the resource it describes, PKCE S256, endpoints the URL guard allows, an https token
// endpoint); the proxy's client there (the entry's configured one, the proxy's client metadata document, or a
// dynamic registration kept in KV, its secret sealed) and that client's secret again at the callback; and the error
// each step reports (its page's status and sentence). Every fetch is the caller's guarded one.
import {
  assertSecureTokenEndpoint,
  checkResourceAllowed,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  registerClient,
  type AuthorizationServerMetadata,
  type OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/client";
import { PRODUCT, type Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import type { UpstreamSpec } from "../../config/validate.ts";
import { UpstreamClientRecord, jsonOrUndefined, kvKeys } from "../../config/keys.ts";
import { GUARDED_FETCH_TIMEOUT_MS } from "../../lib/guarded-fetch.ts";
import { checkUpstreamUrl, type UrlPolicy } from "../../lib/url-guard.ts";
import { openSecret, sealSecret } from "../../lib/secrets.ts";
import { accepted } from "../../store/kv.ts";
import { bindingKv } from "../../store/binding-kv.ts";
import { readSecret } from "../../store/store.ts";
import { ClientAuthMethod, type ConnectTransaction } from "../../upstream/oauth-credential.ts";

export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";

export type OAuthEntry = UpstreamSpec & { auth: NonNullable<UpstreamSpec["auth"]> };

/** Why a connect cannot go on: the page's status and the sentence it and the log line say. */
export class ConnectError extends Error {
  override readonly name = "ConnectError";
  readonly status: number;
  readonly outcome: "refused" | "failed";
  constructor(status: number, message: string, outcome: "refused" | "failed" = "failed") {
    super(message);
    this.status = status;
    this.outcome = outcome;
  }
}

/** A reason from a library's error, short: their messages name the rule or status that failed, never a token or secret. */
export function reasonOf(err: unknown): string {
  if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return `no answer within ${GUARDED_FETCH_TIMEOUT_MS / 1000} s`;
  }
  const text = err instanceof Error ? err.message : "unknown error";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** An OAuth error code as a page may show it (it comes from a third party). */
export const safeCode = (code: unknown): string => (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : "an unrecognised error");

export interface Found {
  authorizationServerUrl: string;
  as: AuthorizationServerMetadata;
  prm?: OAuthProtectedResourceMetadata;
  /** The `scope` of the upstream's 401 challenge. */
  challengeScope?: string;
}

/** The upstream's authorization server: from its 401 (RFC 9728 `resource_metadata`), else the well-known paths. */
export async function discover(url: string, fetchFn: typeof fetch, policy: UrlPolicy): Promise<Found> {
  let challenge: ReturnType<typeof extractWWWAuthenticateParams> = {};
  try {
    // An initialize without credentials, as a client's first request is: an OAuth upstream answers 401.
    const res = await fetchFn(url, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: PRODUCT } }),
    });
    if (res.status === 401) challenge = extractWWWAuthenticateParams(res);
    await res.body?.cancel();
  } catch (err) {
    throw new ConnectError(502, `The upstream did not answer: ${reasonOf(err)}.`);
  }
  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    info = await discoverOAuthServerInfo(url, { fetchFn, ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) });
  } catch (err) {
    throw new ConnectError(502, `Discovering the upstream's authorization server failed: ${reasonOf(err)}.`);
  }
  const as = info.authorizationServerMetadata;
  if (!as) throw new ConnectError(502, `The upstream names no authorization server whose metadata could be read (RFC 8414 or OpenID Connect discovery at ${info.authorizationServerUrl}).`);
  const prm = info.resourceMetadata;
  if (prm && !checkResourceAllowed({ requestedResource: url, configuredResource: prm.resource })) {
    throw new ConnectError(502, `The upstream's protected resource metadata describes another resource (${prm.resource}), not ${url}.`, "refused");
  }
  // MCP: a client MUST refuse an authorization server that does not say it supports PKCE with S256.
  if (!as.code_challenge_methods_supported?.includes("S256")) {
    throw new ConnectError(502, "The upstream's authorization server does not list PKCE S256 in code_challenge_methods_supported, which MCP requires.", "refused");
  }
  for (const endpoint of [as.authorization_endpoint, as.token_endpoint]) {
    const verdict = checkUpstreamUrl(endpoint, policy);
    if (!verdict.ok) throw new ConnectError(502, `The upstream's authorization server names an endpoint the proxy may not use: ${verdict.reason}.`, "refused");
  }
  try {
    assertSecureTokenEndpoint(as.token_endpoint);
  } catch {
    throw new ConnectError(502, "The upstream's token endpoint is not https.", "refused");
  }
  return {
    authorizationServerUrl: info.authorizationServerUrl,
    as,
    ...(prm ? { prm } : {}),
    ...(challenge.scope ? { challengeScope: challenge.scope } : {}),
  };
}

/** The entry's scopes, else the 401's, else the metadata's; with `offline_access` when the server offers it. */
export function scopeFor(entry: OAuthEntry, found: Found): string | undefined {
  const scopes = new Set(entry.auth.scopes ?? found.challengeScope?.split(" ").filter(Boolean) ?? found.prm?.scopes_supported ?? []);
  if (found.as.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return scopes.size > 0 ? [...scopes].join(" ") : undefined;
}

export interface ProxyClient {
  clientId: string;
  authMethod: ClientAuthMethod;
}

export interface ClientNeeds {
  team: string;
  server: string;
  entry: OAuthEntry;
  as: AuthorizationServerMetadata;
  base: string;
  redirectUri: string;
  scope: string | undefined;
  secretsKey: string;
  fetchFn: typeof fetch;
}

/** `${secret:NAME}` → NAME. */
const secretName = (ref: string): string => /^\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}$/.exec(ref)?.[1] ?? "";

/** A configured secret's method: Basic unless the server lists only the form-post one. */
function secretMethod(as: AuthorizationServerMetadata): ClientAuthMethod {
  const methods = as.token_endpoint_auth_methods_supported;
  return methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post") ? "client_secret_post" : "client_secret_basic";
}

/** The proxy's client: the entry's configured one, else its metadata document (CIMD), else a registration. */
export async function clientFor(env: Env, n: ClientNeeds): Promise<ProxyClient> {
  const configured = n.entry.auth.client;
  if (configured) {
    if (configured.secret === undefined) return { clientId: configured.id, authMethod: "none" };
    const name = secretName(configured.secret);
    if ((await readSecret(bindingKv(env.TEAMS), n.secretsKey, n.team, name)) === undefined) {
      log({ event: "misconfigured", reason: `team ${n.team}: the client secret ${name} of upstream ${n.server} cannot be read` });
      throw new ConnectError(500, `The client secret of ${n.server} (team secret ${name}) is missing: an admin sets it (npm run team -- secret set).`);
    }
    return { clientId: configured.id, authMethod: secretMethod(n.as) };
  }
  if (n.as.client_id_metadata_document_supported === true && n.base.startsWith("https://")) {
    return { clientId: `${n.base}${CLIENT_METADATA_PATH}`, authMethod: "none" };
  }
  return registered(env, n);
}

/** The stored registration while the server's issuer and the redirect URI stay the same, else a new one (RFC 7591). */
async function registered(env: Env, n: ClientNeeds): Promise<ProxyClient> {
  const key = kvKeys.upstreamClient(n.team, n.server);
  const stored = accepted(UpstreamClientRecord, jsonOrUndefined((await env.TEAMS.get(key)) ?? ""));
  if (
    stored &&
    stored.issuer === n.as.issuer &&
    stored.redirectUri === n.redirectUri &&
    (stored.clientSecretExpiresAt === undefined || stored.clientSecretExpiresAt > Date.now())
  ) {
    return { clientId: stored.clientId, authMethod: stored.authMethod };
  }
  if (!n.as.registration_endpoint) {
    throw new ConnectError(
      502,
      `The upstream's authorization server offers neither dynamic client registration nor client metadata documents over https: configure a client for ${n.server} (auth.client).`,
      "refused",
    );
  }
  let info: Awaited<ReturnType<typeof registerClient>>;
  try {
    info = await registerClient(n.as.issuer, {
      metadata: n.as,
      clientMetadata: {
        client_name: `dynmcp-edge (team ${n.team})`,
        redirect_uris: [n.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      ...(n.scope === undefined ? {} : { scope: n.scope }),
      fetchFn: n.fetchFn,
    });
  } catch (err) {
    // A refusal's body is the server's RFC 7591 error: only its code is shown.
    const code = err instanceof Error && "body" in err ? safeCode((jsonOrUndefined(String(err.body)) as { error?: unknown } | undefined)?.error) : undefined;
    throw new ConnectError(502, `Registering the proxy at the upstream's authorization server failed: ${code ?? reasonOf(err)}.`);
  }
  const method = ClientAuthMethod.safeParse(info.token_endpoint_auth_method);
  const authMethod: ClientAuthMethod = method.success && (method.data === "none" || info.client_secret) ? method.data : info.client_secret ? "client_secret_basic" : "none";
  const record: UpstreamClientRecord = {
    issuer: n.as.issuer,
    redirectUri: n.redirectUri,
    clientId: info.client_id,
    ...(info.client_secret ? { clientSecret: await sealSecret(n.secretsKey, n.team, registrationSecretName(n.server), info.client_secret) } : {}),
    ...(info.client_secret_expires_at ? { clientSecretExpiresAt: info.client_secret_expires_at * 1000 } : {}),
    authMethod,
    registeredAt: new Date().toISOString(),
  };
  await env.TEAMS.put(key, JSON.stringify(record));
  return { clientId: info.client_id, authMethod };
}

/** The sealed registration secret's name: contains ':' so it can never be a team secret's. */
const registrationSecretName = (server: string) => `oauth-client:${server}`;

/** The client secret again: the configured team secret, or the registration's sealed one. */
export async function clientSecret(env: Env, team: string, tx: ConnectTransaction, entry: OAuthEntry, secretsKey: string): Promise<string | undefined> {
  const configured = entry.auth.client;
  if (configured?.id === tx.clientId && configured.secret !== undefined) {
    return readSecret(bindingKv(env.TEAMS), secretsKey, team, secretName(configured.secret));
  }
  const stored = accepted(UpstreamClientRecord, jsonOrUndefined((await env.TEAMS.get(kvKeys.upstreamClient(team, tx.server))) ?? ""));
  if (stored?.clientId !== tx.clientId || !stored.clientSecret) return undefined;
  return openSecret(secretsKey, team, registrationSecretName(tx.server), stored.clientSecret);
}
