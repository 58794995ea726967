// Connecting an account to an OAuth-protected upstream (docs/oauth.md 3.3). Served whether or not
// OAUTH_HOSTS is on:
//   GET /t/<team>/connect/<server>?h=<handle>  a connect link: the handle checked before the team's config is read
//                                              (the team's shared account, or a member's, who must prove who they are:
//                                              src/edge/oauth/member-cookie.ts); a shared link spent at its first use, and
//                                              refused while the shared account is connected; the
//                                              upstream's authorization server discovered and the proxy's client there
//                                              (src/edge/oauth/upstream-discovery.ts); the browser sent there with PKCE S256
//                                              and `resource` = the entry's URL
//   GET /oauth/upstream/callback               the authorization server's answer: the code exchanged, the credential
//                                              sealed into the team's index (src/team/credential-vault.ts), never
//                                              over a connected shared account (an admin disconnects it first)
//   GET /oauth/client-metadata.json            the proxy's client metadata document (https deployments only)
// Every URL the upstream names is fetched through the upstream URL guard (every redirect too), with a time limit. A
// failure is a local page saying what failed and an `upstream_oauth` log line: never a token, a code or a secret in
// either.
import { Hono } from "hono";
import * as oauth from "oauth4webapi";
import { startAuthorization } from "@modelcontextprotocol/client";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { flowStatePrefix, isFlowState, mintFlowState } from "../../auth/flow-state.ts";
import { ServerName, TeamName } from "../../config/schema.ts";
import { loadTeamConfig } from "../../config/load.ts";
import { checkConnectHandle } from "../../auth/connect-link.ts";
import { guardedFetch, guardedFetchOptions } from "../../lib/guarded-fetch.ts";
import { urlPolicy } from "../../lib/url-policy.ts";
import { publicBase } from "../../lib/public-url.ts";
import { teamExists } from "../common/team-view.ts";
import { settings } from "../../lib/settings.ts";
import { CONNECT_TTL_MS, SHARED_ACCOUNT, clientAuthFor, type ConnectTransaction, type UpstreamCredential } from "../../upstream/oauth-credential.ts";
import { absent, type OAuthContext } from "./team-param.ts";
import { connectedPage, errorPage, memberSignInPage, redirect } from "./pages.ts";
import { clearFlowCookie, flowCookie, fromFlowBrowser, memberOf } from "./member-cookie.ts";
import { CLIENT_METADATA_PATH, ConnectError, clientFor, clientSecret, discover, reasonOf, safeCode, scopeFor, type OAuthEntry } from "./upstream-discovery.ts";

export const upstreamConnect = new Hono<{ Bindings: Env }>();

const CALLBACK_PATH = "/oauth/upstream/callback";

/** The failure's page and log line. */
function failed(team: string, server: string, account: string | undefined, err: ConnectError, headers?: Headers): Response {
  log({ event: "upstream_oauth", team, upstream: server, action: "connect", outcome: err.outcome, ...(account === undefined ? {} : { account }), reason: err.message });
  return errorPage(err.status, `Cannot connect ${server}`, err.message, headers);
}

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
  const handle = c.req.query("h") ?? "";
  const holder = await linkHolder(c, key, team, server, handle);
  if (holder instanceof Response) return holder;
  const { account } = holder;
  try {
    // Only now, for a link whose MAC checked (made by the proxy for this team and server), is the config read: what a
    // bad or foreign handle gets says nothing of which servers the team has.
    const entry = await oauthEntry(c.env, team, server);
    if (account === SHARED_ACCOUNT && entry.auth.mode !== "shared") {
      throw new ConnectError(400, `This link is for team ${team}'s shared account, but ${server} connects each member's own account: use the link your tool call gave you.`, "refused");
    }
    if (account !== SHARED_ACCOUNT && entry.auth.mode === "shared") {
      throw new ConnectError(400, `This link is for your own account, but ${server} uses one shared account for team ${team}, which an admin connects: ask an admin for a new link.`, "refused");
    }
    if (account === SHARED_ACCOUNT) await spendSharedLink(c.env, team, server, entry, holder);
    return await start(c, team, server, entry, account, secretsKey, key);
  } catch (err) {
    if (err instanceof ConnectError) return failed(team, server, account, err);
    throw err;
  }
}

/**
 * Whose link this is, from the handle alone: the team's shared account (its MAC checks for it), else a member's, who
 * must be the member this browser signed in as; else the member sign-in page (the same for any server name).
 */
async function linkHolder(c: OAuthContext, key: string, team: string, server: string, handle: string): Promise<Response | { account: string; nonce: string; expiresAt: Date }> {
  const asShared = await checkConnectHandle(key, handle, team, server, SHARED_ACCOUNT);
  if (asShared.ok) return { account: SHARED_ACCOUNT, nonce: asShared.nonce, expiresAt: asShared.expiresAt };
  if (asShared.problem === "malformed") {
    throw new ConnectError(400, "This is not a whole connect link (its handle is missing or cut short): copy the entire link.", "refused");
  }
  if (asShared.problem === "expired") throw new ConnectError(400, expiredLink("ask an admin for a new one"), "refused");
  // Not the shared account's: a member's link (or an altered one), which only the member it was made for may open.
  const action = `/t/${team}/connect/${server}/sign-in`;
  const user = await memberOf(key, c.req.header("cookie"), team);
  if (!user) {
    return memberSignInPage(action, handle, team, `Connecting your own ${server} account needs to know which member of team ${team} you are. Sign in first; you come back here.`);
  }
  const check = await checkConnectHandle(key, handle, team, server, user);
  if (check.ok) return { account: user, nonce: check.nonce, expiresAt: check.expiresAt };
  if (check.problem === "expired") throw new ConnectError(400, expiredLink("retry the tool call for a new one"), "refused");
  log({ event: "upstream_oauth", team, upstream: server, action: "connect", outcome: "refused", account: user, reason: "the link was made for another member" });
  return memberSignInPage(action, handle, team, `This connect link was made for another member of team ${team} than the one signed in in this browser (or it was altered). If it is yours, sign in as yourself.`);
}

/**
 * A shared account's link works once, and never replaces a connected account: an admin disconnects it first. Checked
 * before the link is spent (an admin who disconnects may then use the same link); the callback checks again.
 */
async function spendSharedLink(env: Env, team: string, server: string, entry: OAuthEntry, link: { nonce: string; expiresAt: Date }): Promise<void> {
  const index = env.TEAM_INDEX.getByName(team);
  const connected = await index.listCredentials(team, server);
  if (connected.some((c) => c.account === SHARED_ACCOUNT && c.resource === entry.url)) throw alreadyConnected(team, server);
  const spent = await index.spendConnectLink(team, link.nonce, link.expiresAt.getTime());
  if (spent === "used") throw new ConnectError(400, "This connect link was already used (a link works once): ask an admin for a new one.", "refused");
  if (spent === "full") throw new ConnectError(503, `Too many connect links of team ${team} are in use: try again in ten minutes.`, "refused");
}

const alreadyConnected = (team: string, server: string) =>
  new ConnectError(
    409,
    `Team ${team}'s shared account is already connected to ${server}. To connect another, an admin disconnects it first (npm run team -- oauth disconnect ${team} ${server} shared), then makes a new link.`,
    "refused",
  );

const expiredLink = (renew: string) => `This connect link has expired (links work for ten minutes): ${renew}.`;

/** Discovery, the client, PKCE and the transaction; then off to the authorization server. */
async function start(c: OAuthContext, team: string, server: string, entry: OAuthEntry, account: string, secretsKey: string, key: string): Promise<Response> {
  const base = publicBase(c.env, c.req.raw);
  const policy = urlPolicy(c.env);
  // Each request bounded in time by the guarded fetch itself (the SDK's helpers pass no signal of their own).
  const fetchFn = guardedFetch(policy);
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
    // A member replaces their own account; the shared one is replaced only after a disconnect (another connect may
    // have finished since this one started).
    if (tx.account !== SHARED_ACCOUNT) await index.putCredential(team, tx.server, tx.account, credential);
    else if (!(await index.addCredential(team, tx.server, tx.account, credential))) throw alreadyConnected(team, tx.server);
  } catch (err) {
    if (err instanceof ConnectError) return fail(err);
    throw err;
  }
  log({ event: "upstream_oauth", team, upstream: tx.server, action: "connect", outcome: "ok", account: tx.account });
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
