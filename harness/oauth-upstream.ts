// An OAuth-protected upstream MCP server on loopback, for tests of the proxy as an OAuth *client* of its upstreams
// (docs/oauth.md 3.3 and 3.5). Two origins, as a hosted server has them:
// - an authorization server: oidc-provider 9 with open dynamic client registration (RFC 7591), optionally one
//   preconfigured confidential client, PKCE S256 required, RFC 8707 resource indicators giving JWT access tokens
//   whose `aud` is the MCP URL and whose scope is `mcp`, refresh tokens always issued and rotated on use, RFC 8414
//   metadata beside the OIDC discovery document, and the same headless sign-in as harness/idp.ts;
// - an MCP server (v2 server SDK, 2025-11-25 sessions and the 2026-07-28 era on one URL) at `<origin>/mcp` behind
//   bearer auth: a 401 with `WWW-Authenticate: Bearer resource_metadata=…, scope="mcp"`, the RFC 9728 document,
//   JWTs verified with jose against the AS's JWKS (issuer, audience exactly the MCP URL, expiry).
// Tests can count what reached either side, see the tokens presented, and revoke tokens. Node only: never
// imported by src/.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { rpcMethods, toRequest, writeResponse } from "./node-fetch.ts";
import { legacySessions } from "./legacy-sessions.ts";
import {
  McpServer,
  OAuthError,
  OAuthErrorCode,
  bearerAuthChallengeResponse,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  isLegacyRequest,
  verifyBearerToken,
  type AuthInfo,
  type OAuthTokenVerifier,
} from "@modelcontextprotocol/server";
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import Provider, { errors, type Account, type ProviderContext, type ResourceServerInfo } from "oidc-provider";
import * as z from "zod";
import { INTERACTION_PATH, driveAuthorization, escapeHtml, handleInteraction, listenLoopback, memoryStore, page, signingKey } from "./oidc-shared.ts";

/** A user of the authorization server. `sub` is also what is typed into the sign-in form. */
export interface OAuthUpstreamAccount {
  sub: string;
  email: string;
}

/** A confidential client registered up front (the `client` of a proxy's upstream entry). */
export interface OAuthUpstreamClient {
  id: string;
  secret: string;
  /** Exact-match redirect URIs (the proxy's callback). */
  redirectUris: string[];
}

export interface OAuthUpstreamOptions {
  /** Who can sign in; by default {@link DEFAULT_UPSTREAM_ACCOUNTS}. */
  accounts?: OAuthUpstreamAccount[];
  /** Access token lifetime in seconds; by default 60. */
  accessTokenTtl?: number;
  /** Refresh token lifetime in seconds; by default one day. */
  refreshTokenTtl?: number;
  /** One preconfigured confidential client (Basic or body secret); by default none. */
  client?: OAuthUpstreamClient;
  /** Whether dynamic client registration is open; by default true. */
  registration?: boolean;
  /**
   * Which redirect URIs a dynamically registered client may register; by default {@link loopbackOrHttps}: any
   * https URL, and http only on 127.0.0.1, localhost or [::1] (any port), as native and local proxies use.
   */
  allowRedirectUri?: (uri: URL) => boolean;
}

/** What reached the fixture since start or the last `reset()`. */
export interface OAuthUpstreamCounts {
  /** Successful dynamic client registrations. */
  registrations: number;
  /** Refused registrations (a redirect URI the policy refuses, bad metadata). */
  registrationErrors: number;
  /** Authorization requests (the `/auth` endpoint itself, not the resumptions after a sign-in step). */
  authorize: number;
  /** Sign-ins completed through the form. */
  logins: number;
  /** Successful `authorization_code` grants. */
  tokenByCode: number;
  /** Successful `refresh_token` grants. */
  tokenByRefresh: number;
  /** Refused token requests (wrong verifier, reused or revoked refresh token, bad client secret, unknown resource…). */
  tokenErrors: number;
  /** Requests that ended in the provider's `server_error`: a bug in the fixture or a test, never expected. */
  serverErrors: number;
  /** 401 answers of the MCP endpoint. */
  mcpUnauthorized: number;
  /** HTTP requests to the MCP endpoint that passed the bearer check. */
  mcpRequests: number;
  /** `tools/call` requests that passed the bearer check. */
  mcpCalls: number;
}

/** One request to the token endpoint as the AS understood it. */
export interface TokenRequestRecord {
  grantType: string;
  clientId?: string;
  /** The RFC 8707 `resource` parameter, when sent. */
  resource?: string;
  scope?: string;
  /** The OAuth error code of a refused request. */
  error?: string;
}

export interface OAuthUpstream {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`: also the resource indicator and the tokens' audience. */
  url: string;
  /** The authorization server, `http://127.0.0.1:<other port>` (RFC 8414 and OIDC discovery documents). */
  issuer: string;
  /** `<MCP origin>/.well-known/oauth-protected-resource/mcp`, as the 401 names it. */
  resourceMetadataUrl: string;
  /** Another resource the AS issues tokens for (same scope, its own audience); the MCP server refuses them. */
  otherResource: string;
  accounts: OAuthUpstreamAccount[];
  client: OAuthUpstreamClient | undefined;
  /**
   * Signs in as `sub` for this authorization request (a URL of the AS's authorization endpoint) and answers where the
   * AS finally sends the browser: the client's redirect URI with `code`, `state` and `iss` (or `error`). Never
   * fetches that URL. Throws when the AS answers anything else (unknown account, unregistered redirect URI, …).
   */
  login: (authorizeUrl: string, sub: string) => Promise<string>;
  /** Cancels the sign-in of this authorization request: answers the redirect with `error=access_denied`. */
  deny: (authorizeUrl: string) => Promise<string>;
  counts: () => OAuthUpstreamCounts;
  /** Every token-endpoint request since start or the last `reset()`, in order. */
  tokenRequests: () => TokenRequestRecord[];
  /** The distinct bearer tokens presented at the MCP endpoint (valid or not), in the order first seen. */
  seenTokens: () => string[];
  /**
   * Revokes every access token issued so far: the MCP server answers them with 401 `invalid_token` from now on
   * (refresh tokens stay valid, so a client can refresh after the 401). Answers how many were revoked.
   */
  revokeAccessTokens: () => number;
  /** Deletes every refresh token: the next refresh gets `invalid_grant`. Answers how many there were. */
  revokeRefreshTokens: () => number;
  /** Zeroes the counts and forgets the recorded requests and tokens (revocations stay). */
  reset: () => void;
  close: () => Promise<void>;
}

export const DEFAULT_UPSTREAM_ACCOUNTS: readonly OAuthUpstreamAccount[] = [
  { sub: "alice", email: "alice@upstream.test" },
  { sub: "bob", email: "bob@upstream.test" },
];
/** The only scope the MCP server knows and requires. */
export const MCP_SCOPE = "mcp";
export const UPSTREAM_INFO = { name: "oauth-upstream-fixture", version: "1.0.0" } as const;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** The default registration policy: https anywhere, plain http on loopback only. */
export const loopbackOrHttps = (uri: URL): boolean =>
  uri.protocol === "https:" || (uri.protocol === "http:" && LOOPBACK_HOSTS.has(uri.hostname));

/** The MCP endpoint takes JSON-RPC messages, never anything near this big. */
const MAX_BODY_BYTES = 1_048_576;
/** The MCP server's fetch of the AS's JWKS (loopback, answered at once). */
const JWKS_TIMEOUT_MS = 5_000;

const zeroCounts = (): OAuthUpstreamCounts => ({
  registrations: 0,
  registrationErrors: 0,
  authorize: 0,
  logins: 0,
  tokenByCode: 0,
  tokenByRefresh: 0,
  tokenErrors: 0,
  serverErrors: 0,
  mcpUnauthorized: 0,
  mcpRequests: 0,
  mcpCalls: 0,
});

/** One server instance with the fixture's tools; `whoami` answers with the `sub` of the token that called it. */
function fixtureServer(): McpServer {
  const server = new McpServer(UPSTREAM_INFO, { capabilities: { tools: {} } });
  server.registerTool(
    "whoami",
    { description: "Answers with the subject of the access token.", inputSchema: z.object({}) },
    async (_args, ctx) => {
      const sub = ctx.http?.authInfo?.extra?.sub;
      return { content: [{ type: "text", text: typeof sub === "string" ? sub : "" }] };
    },
  );
  server.registerTool(
    "echo",
    { description: "Answers with its text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

export async function startOAuthUpstream(options: OAuthUpstreamOptions = {}): Promise<OAuthUpstream> {
  const accounts = (options.accounts ?? DEFAULT_UPSTREAM_ACCOUNTS).map((a) => ({ ...a }));
  const accessTokenTtl = options.accessTokenTtl ?? 60;
  const refreshTokenTtl = options.refreshTokenTtl ?? 86_400;
  if (!Number.isSafeInteger(accessTokenTtl) || accessTokenTtl <= 0) throw new Error("startOAuthUpstream: accessTokenTtl must be a positive integer");
  const client = options.client === undefined ? undefined : { ...options.client, redirectUris: options.client.redirectUris.slice() };
  const allowRedirectUri = options.allowRedirectUri ?? loopbackOrHttps;

  let counts = zeroCounts();
  let tokenRequests: TokenRequestRecord[] = [];
  let seen = new Set<string>();
  /** Every JWT access token issued (by `jti`), so `revokeAccessTokens` can reach tokens the MCP server never saw. */
  const issued = new Set<string>();
  const revoked = new Set<string>();

  const key = await signingKey();
  // Both origins name each other (the AS's audience is the MCP URL, the MCP server's metadata names the issuer),
  // so both listen before either is configured.
  const as = await listenLoopback();
  const rs = await listenLoopback().catch(async (err: unknown) => {
    await as.close();
    throw err;
  });
  const issuer = as.origin;
  const url = `${rs.origin}/mcp`;
  const otherResource = `${rs.origin}/other-mcp`;
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(url));
  const store = memoryStore();

  const resourceServer = (indicator: string): ResourceServerInfo => {
    // Only the two known resources: any other indicator is `invalid_target`, as RFC 8707 wants.
    if (indicator !== url && indicator !== otherResource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
    return { scope: MCP_SCOPE, audience: indicator, accessTokenTTL: accessTokenTtl, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } };
  };

  const findAccount = async (_ctx: unknown, id: string): Promise<Account | undefined> => {
    const account = accounts.find((a) => a.sub === id);
    if (account === undefined) return undefined;
    return { accountId: account.sub, claims: async () => ({ sub: account.sub, email: account.email, email_verified: true }) };
  };

  let provider: Provider;
  try {
    provider = new Provider(issuer, {
      adapter: store.adapter,
      clients:
        client === undefined
          ? []
          : [
              {
                client_id: client.id,
                client_secret: client.secret,
                redirect_uris: client.redirectUris,
                grant_types: ["authorization_code", "refresh_token"],
                response_types: ["code"],
                token_endpoint_auth_method: "client_secret_basic",
              },
            ],
      // Public DCR clients (`none`, what MCP hosts register) and secret-holding ones alike.
      clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
      // `mcp` must be a known scope: DCR clients send `scope` in their metadata and oidc-provider refuses unknown ones.
      scopes: ["openid", "offline_access", MCP_SCOPE],
      claims: { openid: ["sub"], email: ["email", "email_verified"] },
      cookies: { keys: [randomBytes(32).toString("base64url")] },
      jwks: { keys: [key] },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: options.registration ?? true },
        // RFC 7009, for refresh tokens (a JWT access token is not stored, so revoking one here changes nothing; the
        // MCP side has `revokeAccessTokens` for that).
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          getResourceServerInfo: async (_ctx: unknown, indicator: string) => resourceServer(indicator),
        },
      },
      // The registration policy for redirect URIs. It runs only with a request context, i.e. at registration:
      // static clients and registered clients found again in storage are built without one.
      extraClientMetadata: {
        properties: ["redirect_uris"],
        validator: (ctx, key, value) => {
          if (ctx === undefined || key !== "redirect_uris" || !Array.isArray(value)) return;
          for (const uri of value) {
            const parsed = typeof uri === "string" ? URL.parse(uri) : null;
            if (parsed === null || !allowRedirectUri(parsed)) {
              // Its description starts with `redirect_uris`, so the error code is RFC 7591's `invalid_redirect_uri`.
              throw new errors.InvalidClientMetadata(`redirect_uris: ${String(uri)} is not allowed by this server`);
            }
          }
        },
      },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      // Always a refresh token for a client allowed the grant. oidc-provider's default wants `offline_access` granted,
      // and it silently drops that scope from an authorization request without `prompt=consent` (the SDK adds
      // `prompt=consent` itself whenever it asks for `offline_access`; a hand-made client may not).
      issueRefreshToken: (_ctx, c) => c.grantTypeAllowed("refresh_token"),
      rotateRefreshToken: true,
      // Refresh tokens outlive the sign-in session (the default ties them to it without `offline_access`).
      expiresWithSession: () => false,
      findAccount,
      clientBasedCORS: () => false,
      renderError: (ctx, out) => {
        ctx.type = "html";
        const rows = Object.entries(out).map(([k, v]) => `<p><b>${escapeHtml(k)}</b>: ${escapeHtml(String(v))}</p>`);
        ctx.body = page("Authorization server error", rows.join(""));
      },
      // Explicit lifetimes (each default warns when first used).
      ttl: {
        AccessToken: accessTokenTtl,
        AuthorizationCode: 60,
        IdToken: 300,
        Interaction: 600,
        Session: 3_600,
        Grant: refreshTokenTtl,
        RefreshToken: refreshTokenTtl,
      },
    });
    // oidc-provider checks a static client only at its first lookup: done here, not at the first sign-in.
    if (client !== undefined && (await provider.Client.find(client.id)) === undefined) {
      throw new Error(`client ${client.id} not registered`);
    }
  } catch (err) {
    await Promise.allSettled([as.close(), rs.close()]);
    const description = err instanceof Error && "error_description" in err ? `: ${String(err.error_description)}` : "";
    throw new Error(`startOAuthUpstream: ${err instanceof Error ? err.message : String(err)}${description}`, { cause: err });
  }

  const record = (ctx: ProviderContext, error?: Error): void => {
    const params = ctx.oidc?.params ?? {};
    const clientId = ctx.oidc?.client?.clientId ?? str(params.client_id);
    const resource = str(params.resource);
    const scope = str(params.scope);
    const code = error === undefined ? undefined : (str((error as { error?: unknown }).error) ?? error.message);
    tokenRequests.push({
      grantType: str(params.grant_type) ?? "",
      ...(clientId === undefined ? {} : { clientId }),
      ...(resource === undefined ? {} : { resource }),
      ...(scope === undefined ? {} : { scope }),
      ...(code === undefined ? {} : { error: code }),
    });
  };
  provider.on("grant.success", (ctx) => {
    record(ctx);
    const grantType = ctx.oidc?.params?.grant_type;
    if (grantType === "authorization_code") counts.tokenByCode++;
    if (grantType === "refresh_token") counts.tokenByRefresh++;
  });
  provider.on("grant.error", (ctx, error) => {
    record(ctx, error);
    counts.tokenErrors++;
  });
  provider.on("registration_create.success", () => {
    counts.registrations++;
  });
  provider.on("registration_create.error", () => {
    counts.registrationErrors++;
  });
  provider.on("server_error", () => {
    counts.serverErrors++;
  });
  // JWT access tokens are not stored, so this event is the only record of them.
  provider.on("access_token.issued", (token) => {
    issued.add(token.jti);
  });
  const oidc = provider.callback();

  as.setHandler(async (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    const step = INTERACTION_PATH.exec(path);
    if (step !== null) {
      return handleInteraction(provider, req, res, step[1] ?? "", step[2] ?? "", {
        title: "Sign in to the upstream",
        knows: (sub) => accounts.some((a) => a.sub === sub),
        onLogin: () => {
          counts.logins++;
        },
      });
    }
    // oidc-provider serves only the OIDC discovery document; its content is also valid RFC 8414 metadata, so the
    // RFC 8414 location (the first one MCP clients try) answers the same document.
    if (path === "/.well-known/oauth-authorization-server") req.url = "/.well-known/openid-configuration";
    if (path === "/auth") counts.authorize++;
    return oidc(req, res);
  });

  // ---- the MCP server ---------------------------------------------------------------------------------------

  // The MCP server fetches the AS's keys as a separate resource server would (cached after the first fetch).
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`), { timeoutDuration: JWKS_TIMEOUT_MS });
  const verifier: OAuthTokenVerifier = {
    async verifyAccessToken(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer,
          audience: url,
          typ: "at+jwt",
          algorithms: ["RS256"],
          requiredClaims: ["sub", "exp", "jti", "client_id"],
        }));
      } catch (err) {
        // The AS's keys not answering is the fixture's fault (500), not the token's.
        if (err instanceof joseErrors.JWKSTimeout) throw err;
        throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${err instanceof Error ? err.message : String(err)}`);
      }
      // jose accepts an `aud` array that merely contains the URL; a token for this server names it alone.
      if (payload.aud !== url) throw new OAuthError(OAuthErrorCode.InvalidToken, "Token audience is not this server");
      const jti = payload.jti ?? "";
      if (revoked.has(jti)) throw new OAuthError(OAuthErrorCode.InvalidToken, "Token revoked");
      const info: AuthInfo = {
        token,
        clientId: str(payload.client_id) ?? "",
        scopes: (str(payload.scope) ?? "").split(" ").filter(Boolean),
        // Checked again by verifyBearerToken, which refuses a token without it.
        ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
        resource: new URL(url),
        extra: { sub: payload.sub, jti },
      };
      return info;
    },
  };
  const bearer = { verifier, requiredScopes: [MCP_SCOPE], resourceMetadataUrl, expectedResource: new URL(url) };

  /** The bearer check: the verified token, or the 401 (403 for a token without `mcp`) to answer. */
  async function authenticate(request: Request): Promise<AuthInfo | Response> {
    const header = request.headers.get("authorization");
    const token = /^Bearer\s+(\S+)$/i.exec(header?.trim() ?? "")?.[1];
    if (token !== undefined) seen.add(token);
    if (header === null || header.trim() === "") {
      // No credentials at all: RFC 6750 3.1 says no error code then (the SDK's helper would add invalid_token).
      return Response.json(
        { error: "invalid_token", error_description: "Missing Authorization header" },
        { status: 401, headers: { "WWW-Authenticate": `Bearer resource_metadata="${resourceMetadataUrl}", scope="${MCP_SCOPE}"` } },
      );
    }
    try {
      return await verifyBearerToken(header, bearer);
    } catch (err) {
      return bearerAuthChallengeResponse(err, bearer);
    }
  }

  const protectedResource = {
    resource: url,
    authorization_servers: [issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "OAuth upstream fixture",
  };

  const modern = createMcpHandler(() => fixtureServer(), { legacy: "reject" });
  /** The 2025 leg: one sessionful transport (and server) per session. */
  const sessions = legacySessions(() => fixtureServer());

  async function mcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const body = method === "POST" ? await readBody(req) : undefined;
    if (body === null) return void res.writeHead(413, { "content-type": "text/plain" }).end("request too large");
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    const request = toRequest(req, body, aborted.signal, url);
    const auth = await authenticate(request);
    if (auth instanceof Response) {
      if (auth.status === 401) counts.mcpUnauthorized++;
      return writeResponse(res, auth);
    }
    counts.mcpRequests++;
    let parsedBody: unknown;
    if (body !== undefined) {
      try {
        parsedBody = JSON.parse(body.toString("utf8"));
      } catch {
        parsedBody = undefined;
      }
    }
    counts.mcpCalls += rpcMethods(parsedBody).filter((m) => m === "tools/call").length;
    const response = (await isLegacyRequest(request, parsedBody))
      ? await sessions.handle(request, parsedBody, auth)
      : await modern.fetch(request, { parsedBody, authInfo: auth });
    return writeResponse(res, response);
  }

  // Bounded requests on both listeners (answers, SSE streams included, are not limited by these).
  for (const server of [as.server, rs.server]) {
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
  }
  rs.setHandler(async (req, res) => {
    const path = new URL(req.url ?? "/", rs.origin).pathname;
    if (path === "/mcp") return mcp(req, res);
    if (path === new URL(resourceMetadataUrl).pathname) {
      if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, { allow: "GET, HEAD" }).end();
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*" });
      return void res.end(req.method === "HEAD" ? undefined : JSON.stringify(protectedResource));
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });

  return {
    url,
    issuer,
    resourceMetadataUrl,
    otherResource,
    accounts,
    client,
    login: (authorizeUrl, sub) => driveAuthorization(issuer, authorizeUrl, { sub }),
    deny: (authorizeUrl) => driveAuthorization(issuer, authorizeUrl, { deny: true }),
    counts: () => ({ ...counts }),
    tokenRequests: () => tokenRequests.map((r) => ({ ...r })),
    seenTokens: () => [...seen],
    revokeAccessTokens: () => {
      let fresh = 0;
      for (const jti of issued) {
        if (revoked.has(jti)) continue;
        revoked.add(jti);
        fresh++;
      }
      return fresh;
    },
    revokeRefreshTokens: () => store.drop("RefreshToken"),
    reset: () => {
      counts = zeroCounts();
      tokenRequests = [];
      seen = new Set();
    },
    close: async () => {
      await modern.close().catch(() => {});
      await sessions.closeAll();
      await Promise.all([as.close(), rs.close()]);
    },
  };
}

// ---- node:http ↔ fetch, the few lines the MCP side needs --------------------------------------------------------

/** The body, or null past {@link MAX_BODY_BYTES}. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
