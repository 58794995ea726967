// The proxy as an OAuth 2.1 authorization server (docs/oauth.md): one server per team, built on demand with
// @cloudflare/workers-oauth-provider, whose issuer is the team's base URL and whose only resource is the team's MCP
// URL, so a token minted for one team's URL is refused at another's (the library checks the audience). Its records
// live in the OAUTH_KV namespace. The token step asks it only with OAUTH_HOSTS=on (the default).
import { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { boundedRegistration } from "./registration.ts";
import { refuseHiddenClientName } from "./client-name.ts";
import { urlPolicy } from "../../lib/url-policy.ts";
import { guardedMethods, withGuardedFetch } from "../../lib/library-fetch.ts";
import type { Subject } from "../../config/subject.ts";
import { GrantProps, memberSubject } from "./grant-props.ts";
import { exchangedProps } from "./grant-refresh.ts";

/** Scopes the servers offer: `mcp` is what the MCP URL needs; `offline_access` asks for a refresh token. */
export const OAUTH_SCOPES = ["mcp", "offline_access"] as const;
/** The scope an access token must carry at the MCP URL. */
export const MCP_SCOPE = OAUTH_SCOPES[0];

/**
 * What a grant holds of the scopes a client asked for: those the server offers (others are dropped, as RFC 6749 §3.3
 * lets a server do), and `mcp` when it asked for none of them (the server's default for an omitted scope). A client
 * that asked for `offline_access` alone gets that alone: its tokens are refused at the MCP URL.
 */
export function grantedScopes(requested: readonly string[]): string[] {
  const offered = new Set<string>(OAUTH_SCOPES);
  const granted = [...new Set(requested.filter((scope) => offered.has(scope)))];
  return granted.length === 0 ? [MCP_SCOPE] : granted;
}

/** Access tokens are short-lived (refresh tokens rotate): a revoked grant stops within this bound at most. */
export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/**
 * A dynamic registration lives twice as long as a refresh token, and the library renews it (once past half its life)
 * whenever its client uses the token endpoint: so no grant outlives its client, however late in the client's life it
 * was made, and a registration never used is gone after 60 days (the library's default is 90). Shorter would strand
 * grants: their refresh would fail with invalid_client.
 */
export const CLIENT_REGISTRATION_TTL_SECONDS = 2 * REFRESH_TOKEN_TTL_SECONDS;

/** The team's MCP URL, the one resource its server issues tokens for. */
export const teamResource = (base: string, team: string): string => `${base}/t/${team}/mcp`;

/** What the proxy uses of a team's server: every entry point runs with the library's own fetches guarded. */
export type TeamAuthorizationServer = Pick<OAuthAuthorizationServer<Env>, "fetch" | "getOAuthApi" | "validateToken">;

/**
 * The library fetches a host's client metadata document (its `client_id` URL) and the keys it names by itself, with
 * the global fetch and redirects followed: each entry point runs in `withGuardedFetch` (src/lib/library-fetch.ts),
 * so those fetches pass the URL guard on every hop, as every other URL a third party names.
 */
function guarded(server: OAuthAuthorizationServer<Env>): TeamAuthorizationServer {
  return {
    fetch: (request, env, ctx) => withGuardedFetch(urlPolicy(env), () => server.fetch(request, env, ctx)),
    getOAuthApi: (env) => guardedMethods(server.getOAuthApi(env), urlPolicy(env)),
    validateToken: (resource, token, env) => withGuardedFetch(urlPolicy(env), () => server.validateToken(resource, token, env)),
  };
}

/** Servers built in this isolate, by base URL and team (a host sends the same ones on every request). */
const servers = new BoundedCache<string, TeamAuthorizationServer>({ max: 1000 });

export function authorizationServer(base: string, team: string): TeamAuthorizationServer {
  const key = `${base}\n${team}`;
  let server = servers.get(key);
  if (!server) {
    server = guarded(new OAuthAuthorizationServer<Env>({
      issuer: `${base}/t/${team}`,
      resources: [teamResource(base, team)],
      authorizeEndpoint: `/t/${team}/oauth/authorize`,
      tokenEndpoint: `/t/${team}/oauth/token`,
      clientRegistrationEndpoint: `/t/${team}/oauth/register`,
      // Hosts may name themselves by an https URL whose document lists their redirect URIs (CIMD, the MCP spec's
      // preferred registration); the library fetches it (10 s, 5 KB, cached) under `global_fetch_strictly_public`,
      // through the guarded fetch (`guarded` above).
      clientIdMetadataDocumentEnabled: true,
      scopesSupported: [...OAUTH_SCOPES],
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTTL: REFRESH_TOKEN_TTL_SECONDS,
      clientRegistrationTTL: CLIENT_REGISTRATION_TTL_SECONDS,
      // Each field's size, before the library stores anything (the document's size is limited before it reads it),
      // then a client name that could be disguised (bidirectional overrides, invisible characters) is refused.
      clientRegistrationCallback: (metadata) => boundedRegistration(metadata) ?? refuseHiddenClientName(metadata),
      // At a code exchange and at each refresh: access tokens carry no provider refresh token, and a refresh renews the
      // member's groups and asks the team's rules again (src/edge/oauth/grant-refresh.ts).
      tokenExchangeCallback: (options) => exchangedProps(options, base, team),
      // Our log line instead of the library's console text: its stable category and reason, nothing of the request.
      onError: ({ code, status, internal }) => {
        log({ event: "oauth_error", team, code, category: internal.category, reason: internal.reason, status });
      },
    }));
    servers.set(key, server);
  }
  return server;
}

/** Who an OAuth access token speaks for at this team's MCP URL, or null (unknown, expired, revoked, another audience). */
export interface OAuthCaller {
  binding: string;
  user: GrantProps["user"];
  /** Who the team's policies see: the member's id, verified email and groups as the grant held them at this token's issue. */
  subject: Subject;
  /** When the access token expires (unix seconds). */
  expiresAt: number;
  /** Whether the token carries the `mcp` scope (without it, the MCP URL refuses it: insufficient_scope). */
  mayUseMcp: boolean;
}

export async function oauthCaller(env: Env, base: string, team: string, token: string): Promise<OAuthCaller | null> {
  const validated = await authorizationServer(base, team).validateToken<unknown>(teamResource(base, team), token, env);
  if (!validated) return null;
  const props = GrantProps.safeParse(validated.props);
  // A grant for another team (it cannot pass the audience check, but its props say whose it is) is refused too.
  if (!props.success || props.data.team !== team) return null;
  return { binding: props.data.binding, user: props.data.user, subject: memberSubject(props.data), expiresAt: validated.expiresAt, mayUseMcp: validated.scope.includes(MCP_SCOPE) };
}
