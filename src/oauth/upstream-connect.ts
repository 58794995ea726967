// Connecting an account to an OAuth-protected upstream (issue 16, docs/oauth.md 3.3). Served whether or not
// OAUTH_HOSTS is on:
//   GET /t/<team>/connect/<server>?h=<handle>  a connect link: the handle checked (the team's shared account, or a
//                                              member's, who must prove who they are: src/oauth/member-cookie.ts); the
//                                              upstream's authorization server discovered (its 401's
//                                              `resource_metadata` or RFC 9728's well-known path, then RFC 8414 / OIDC);
//                                              the proxy's client there (the entry's configured one, the proxy's client
//                                              metadata document, or a dynamic registration kept in KV); the browser
//                                              sent there with PKCE S256 and `resource` = the entry's URL
//   GET /oauth/upstream/callback               the authorization server's answer: the code exchanged, the credential
//                                              sealed into the team's index (src/session/credential-vault.ts)
//   GET /oauth/client-metadata.json            the proxy's client metadata document (https deployments only)
// Every URL the upstream names is fetched through the upstream URL guard, with a time limit. A failure is a local page
// saying what failed and an `upstream_oauth` log line: never a token, a code or a secret in either.
import { Hono } from "hono";
import * as oauth from "oauth4webapi";
import {
  assertSecureTokenEndpoint,
  checkResourceAllowed,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  registerClient,
  startAuthorization,
  type AuthorizationServerMetadata,
  type OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/client";
import { PRODUCT, type Env } from "../env.ts";
import { log } from "../log.ts";
import { flowStatePrefix, isFlowState, mintFlowState } from "../auth/flow-state.ts";
import { ServerName, TeamName } from "../config/schema.ts";
import { loadTeamConfig } from "../config/load.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamClientRecord, jsonOrUndefined, kvKeys } from "../config/keys.ts";
import { checkConnectHandle } from "../auth/connect-link.ts";
import { GUARDED_FETCH_TIMEOUT_MS, guardedFetch, guardedFetchOptions } from "../security/guarded-fetch.ts";
import { urlPolicy } from "../security/policy.ts";
import { checkUpstreamUrl, type UrlPolicy } from "../security/url-guard.ts";
import { openSecret, sealSecret } from "../security/secrets.ts";
import { accepted } from "../teams/kv.ts";
import { bindingKv } from "../teams/binding-kv.ts";
import { readSecret } from "../teams/store.ts";
import { publicBase } from "../http/origin.ts";
import { teamExists } from "../http/team-view.ts";
import { settings } from "../settings.ts";
import { CONNECT_TTL_MS, ClientAuthMethod, SHARED_ACCOUNT, clientAuthFor, type ConnectTransaction, type UpstreamCredential } from "../upstream/oauth-credential.ts";
import { absent, type OAuthContext } from "./team-param.ts";
import { connectedPage, errorPage, memberSignInPage } from "./pages.ts";
import { clearFlowCookie, flowCookie, fromFlowBrowser, memberOf } from "./member-cookie.ts";

export const upstreamConnect = new Hono<{ Bindings: Env }>();

const CALLBACK_PATH = "/oauth/upstream/callback";
const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";

type OAuthEntry = UpstreamSpec & { auth: NonNullable<UpstreamSpec["auth"]> };

/** Why a connect cannot go on: the page's status and the sentence it and the log line say. */
class ConnectError extends Error {
  override readonly name = "ConnectError";
  readonly status: number;
  readonly outcome: "refused" | "failed";
  constructor(status: number, message: string, outcome: "refused" | "failed" = "failed") {
    super(message);
    this.status = status;
    this.outcome = outcome;
  }
}

/** The failure's page and log line. */
function failed(team: string, server: string, account: string | undefined, err: ConnectError, headers?: Headers): Response {
  log({ event: "upstream_oauth", team, upstream: server, action: "connect", outcome: err.outcome, ...(account === undefined ? {} : { account }), reason: err.message });
  return errorPage(err.status, `Cannot connect ${server}`, err.message, headers);
}

/** A reason from a library's error, short: their messages name the rule or status that failed, never a token or secret. */
function reasonOf(err: unknown): string {
  if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return `no answer within ${GUARDED_FETCH_TIMEOUT_MS / 1000} s`;
  }
  const text = err instanceof Error ? err.message : "unknown error";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** An OAuth error code as a page may show it (it comes from a third party). */
const safeCode = (code: unknown): string => (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : "an unrecognised error");

/** The guarded fetch, each request bounded in time (the SDK's helpers pass no signal of their own). */
function fetchFor(policy: UrlPolicy): typeof fetch {
  const guarded = guardedFetch(policy);
  return (input, init) => guarded(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(GUARDED_FETCH_TIMEOUT_MS) });
}

const redirect = (location: string, headers: Headers): Response => {
  headers.set("location", location);
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 302, headers });
};

/** The team's entry `server` when it is an OAuth upstream, or why not. */
async function oauthEntry(env: Env, team: string, server: string): Promise<OAuthEntry> {
  const config = await loadTeamConfig(env.TEAMS, team);
  const entry = config?.ok ? config.config.upstreams.find((u) => u.name === server) : undefined;
  if (!entry) throw new ConnectError(404, `Team ${team} has no server named ${server}.`, "refused");
  if (entry.auth?.type !== "oauth") throw new ConnectError(400, `${server} does not sign in with OAuth: there is nothing to connect.`, "refused");
  return entry as OAuthEntry;
}

// ---- the connect link ------------------------------------------------------------------------------------------

upstreamConnect.get("/t/:team/connect/:server", async (c) => {
  const team = TeamName.safeParse(c.req.param("team"));
  const server = ServerName.safeParse(c.req.param("server"));
  if (!team.success || !server.success) return absent(c);
  try {
    return await connect(c, team.data, server.data);
  } catch (err) {
    if (err instanceof ConnectError) return failed(team.data, server.data, undefined, err);
    throw err;
  }
});

async function connect(c: OAuthContext, team: string, server: string): Promise<Response> {
  const key = c.env.SESSION_KEY;
  const secretsKey = c.env.SECRETS_KEY;
  if (!key || !secretsKey) {
    log({ event: "misconfigured", reason: "connect links need SESSION_KEY and SECRETS_KEY" });
    throw new ConnectError(500, "The proxy is not set up to keep upstream accounts (SESSION_KEY and SECRETS_KEY are needed).");
  }
  const entry = await oauthEntry(c.env, team, server);
  const handle = c.req.query("h") ?? "";
  const asShared = await checkConnectHandle(key, handle, team, server, SHARED_ACCOUNT);
  if (!asShared.ok && asShared.problem === "malformed") {
    throw new ConnectError(400, "This is not a whole connect link (its handle is missing or cut short): copy the entire link.", "refused");
  }
  let account: string;
  // A shared link is one whose proof checks for the shared account (expired or not); anything else is a member's link,
  // or no link of this server at all.
  if (asShared.ok || asShared.problem === "expired") {
    if (entry.auth.mode !== "shared") {
      throw new ConnectError(400, `This link is for team ${team}'s shared account, but ${server} connects each member's own account: use the link your tool call gave you.`, "refused");
    }
    if (!asShared.ok) throw new ConnectError(400, expiredLink("ask an admin for a new one"), "refused");
    account = SHARED_ACCOUNT;
  } else if (entry.auth.mode === "shared") {
    throw new ConnectError(400, `${notThisLink(team, server)} ${server} uses one shared account for team ${team}, which an admin connects: ask an admin for a new link.`, "refused");
  } else {
    // The spec's rule for such links: only the member it was made for may use it.
    const action = `/t/${team}/connect/${server}/sign-in`;
    const user = await memberOf(key, c.req.header("cookie"), team);
    if (!user) {
      return memberSignInPage(action, handle, team, `Connecting your own ${server} account needs to know which member of team ${team} you are. Sign in first; you come back here.`);
    }
    const check = await checkConnectHandle(key, handle, team, server, user);
    if (!check.ok && check.problem === "foreign") {
      log({ event: "upstream_oauth", team, upstream: server, action: "connect", outcome: "refused", account: user, reason: "the link was made for another member" });
      return memberSignInPage(action, handle, team, `This connect link was made for another member of team ${team} than the one signed in in this browser (or it was altered). If it is yours, sign in as yourself.`);
    }
    if (!check.ok) throw new ConnectError(400, check.problem === "expired" ? expiredLink("retry the tool call for a new one") : notThisLink(team, server), "refused");
    account = user;
  }
  try {
    return await start(c, team, server, entry, account, secretsKey, key);
  } catch (err) {
    if (err instanceof ConnectError) return failed(team, server, account, err);
    throw err;
  }
}

const expiredLink = (renew: string) => `This connect link has expired (links work for ten minutes): ${renew}.`;
const notThisLink = (team: string, server: string) =>
  `This connect link is not valid for ${server} of team ${team}: it was altered, or made for another server, team or account.`;

/** Discovery, the client, PKCE and the transaction; then off to the authorization server. */
async function start(c: OAuthContext, team: string, server: string, entry: OAuthEntry, account: string, secretsKey: string, key: string): Promise<Response> {
  const base = publicBase(c.env, c.req.raw);
  const policy = urlPolicy(c.env);
  const fetchFn = fetchFor(policy);
  const found = await discover(entry.url, fetchFn, policy);
  const scope = scopeFor(entry, found);
  const redirectUri = `${base}${CALLBACK_PATH}`;
  const client = await clientFor(c.env, { team, server, entry, as: found.as, base, redirectUri, scope, secretsKey, fetchFn });
  const state = await mintFlowState(key, "connect", team, team);
  let started: { authorizationUrl: URL; codeVerifier: string };
  try {
    started = await startAuthorization(found.authorizationServerUrl, {
      metadata: found.as,
      clientInformation: { client_id: client.clientId },
      redirectUrl: redirectUri,
      state,
      resource: entry.url,
      ...(scope === undefined ? {} : { scope }),
    });
  } catch (err) {
    throw new ConnectError(502, `The upstream's authorization server cannot be used: ${reasonOf(err)}.`);
  }
  await c.env.TEAM_INDEX.getByName(team).beginConnect(team, state, {
    server,
    account,
    resource: entry.url,
    issuer: found.as.issuer,
    tokenEndpoint: found.as.token_endpoint,
    clientId: client.clientId,
    authMethod: client.authMethod,
    verifier: started.codeVerifier,
    redirectUri,
    ...(scope === undefined ? {} : { scope }),
    expiresAt: Date.now() + CONNECT_TTL_MS,
  });
  return redirect(started.authorizationUrl.href, new Headers({ "set-cookie": await flowCookie(key, state) }));
}

interface Found {
  authorizationServerUrl: string;
  as: AuthorizationServerMetadata;
  prm?: OAuthProtectedResourceMetadata;
  /** The `scope` of the upstream's 401 challenge. */
  challengeScope?: string;
}

/** The upstream's authorization server: from its 401 (RFC 9728 `resource_metadata`), else the well-known paths. */
async function discover(url: string, fetchFn: typeof fetch, policy: UrlPolicy): Promise<Found> {
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
function scopeFor(entry: OAuthEntry, found: Found): string | undefined {
  const scopes = new Set(entry.auth.scopes ?? found.challengeScope?.split(" ").filter(Boolean) ?? found.prm?.scopes_supported ?? []);
  if (found.as.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return scopes.size > 0 ? [...scopes].join(" ") : undefined;
}

interface ProxyClient {
  clientId: string;
  authMethod: ClientAuthMethod;
}

interface ClientNeeds {
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
async function clientFor(env: Env, n: ClientNeeds): Promise<ProxyClient> {
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

// ---- the authorization server's answer -------------------------------------------------------------------------

upstreamConnect.get(CALLBACK_PATH, async (c) => {
  const url = new URL(c.req.url);
  const state = url.searchParams.get("state") ?? "";
  const team = flowStatePrefix(state);
  const key = c.env.SESSION_KEY;
  const secretsKey = c.env.SECRETS_KEY;
  if (!team || !TeamName.safeParse(team).success) {
    return errorPage(400, "This connect cannot go on", "The answer names no connect this proxy started. Start again from the connect link.");
  }
  if (!key || !secretsKey) return errorPage(500, "This connect cannot go on", "The proxy is not set up to keep upstream accounts (SESSION_KEY and SECRETS_KEY are needed).");
  const index = c.env.TEAM_INDEX.getByName(team);
  // The team's index is woken only for a state this proxy minted for a team that still exists.
  const minted = (await isFlowState(key, "connect", team, state)) && (await teamExists(c.env.TEAMS, team, settings(c.env).tokenCacheSeconds));
  const tx = minted ? await index.takeConnect(team, state) : undefined;
  const headers = new Headers({ "set-cookie": await clearFlowCookie(key, state) });
  if (!tx) {
    log({ event: "upstream_oauth", team, upstream: "-", action: "connect", outcome: "refused", reason: "unknown, used or expired state at the callback" });
    return errorPage(400, "This connect cannot go on", "This connect has expired or was already finished. Start again from the connect link.", headers);
  }
  const fail = (err: ConnectError) => failed(team, tx.server, tx.account, err, headers);
  if (!(await fromFlowBrowser(key, c.req.header("cookie"), state))) {
    return fail(new ConnectError(400, "This connect was started in another browser. Open the connect link again in the browser you sign in with.", "refused"));
  }
  const as: oauth.AuthorizationServer = { issuer: tx.issuer, token_endpoint: tx.tokenEndpoint };
  const client: oauth.Client = { client_id: tx.clientId };
  let params: URLSearchParams;
  try {
    // RFC 9207: an `iss` that is not the transaction's issuer is refused before anything else is read.
    params = oauth.validateAuthResponse(as, client, url, state);
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) {
      return fail(new ConnectError(400, `The upstream's authorization server refused: ${safeCode(err.error)}. Start again from the connect link.`, "refused"));
    }
    return fail(new ConnectError(400, `The authorization server's answer does not check out: ${reasonOf(err)}`, "refused"));
  }
  try {
    const credential = await exchange(c.env, team, tx, as, client, params, secretsKey);
    await index.putCredential(team, tx.server, tx.account, credential);
  } catch (err) {
    if (err instanceof ConnectError) return fail(err);
    throw err;
  }
  log({ event: "upstream_oauth", team, upstream: tx.server, action: "connect", outcome: "ok", account: tx.account });
  // Only a path of the proxy itself: never a redirect elsewhere.
  if (tx.returnTo?.startsWith("/") && !tx.returnTo.startsWith("//")) return redirect(tx.returnTo, headers);
  return connectedPage(team, tx.server, tx.account === SHARED_ACCOUNT, headers);
});

/** The code exchanged (PKCE verifier, redirect URI, `resource`), as an UpstreamCredential. */
async function exchange(env: Env, team: string, tx: ConnectTransaction, as: oauth.AuthorizationServer, client: oauth.Client, params: URLSearchParams, secretsKey: string): Promise<UpstreamCredential> {
  const entry = await oauthEntry(env, team, tx.server).catch(() => undefined);
  if (!entry || entry.url !== tx.resource) {
    throw new ConnectError(409, `The team's config of ${tx.server} changed during the connect. Start again from the connect link.`, "refused");
  }
  const secret = tx.authMethod === "none" ? undefined : await clientSecret(env, team, tx, entry, secretsKey);
  if (tx.authMethod !== "none" && secret === undefined) {
    throw new ConnectError(500, `The proxy's client secret for ${tx.server} is missing: an admin sets it, or the registration is redone at the next connect.`);
  }
  const auth = clientAuthFor(tx.authMethod, secret);
  let tokens: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, tx.redirectUri, tx.verifier, {
      ...guardedFetchOptions(urlPolicy(env)),
      additionalParameters: { resource: tx.resource },
    });
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) throw new ConnectError(502, `The upstream's authorization server refused the code: ${safeCode(err.error)}. Start again from the connect link.`);
    throw new ConnectError(502, `Exchanging the code at the upstream's authorization server failed: ${reasonOf(err)}.`);
  }
  const now = Date.now();
  const scope = tokens.scope ?? tx.scope;
  return {
    issuer: tx.issuer,
    resource: tx.resource,
    tokenEndpoint: tx.tokenEndpoint,
    clientId: tx.clientId,
    ...(secret === undefined ? {} : { clientSecret: secret }),
    authMethod: tx.authMethod,
    accessToken: tokens.access_token,
    ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
    ...(tokens.expires_in === undefined ? {} : { expiresAt: now + tokens.expires_in * 1000 }),
    ...(scope === undefined ? {} : { scope }),
    connectedAt: new Date(now).toISOString(),
  };
}

/** The client secret again: the configured team secret, or the registration's sealed one. */
async function clientSecret(env: Env, team: string, tx: ConnectTransaction, entry: OAuthEntry, secretsKey: string): Promise<string | undefined> {
  const configured = entry.auth.client;
  if (configured?.id === tx.clientId && configured.secret !== undefined) {
    return readSecret(bindingKv(env.TEAMS), secretsKey, team, secretName(configured.secret));
  }
  const stored = accepted(UpstreamClientRecord, jsonOrUndefined((await env.TEAMS.get(kvKeys.upstreamClient(team, tx.server))) ?? ""));
  if (stored?.clientId !== tx.clientId || !stored.clientSecret) return undefined;
  return openSecret(secretsKey, team, registrationSecretName(tx.server), stored.clientSecret);
}

// ---- the proxy's client metadata document ----------------------------------------------------------------------

upstreamConnect.get(CLIENT_METADATA_PATH, (c) => {
  const base = publicBase(c.env, c.req.raw);
  if (!base.startsWith("https://")) {
    return c.json({ error: "not_found", message: "The client metadata document is served only over https: set PUBLIC_URL to the proxy's https URL." }, 404);
  }
  const document = {
    client_id: `${base}${CLIENT_METADATA_PATH}`,
    client_name: `dynmcp-edge (${new URL(base).host})`,
    client_uri: base,
    redirect_uris: [`${base}${CALLBACK_PATH}`],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  return c.json(document, 200, { "cache-control": "public, max-age=3600" });
});
