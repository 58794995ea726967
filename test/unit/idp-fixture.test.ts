// The test IdP (harness/idp.ts) behaves like the OpenID Connect provider the proxy will sign users in with: its
// discovery document, a full authorization code flow with PKCE S256 driven by plain fetch and the headless login,
// an ID token that verifies against its JWKS and carries email and groups, and the refusals a relying party must be
// able to see (wrong verifier, wrong secret, no PKCE, a cancelled sign-in, an unknown account). Loopback only.
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { DEFAULT_ACCOUNTS, startIdp, type Idp } from "../../harness/idp.ts";

const REDIRECT = "http://127.0.0.1:9/t/acme/oauth/callback";
/** Every request of these tests is answered at once on loopback; a hang fails the test instead of stalling it. */
const timeout = () => AbortSignal.timeout(5_000);

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint: string;
  code_challenge_methods_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  scopes_supported: string[];
  claims_supported: string[];
  response_types_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
}

interface TokenResponse {
  access_token?: string;
  id_token?: string;
  token_type?: string;
  error?: string;
}

let idp: Idp;
let discovery: Discovery;

beforeAll(async () => {
  idp = await startIdp({ redirectUris: [REDIRECT] });
  const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`, { signal: timeout() });
  expect(res.status).toBe(200);
  discovery = (await res.json()) as Discovery;
}, 20_000);

afterAll(async () => {
  await idp?.close();
});

const base64url = (bytes: Buffer) => bytes.toString("base64url");

/** One authorization request as a relying party builds it: PKCE S256, state and nonce. */
function authorization(extra: Record<string, string> = {}) {
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(16));
  const nonce = base64url(randomBytes(16));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: idp.client.id,
    redirect_uri: REDIRECT,
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: base64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
    ...extra,
  }).toString();
  return { url: url.href, verifier, state, nonce };
}

/** Redeems a code at the token endpoint, the client authenticated with Basic (default) or in the body. */
async function redeem(
  code: string,
  verifier: string,
  auth: { method?: "basic" | "post"; secret?: string } = {},
): Promise<{ status: number; body: TokenResponse }> {
  const secret = auth.secret ?? idp.client.secret;
  const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier });
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (auth.method === "post") {
    form.set("client_id", idp.client.id);
    form.set("client_secret", secret);
  } else {
    const pair = `${encodeURIComponent(idp.client.id)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
  }
  const res = await fetch(discovery.token_endpoint, { method: "POST", headers, body: form, signal: timeout() });
  return { status: res.status, body: (await res.json()) as TokenResponse };
}

/** Signs in as `sub` and answers the callback's parameters, checked against the request's state and the issuer. */
async function signIn(sub: string) {
  const request = authorization();
  const callback = new URL(await idp.login(request.url, sub));
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
  expect(callback.searchParams.get("error")).toBeNull();
  expect(callback.searchParams.get("state")).toBe(request.state);
  expect(callback.searchParams.get("iss")).toBe(idp.issuer);
  const code = callback.searchParams.get("code");
  expect(code).toEqual(expect.any(String));
  return { ...request, code: code ?? "" };
}

describe("the test IdP", () => {
  it("publishes an OpenID Connect discovery document with its endpoints", () => {
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(discovery.issuer).toBe(idp.issuer);
    for (const endpoint of ["authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint"] as const) {
      expect(discovery[endpoint].startsWith(`${idp.issuer}/`), endpoint).toBe(true);
    }
    expect(discovery.code_challenge_methods_supported).toEqual(["S256"]);
    expect(discovery.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post"]),
    );
    expect(discovery.scopes_supported).toEqual(expect.arrayContaining(["openid", "email", "profile"]));
    expect(discovery.claims_supported).toEqual(expect.arrayContaining(["sub", "email", "email_verified", "groups"]));
    expect(discovery.response_types_supported).toContain("code");
    expect(discovery.authorization_response_iss_parameter_supported).toBe(true);
  });

  it("shows a browser a sign-in form with a username field", async () => {
    const res = await fetch(authorization().url, { redirect: "manual", signal: timeout() });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location") ?? "", idp.issuer);
    expect(location.pathname).toMatch(/^\/interaction\/[\w-]+$/);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const form = await fetch(location, { headers: { cookie }, signal: timeout() });
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain(`<form method="post" action="${location.pathname}/login">`);
    expect(html).toContain('<input name="login"');
    expect(html).toContain('type="submit"');
  });

  it("runs a code flow with PKCE S256 to an ID token with email, email_verified and groups", async () => {
    idp.reset();
    const bob = DEFAULT_ACCOUNTS.find((a) => a.groups !== undefined);
    expect(bob?.email.endsWith("@other.test")).toBe(true);
    const { code, verifier, nonce } = await signIn(bob?.sub ?? "");
    const { status, body } = await redeem(code, verifier);
    expect(status).toBe(200);
    expect(body.token_type).toBe("Bearer");
    expect(body.access_token).toEqual(expect.any(String));

    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri), { timeoutDuration: 5_000 });
    const { payload, protectedHeader } = await jwtVerify(body.id_token ?? "", jwks, {
      issuer: idp.issuer,
      audience: idp.client.id,
    });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({
      sub: bob?.sub,
      email: bob?.email,
      email_verified: true,
      groups: bob?.groups,
      nonce,
    });
    expect(idp.counts()).toMatchObject({ authorize: 1, logins: 1, token: 1, tokenErrors: 0, serverErrors: 0 });

    // The code is single use: a second redemption is refused.
    expect((await redeem(code, verifier)).body.error).toBe("invalid_grant");
  });

  it("gives an account without groups no groups claim, and accepts the secret in the body", async () => {
    const alice = DEFAULT_ACCOUNTS.find((a) => a.email.endsWith("@example.com"));
    const { code, verifier } = await signIn(alice?.sub ?? "");
    const { status, body } = await redeem(code, verifier, { method: "post" });
    expect(status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri), { timeoutDuration: 5_000 });
    const { payload } = await jwtVerify(body.id_token ?? "", jwks, { issuer: idp.issuer, audience: idp.client.id });
    expect(payload).toMatchObject({ sub: alice?.sub, email: alice?.email, email_verified: true });
    expect(payload).not.toHaveProperty("groups");
  });

  it("refuses a wrong PKCE verifier", async () => {
    idp.reset();
    const { code } = await signIn("alice");
    const { status, body } = await redeem(code, base64url(randomBytes(32)));
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_grant");
    expect(body.access_token).toBeUndefined();
    expect(idp.counts()).toMatchObject({ token: 1, tokenErrors: 1 });
  });

  it("refuses a wrong client secret, in the header and in the body", async () => {
    for (const method of ["basic", "post"] as const) {
      const { code, verifier } = await signIn("alice");
      const { status, body } = await redeem(code, verifier, { method, secret: "not-the-secret" });
      expect(status, method).toBe(401);
      expect(body.error, method).toBe("invalid_client");
      expect(body.id_token).toBeUndefined();
    }
  });

  it("refuses an authorization request without a PKCE challenge", async () => {
    const { url } = authorization();
    const bare = new URL(url);
    bare.searchParams.delete("code_challenge");
    bare.searchParams.delete("code_challenge_method");
    const res = await fetch(bare, { redirect: "manual", signal: timeout() });
    const callback = new URL(res.headers.get("location") ?? "", idp.issuer);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
    expect(callback.searchParams.get("error")).toBe("invalid_request");
  });

  it("sends a cancelled sign-in back with access_denied, and refuses an unknown account", async () => {
    const request = authorization();
    const callback = new URL(await idp.deny(request.url));
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("state")).toBe(request.state);
    await expect(idp.login(authorization().url, "mallory")).rejects.toThrow(/No account "mallory"/);
  });
});

describe("the test IdP, configured", () => {
  it("refuses a client oidc-provider would refuse, at start", async () => {
    await expect(startIdp({ redirectUris: ["not a url"] })).rejects.toThrow(/redirect_uris/);
  });

  it("takes the caller's accounts, client and groups claim", async () => {
    const custom = await startIdp({
      accounts: [{ sub: "carol", email: "carol@corp.test", email_verified: false, groups: ["admins", "ops"] }],
      clientId: "other-client",
      clientSecret: "other-secret",
      redirectUris: [REDIRECT],
      groupsClaim: "roles",
    });
    try {
      const meta = (await (await fetch(`${custom.issuer}/.well-known/openid-configuration`, { signal: timeout() })).json()) as Discovery;
      const verifier = base64url(randomBytes(32));
      const url = new URL(meta.authorization_endpoint);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: "other-client",
        redirect_uri: REDIRECT,
        scope: "openid email profile",
        state: "s1",
        code_challenge: base64url(createHash("sha256").update(verifier).digest()),
        code_challenge_method: "S256",
      }).toString();
      const code = new URL(await custom.login(url.href, "carol")).searchParams.get("code") ?? "";
      const res = await fetch(meta.token_endpoint, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from("other-client:other-secret").toString("base64")}` },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier }),
        signal: timeout(),
      });
      expect(res.status).toBe(200);
      const { id_token } = (await res.json()) as TokenResponse;
      const { payload } = await jwtVerify(id_token ?? "", createRemoteJWKSet(new URL(meta.jwks_uri)), {
        issuer: custom.issuer,
        audience: "other-client",
      });
      expect(payload).toMatchObject({ sub: "carol", email: "carol@corp.test", email_verified: false, roles: ["admins", "ops"] });
      expect(payload).not.toHaveProperty("groups");
    } finally {
      await custom.close();
    }
  }, 20_000);
});
