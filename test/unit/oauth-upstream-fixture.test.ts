// The OAuth-protected upstream fixture (harness/oauth-upstream.ts) behaves like a hosted MCP server with its own
// authorization server: the 401 challenge and RFC 9728 document, RFC 8414 metadata, open DCR with a redirect URI
// policy, PKCE S256 required, JWT access tokens bound to the MCP URL, refresh with rotation. The real v2 SDK client
// drives the whole flow (401 → discovery → DCR or a preconfigured client → PKCE → token → tools/call), refreshes
// after a revocation and after expiry, and is refused with a token for another audience. Loopback only.
import { createHash, randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client, SdkHttpError, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { HostProvider } from "../shared/host-provider.ts";
import { refreshCredential, type UpstreamCredential } from "../../src/upstream/oauth-credential.ts";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { startOAuthUpstream, type OAuthUpstream } from "../../harness/oauth-upstream.ts";

/** A DCR client's callback (never fetched: `login()` answers the redirect to it). localhost:8787 is `wrangler dev`. */
const DCR_REDIRECT = "http://localhost:8787/oauth/upstream/callback";
const PRECONFIGURED = { id: "dynmcp-upstream", secret: "oauth-upstream-fixture-secret-not-secret", redirectUris: ["http://127.0.0.1:9/callback"] };
/** Each test finishes in well under this on loopback; a hang fails the test instead of stalling the run. */
const TEST_MS = 10_000;
const timeout = () => AbortSignal.timeout(5_000);

const open: Client[] = [];

function connectClient(up: OAuthUpstream, provider: HostProvider, mode: "legacy" | "auto" = "legacy") {
  const transport = new StreamableHTTPClientTransport(new URL(up.url), { authProvider: provider });
  const client = new Client({ name: "fixture-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  open.push(client);
  return { client, transport, connected: client.connect(transport) };
}

/**
 * The host's side of a first connection: the connect fails with the SDK's UnauthorizedError after it has handed
 * over the authorization URL; the test signs in as `sub`, finishes with the callback's parameters (`code`, `iss`)
 * and connects again. Answers the connected client and the authorization URL used.
 */
async function signIn(up: OAuthUpstream, provider: HostProvider, sub: string) {
  const first = connectClient(up, provider);
  await expect(first.connected).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizeUrl = provider.authorizations.at(-1);
  if (authorizeUrl === undefined) throw new Error("the SDK asked for no authorization");
  const callback = new URL(await up.login(authorizeUrl.href, sub));
  await first.transport.finishAuth(callback.searchParams);
  const second = connectClient(up, provider);
  await second.connected;
  return { client: second.client, authorizeUrl, callback };
}

async function callText(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

/** An authorization request by hand for the preconfigured client (PKCE S256 unless told otherwise). */
function manualAuthorization(up: OAuthUpstream, extra: Record<string, string | undefined> = {}) {
  const verifier = base64url(randomBytes(32));
  const url = new URL(`${up.issuer}/auth`);
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: PRECONFIGURED.id,
    redirect_uri: PRECONFIGURED.redirectUris[0],
    scope: "mcp",
    resource: up.url,
    state: base64url(randomBytes(16)),
    code_challenge: base64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return { url: url.href, verifier };
}

async function tokenRequest(up: OAuthUpstream, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${up.issuer}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${PRECONFIGURED.id}:${PRECONFIGURED.secret}`).toString("base64")}`,
    },
    body: new URLSearchParams(form),
    signal: timeout(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A code for the preconfigured client, redeemed: the token response. */
async function manualToken(up: OAuthUpstream, sub: string, resource: string) {
  const auth = manualAuthorization(up, { resource });
  const code = new URL(await up.login(auth.url, sub)).searchParams.get("code") ?? "";
  const redirect_uri = PRECONFIGURED.redirectUris[0] ?? "";
  return tokenRequest(up, { grant_type: "authorization_code", code, redirect_uri, code_verifier: auth.verifier, resource });
}

/** A 2025 `initialize` POSTed by hand, with this bearer token or none. */
const mcpPost = (up: OAuthUpstream, token?: string) =>
  fetch(up.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "by-hand", version: "1.0.0" } },
    }),
    signal: timeout(),
  });

let up: OAuthUpstream;

beforeAll(async () => {
  up = await startOAuthUpstream({ client: PRECONFIGURED });
}, 20_000);

afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => {});
});

afterAll(async () => {
  await up?.close();
});

describe("the resource server's challenge and documents", () => {
  it("answers 401 with resource_metadata and scope, and invalid_token only when a token was sent", async () => {
    up.reset();
    const bare = await mcpPost(up);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${up.resourceMetadataUrl}", scope="mcp"`);
    expect(up.resourceMetadataUrl).toBe(`${new URL(up.url).origin}/.well-known/oauth-protected-resource/mcp`);

    const bad = await mcpPost(up, "not-a-token");
    expect(bad.status).toBe(401);
    const challenge = bad.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${up.resourceMetadataUrl}"`);
    expect(challenge).toContain('scope="mcp"');
    expect(up.counts()).toMatchObject({ mcpUnauthorized: 2, mcpRequests: 0 });
    expect(up.seenTokens()).toEqual(["not-a-token"]);
  });

  it("serves the RFC 9728 document and the AS's RFC 8414 metadata on separate origins", async () => {
    const prm = await fetch(up.resourceMetadataUrl, { signal: timeout() });
    expect(prm.status).toBe(200);
    expect(await prm.json()).toMatchObject({ resource: up.url, authorization_servers: [up.issuer], scopes_supported: ["mcp"] });
    expect(new URL(up.issuer).origin).not.toBe(new URL(up.url).origin);

    const as = await fetch(`${up.issuer}/.well-known/oauth-authorization-server`, { signal: timeout() });
    expect(as.status).toBe(200);
    const metadata = (await as.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: up.issuer,
      authorization_endpoint: `${up.issuer}/auth`,
      token_endpoint: `${up.issuer}/token`,
      registration_endpoint: `${up.issuer}/reg`,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.scopes_supported).toContain("mcp");
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["none", "client_secret_basic"]));
  });

  it("registers loopback http and https redirect URIs, refuses plain http elsewhere", async () => {
    up.reset();
    const register = (redirect: string) =>
      fetch(`${up.issuer}/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }),
        signal: timeout(),
      });
    for (const ok of ["http://127.0.0.1:45678/cb", DCR_REDIRECT, "https://proxy.example/oauth/upstream/callback"]) {
      const res = await register(ok);
      expect(res.status, ok).toBe(201);
      expect(((await res.json()) as { redirect_uris: string[] }).redirect_uris).toEqual([ok]);
    }
    const refused = await register("http://proxy.example/callback");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_redirect_uri" });
    expect(up.counts()).toMatchObject({ registrations: 3, registrationErrors: 1 });
  });
});

describe("the SDK client against the fixture", () => {
  it(
    "401 → discovery → DCR → PKCE S256 with resource → token → whoami, one sub per user",
    async () => {
      up.reset();
      const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT });
      const { client, authorizeUrl, callback } = await signIn(up, provider, "alice");

      const asked = authorizeUrl.searchParams;
      expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${up.issuer}/auth`);
      expect(asked.get("code_challenge_method")).toBe("S256");
      expect(asked.get("resource")).toBe(up.url);
      // The challenge's scope, plus offline_access because the AS lists it and the client may refresh; the SDK then
      // adds prompt=consent itself (oidc-provider drops offline_access without it).
      expect(asked.get("scope")).toBe("mcp offline_access");
      expect(asked.get("prompt")).toBe("consent");
      expect(asked.get("client_id")).toBe(provider.client?.client_id);
      expect(callback.searchParams.get("iss")).toBe(up.issuer);

      expect(await callText(client, "whoami")).toBe("alice");
      expect(await callText(client, "echo", { text: "hello upstream" })).toBe("hello upstream");

      // The token: a JWT for exactly this server, scope mcp, with a refresh token beside it.
      const access = provider.stored?.access_token ?? "";
      expect(decodeProtectedHeader(access).typ).toBe("at+jwt");
      expect(decodeJwt(access)).toMatchObject({ iss: up.issuer, aud: up.url, sub: "alice", scope: "mcp", client_id: provider.client?.client_id });
      expect(provider.stored?.refresh_token).toEqual(expect.any(String));
      expect(up.seenTokens()).toContain(access);
      expect(up.tokenRequests()).toEqual([{ grantType: "authorization_code", clientId: provider.client?.client_id, resource: up.url }]);
      expect(up.counts()).toMatchObject({
        registrations: 1,
        authorize: 1,
        logins: 1,
        tokenByCode: 1,
        tokenByRefresh: 0,
        tokenErrors: 0,
        serverErrors: 0,
        mcpUnauthorized: 1,
        mcpCalls: 2,
      });

      // Another user through another host registration gets its own subject.
      const bob = await signIn(up, new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT }), "bob");
      expect(await callText(bob.client, "whoami")).toBe("bob");
      expect(up.counts()).toMatchObject({ registrations: 2, logins: 2, tokenByCode: 2 });
    },
    TEST_MS,
  );

  it(
    "refreshes after the upstream revokes its access tokens, with the refresh token rotated",
    async () => {
      const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT });
      const { client } = await signIn(up, provider, "alice");
      expect(await callText(client, "whoami")).toBe("alice");
      const before = { ...provider.stored };
      up.reset();

      expect(up.revokeAccessTokens()).toBeGreaterThan(0);
      // The revoked token now gets 401; the SDK refreshes and retries the call once.
      expect(await callText(client, "whoami")).toBe("alice");
      expect(up.counts()).toMatchObject({ tokenByRefresh: 1, tokenByCode: 0, mcpUnauthorized: 1, authorize: 0 });
      expect(up.tokenRequests()).toEqual([{ grantType: "refresh_token", clientId: provider.client?.client_id, resource: up.url }]);
      expect(provider.stored?.access_token).not.toBe(before.access_token);
      expect(provider.stored?.refresh_token).toEqual(expect.any(String));
      expect(provider.stored?.refresh_token).not.toBe(before.refresh_token);
      expect(up.seenTokens()).toEqual([before.access_token, provider.stored?.access_token]);

      // The rotated-out refresh token is dead; presenting it again revokes the whole grant (reuse detection), so the
      // next refresh fails too and the SDK falls back to a new authorization request.
      const reuse = await fetch(`${up.issuer}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: before.refresh_token ?? "",
          client_id: provider.client?.client_id ?? "",
        }),
        signal: timeout(),
      });
      expect(reuse.status).toBe(400);
      expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
      up.revokeAccessTokens();
      const asked = provider.authorizations.length;
      await expect(client.callTool({ name: "whoami", arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.authorizations.length).toBe(asked + 1);
      expect(up.counts().tokenErrors).toBe(2);
    },
    TEST_MS,
  );

  it(
    "refreshes an expired access token",
    async () => {
      const short = await startOAuthUpstream({ accessTokenTtl: 1 });
      try {
        const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT });
        const { client } = await signIn(short, provider, "bob");
        expect(await callText(client, "whoami")).toBe("bob");
        const first = provider.stored?.access_token ?? "";
        const exp = decodeJwt(first).exp ?? 0;
        expect(exp - (decodeJwt(first).iat ?? 0)).toBe(1);
        const refreshes = short.counts().tokenByRefresh;
        // Past `exp` (whole seconds) the MCP server refuses the token: 401, refresh, retry.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 1_100));
        expect(await callText(client, "whoami")).toBe("bob");
        expect(short.counts().tokenByRefresh).toBe(refreshes + 1);
        expect(provider.stored?.access_token).not.toBe(first);
      } finally {
        await short.close();
      }
    },
    TEST_MS,
  );

  it(
    "refuses a token issued for another audience",
    async () => {
      up.reset();
      // The AS issues it (the resource is one it knows), signed with the same key: only the audience is wrong.
      const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT,  resource: up.otherResource });
      const first = connectClient(up, provider);
      await expect(first.connected).rejects.toBeInstanceOf(UnauthorizedError);
      const authorizeUrl = provider.authorizations.at(-1);
      expect(authorizeUrl?.searchParams.get("resource")).toBe(up.otherResource);
      await first.transport.finishAuth(new URL(await up.login(authorizeUrl?.href ?? "", "alice")).searchParams);
      expect(decodeJwt(provider.stored?.access_token ?? "").aud).toBe(up.otherResource);

      // 401, one refresh (still for the other audience), 401 again: the SDK gives up.
      const second = connectClient(up, provider);
      const error: unknown = await second.connected.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(SdkHttpError);
      expect((error as SdkHttpError).data?.status).toBe(401);
      expect(up.counts()).toMatchObject({ tokenByCode: 1, tokenByRefresh: 1, mcpRequests: 0, mcpUnauthorized: 3 });

      // The same by hand, with the challenge's error.
      const other = await manualToken(up, "alice", up.otherResource);
      expect(other.status).toBe(200);
      const res = await mcpPost(up, String(other.body.access_token));
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      // An unknown resource is refused by the AS itself.
      const unknown = new URL(await up.login(manualAuthorization(up, { resource: "https://elsewhere.test/mcp" }).url, "alice"));
      expect(unknown.searchParams.get("error")).toBe("invalid_target");
    },
    TEST_MS,
  );

  it(
    "uses a preconfigured confidential client without registering",
    async () => {
      up.reset();
      const redirect = PRECONFIGURED.redirectUris[0] ?? "";
      // Stamped with the issuer, as a host stores a preconfigured client (without it the SDK warns, SEP-2352).
      const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: redirect, 
        client: { client_id: PRECONFIGURED.id, client_secret: PRECONFIGURED.secret, issuer: up.issuer },
      });
      const { client, authorizeUrl } = await signIn(up, provider, "bob");
      expect(authorizeUrl.searchParams.get("client_id")).toBe(PRECONFIGURED.id);
      expect(await callText(client, "whoami")).toBe("bob");
      expect(up.counts()).toMatchObject({ registrations: 0, tokenByCode: 1, tokenErrors: 0 });
      expect(up.tokenRequests()).toEqual([{ grantType: "authorization_code", clientId: PRECONFIGURED.id, resource: up.url }]);
      // Its refresh works too (the secret is sent again).
      up.revokeAccessTokens();
      expect(await callText(client, "whoami")).toBe("bob");
      expect(up.counts()).toMatchObject({ tokenByRefresh: 1, tokenErrors: 0 });
    },
    TEST_MS,
  );

  it(
    "serves a 2026-era client through the same gate",
    async () => {
      const provider = new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT });
      await signIn(up, provider, "alice");
      up.reset();
      const modern = connectClient(up, provider, "auto");
      await modern.connected;
      expect(modern.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(await callText(modern.client, "whoami")).toBe("alice");
      expect(up.counts()).toMatchObject({ mcpUnauthorized: 0, mcpCalls: 1 });

      // With the refresh tokens gone, a revoked access token can no longer be renewed: the refresh is invalid_grant.
      expect(up.revokeRefreshTokens()).toBeGreaterThan(0);
      up.revokeAccessTokens();
      await expect(modern.client.callTool({ name: "whoami", arguments: {} })).rejects.toBeInstanceOf(UnauthorizedError);
      expect(up.tokenRequests().at(-1)).toMatchObject({ grantType: "refresh_token", error: "invalid_grant" });
    },
    TEST_MS,
  );
});

describe("the authorization server's refusals", () => {
  it("requires PKCE S256 and checks the verifier", async () => {
    up.reset();
    const none = new URL(await up.login(manualAuthorization(up, { code_challenge: undefined, code_challenge_method: undefined }).url, "alice"));
    expect(none.searchParams.get("error")).toBe("invalid_request");
    const plain = new URL(await up.login(manualAuthorization(up, { code_challenge: "x".repeat(43), code_challenge_method: "plain" }).url, "alice"));
    expect(plain.searchParams.get("error")).toBe("invalid_request");

    const auth = manualAuthorization(up);
    const code = new URL(await up.login(auth.url, "alice")).searchParams.get("code") ?? "";
    const redirect_uri = PRECONFIGURED.redirectUris[0] ?? "";
    const code_verifier = base64url(randomBytes(32));
    const wrong = await tokenRequest(up, { grant_type: "authorization_code", code, redirect_uri, code_verifier, resource: up.url });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(up.counts()).toMatchObject({ tokenErrors: 1, tokenByCode: 0 });

    const ok = await manualToken(up, "alice", up.url);
    expect(ok.status).toBe(200);
    // A refresh token even without offline_access asked for.
    expect(ok.body).toMatchObject({ token_type: "Bearer", scope: "mcp", expires_in: 60, refresh_token: expect.any(String) });
    const res = await mcpPost(up, String(ok.body.access_token));
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toEqual(expect.any(String));
    await res.body?.cancel();
    expect(up.counts()).toMatchObject({ mcpRequests: 1, mcpUnauthorized: 0 });
  });

  it("revokes a refresh token through RFC 7009", async () => {
    up.reset();
    const issued = await manualToken(up, "bob", up.url);
    const refresh_token = String(issued.body.refresh_token);
    const basic = `Basic ${Buffer.from(`${PRECONFIGURED.id}:${PRECONFIGURED.secret}`).toString("base64")}`;
    const revoked = await fetch(`${up.issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
      body: new URLSearchParams({ token: refresh_token, token_type_hint: "refresh_token" }),
      signal: timeout(),
    });
    expect(revoked.status).toBe(200);
    const refused = await tokenRequest(up, { grant_type: "refresh_token", refresh_token });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("invalid_grant");
    expect(up.counts()).toMatchObject({ tokenByCode: 1, tokenByRefresh: 0, tokenErrors: 1 });
  });

  it(
    "without DCR, offers no registration endpoint and the SDK needs a preconfigured client",
    async () => {
      const closed = await startOAuthUpstream({ registration: false });
      try {
        const discovery = await fetch(`${closed.issuer}/.well-known/oauth-authorization-server`, { signal: timeout() });
        const metadata = (await discovery.json()) as Record<string, unknown>;
        expect(metadata.registration_endpoint).toBeUndefined();
        const attempt = connectClient(closed, new HostProvider({ name: "oauth-upstream-fixture test", redirectUri: DCR_REDIRECT }));
        await expect(attempt.connected).rejects.toThrow(/dynamic client registration/);
        expect(closed.counts()).toMatchObject({ registrations: 0, authorize: 0, mcpUnauthorized: 1 });
      } finally {
        await closed.close();
      }
    },
    TEST_MS,
  );

  it("cancels a sign-in and refuses unknown accounts", async () => {
    const denied = new URL(await up.deny(manualAuthorization(up).url));
    expect(denied.searchParams.get("error")).toBe("access_denied");
    await expect(up.login(manualAuthorization(up).url, "mallory")).rejects.toThrow(/No account "mallory"/);
  });
});

describe("refreshCredential (src/upstream/oauth-credential.ts) against the fixture's authorization server", () => {
  /** A credential as the connect callback stores it, from a host's tokens after a real sign-in. */
  async function credentialFor(provider: HostProvider, sub: string, client: { id: string; secret?: string; method: "none" | "client_secret_basic" }) {
    await signIn(up, provider, sub);
    const metadata = (await (await fetch(`${up.issuer}/.well-known/openid-configuration`, { signal: timeout() })).json()) as { token_endpoint: string };
    const tokens = provider.stored!;
    return {
      issuer: up.issuer,
      resource: up.url,
      tokenEndpoint: metadata.token_endpoint,
      clientId: client.id,
      ...(client.secret === undefined ? {} : { clientSecret: client.secret }),
      authMethod: client.method,
      accessToken: tokens.access_token,
      ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
      expiresAt: Date.now() + (tokens.expires_in ?? 60) * 1000,
      connectedAt: new Date().toISOString(),
    } satisfies UpstreamCredential;
  }

  it(
    "refreshes a dynamically registered client's tokens (rotated), sending the resource; a refused grant says revoked",
    async () => {
      const provider = new HostProvider({ name: "credential test", redirectUri: DCR_REDIRECT });
      const before = up.counts().tokenByRefresh;
      const credential = await credentialFor(provider, "alice", { id: "", method: "none" });
      credential.clientId = provider.client!.client_id;
      const fresh = await refreshCredential(credential, { allowPrivate: true });
      expect(up.counts().tokenByRefresh).toBe(before + 1);
      expect(fresh.accessToken).not.toBe(credential.accessToken);
      expect(fresh.refreshToken).not.toBe(credential.refreshToken);
      expect(up.tokenRequests().at(-1)).toMatchObject({ grantType: "refresh_token", resource: up.url });
      // The new token works at the MCP server; the rotated-out refresh token is refused as a revoked grant.
      expect(decodeJwt(fresh.accessToken)["sub"]).toBe("alice");
      await expect(refreshCredential(credential, { allowPrivate: true })).rejects.toMatchObject({ name: "RefreshError", revoked: true });
      // Under a policy without private addresses the token endpoint on loopback is never asked.
      const asked = up.counts().tokenByRefresh + up.counts().tokenErrors;
      await expect(refreshCredential(fresh, { allowPrivate: false })).rejects.toMatchObject({ name: "RefreshError", revoked: false });
      expect(up.counts().tokenByRefresh + up.counts().tokenErrors).toBe(asked);
    },
    TEST_MS,
  );

  it(
    "authenticates a configured confidential client with Basic, its id sent as it is",
    async () => {
      const provider = new HostProvider({
        name: "credential test",
        redirectUri: PRECONFIGURED.redirectUris[0]!,
        client: { client_id: PRECONFIGURED.id, client_secret: PRECONFIGURED.secret },
      });
      const credential = await credentialFor(provider, "bob", { id: PRECONFIGURED.id, secret: PRECONFIGURED.secret, method: "client_secret_basic" });
      const fresh = await refreshCredential(credential, { allowPrivate: true });
      expect(decodeJwt(fresh.accessToken)["sub"]).toBe("bob");
      expect(up.tokenRequests().at(-1)).toMatchObject({ grantType: "refresh_token", clientId: PRECONFIGURED.id });
    },
    TEST_MS,
  );
});
