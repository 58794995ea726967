// Unauthenticated requests must not exhaust the Worker's memory or the team's storage: every body is read through one
// limited reader that stops at the route's limit whatever Content-Length says (the OAuth library's endpoints get the
// bytes already read), a registration is small and bounded field by field, a consent page stores nothing, and a
// connect link's member sign-in stores nothing for a link the proxy did not make, holds only small fields, and one
// account's pending flows never push out another's. The router is called directly (app.fetch), so the body stream a
// test hands it is the one the route reads, and the test counts every byte pulled from it.
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/edge/app.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { CONNECT_TTL_MS } from "../../src/upstream/oauth-credential.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { pageText } from "../shared/oauth-driver.ts";
import { index, link, oauthTeam, withIdp } from "./upstream-oauth-helpers.ts";
import { seedTeam } from "./helpers.ts";
import { pkce } from "./oauth-helpers.ts";

const HOST_REDIRECT = "http://127.0.0.1:1/callback";
const withOAuth = { ...env, OAUTH_HOSTS: "on" };
const proxy = (request: Request, bindings: Record<string, unknown> = withOAuth) => app.fetch(request, bindings as unknown as typeof env, createExecutionContext());

/** A body of `total` bytes in 1 KiB chunks, made as it is pulled, counting what was pulled. */
function countedBody(total: number, byte = 0x61): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(1024).fill(byte);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

const post = (url: string, body: ReadableStream<Uint8Array> | string, headers: Record<string, string>, method = "POST"): Request =>
  new Request(url, { method, headers, body, duplex: "half" } as RequestInit);

/** Every key of OAUTH_KV (the library's clients, grants, tokens, transactions). */
async function oauthKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown> = await env.OAUTH_KV!.list(cursor ? { cursor } : {});
    keys.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return keys;
}

const register = (team: string, metadata: Record<string, unknown>) =>
  proxy(post(`${BASE}/t/${team}/oauth/register`, JSON.stringify(metadata), { "content-type": "application/json" }));
const hostMetadata = { redirect_uris: [HOST_REDIRECT], token_endpoint_auth_method: "none", client_name: "Test Host", grant_types: ["authorization_code", "refresh_token"] };

/** What the team's index keeps of pending member sign-ins: state → the flow. */
const pendingSignIns = (team: string) =>
  runInDurableObject(index(team), async (_o, state) => state.storage.list<{ accountTag: string; handle: string }>({ prefix: "member-sign-in:" }));

const signInPost = (team: string, server: string, body: string | ReadableStream<Uint8Array>) =>
  proxy(post(`${BASE}/t/${team}/connect/${server}/sign-in`, body, { "content-type": "application/x-www-form-urlencoded" }));
const handleOf = (connectUrl: string) => new URL(connectUrl).searchParams.get("h")!;

describe("bodies are read within their route's limit", () => {
  it("refuses a body over the limit after reading no more than the limit, with or without a Content-Length, on every route", async () => {
    const token = await seedTeam("bd-routes", { mcp: { a: { url: "https://example.com/mcp" } } });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const routes: Array<{ name: string; url: string; headers: Record<string, string>; limit: number; method?: string; bindings?: Record<string, unknown> }> = [
      { name: "authorize", url: `${BASE}/t/bd-routes/oauth/authorize`, headers: form, limit: 4096 },
      { name: "connect sign-in", url: `${BASE}/t/bd-routes/connect/a/sign-in`, headers: form, limit: 4096 },
      { name: "token", url: `${BASE}/t/bd-routes/oauth/token`, headers: form, limit: 8192 },
      { name: "register", url: `${BASE}/t/bd-routes/oauth/register`, headers: { "content-type": "application/json" }, limit: 8192 },
      { name: "admin", url: `${BASE}/admin/teams/bd-routes/config`, headers: { "content-type": "application/json", authorization: "Bearer test-admin-token" }, limit: 1024 * 1024, method: "PUT" },
      {
        name: "mcp",
        url: `${BASE}/t/bd-routes/mcp`,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        limit: 65536,
        bindings: { ...withOAuth, MAX_BODY_BYTES: "65536" },
      },
    ];
    for (const route of routes) {
      const total = 2 * route.limit + 1024 * 1024;
      for (const declared of [undefined, "100"]) {
        const body = countedBody(total);
        const headers = declared === undefined ? route.headers : { ...route.headers, "content-length": declared };
        const res = await proxy(post(route.url, body.stream, headers, route.method), route.bindings);
        const what = `${route.name}, Content-Length ${declared ?? "absent"}`;
        expect(res.status, what).toBe(413);
        // The limit and the chunk that crossed it, never the rest.
        expect(body.pulled(), what).toBeLessThanOrEqual(route.limit + 1024);
      }
      // A Content-Length over the limit is refused before anything is read.
      const declaredLarge = countedBody(total);
      const res = await proxy(post(route.url, declaredLarge.stream, { ...route.headers, "content-length": String(total) }, route.method), route.bindings);
      expect(res.status, `${route.name}, large Content-Length`).toBe(413);
      expect(declaredLarge.pulled(), `${route.name}, large Content-Length`).toBe(0);
    }
  });
});

describe("dynamic client registration is small and bounded", () => {
  it("refuses a large document, a long name, too many redirect URIs or a long localized name, storing nothing; a host's own registration lives 60 days", async () => {
    await seedTeam("bd-register", { mcp: { a: { url: "https://example.com/mcp" } } });
    const before = await oauthKeys();
    const refusals = [
      { metadata: { ...hostMetadata, client_name: "x".repeat(1024 * 1024) }, status: 413, error: "invalid_request" },
      { metadata: { ...hostMetadata, client_name: "x".repeat(7000) }, status: 400, error: "invalid_client_metadata" },
      { metadata: { ...hostMetadata, redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${i + 1}/callback`) }, status: 400, error: "invalid_client_metadata" },
      { metadata: { ...hostMetadata, "client_name#fr": "y".repeat(1000) }, status: 400, error: "invalid_client_metadata" },
    ];
    for (const { metadata, status, error } of refusals) {
      const res = await register("bd-register", metadata);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: string }).error).toBe(error);
    }
    expect(await oauthKeys()).toEqual(before);

    const ok = await register("bd-register", { ...hostMetadata, token_endpoint_auth_method: "client_secret_basic" });
    expect(ok.status).toBe(201);
    const answer = (await ok.json()) as { client_id: string; client_id_issued_at: number; client_secret_expires_at: number };
    expect(answer.client_secret_expires_at - answer.client_id_issued_at).toBe(60 * 24 * 3600);
    const stored = (await env.OAUTH_KV!.list({ prefix: `client:${answer.client_id}` })).keys[0];
    expect(stored?.expiration).toBeGreaterThan(Date.now() / 1000 + 59 * 24 * 3600);
    expect(stored?.expiration).toBeLessThanOrEqual(Date.now() / 1000 + 60 * 24 * 3600 + 60);
  });
});

describe("a consent page stores nothing", () => {
  it("answers 20 authorization requests with consent pages without writing to OAUTH_KV; an overlong request is refused", async () => {
    await seedTeam("bd-consent", { mcp: { a: { url: "https://example.com/mcp" } } });
    await withIdp("bd-consent");
    const registered = await register("bd-consent", hostMetadata);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const { challenge } = await pkce();
    const authorize = (state: string) => {
      const url = new URL(`${BASE}/t/bd-consent/oauth/authorize`);
      const params = { response_type: "code", client_id: clientId, redirect_uri: HOST_REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state, scope: "mcp", resource: `${BASE}/t/bd-consent/mcp` };
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return url.href;
    };
    const before = await oauthKeys();
    for (let i = 0; i < 20; i++) {
      const page = await proxy(new Request(authorize(`state-${i}`)));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('name="handle"');
    }
    expect(await oauthKeys()).toEqual(before);
    // A request whose handle would not fit the consent form goes back to the host, refused.
    const long = await proxy(new Request(authorize("s".repeat(4000))));
    expect(long.status).toBe(302);
    const back = new URL(long.headers.get("location")!);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(await oauthKeys()).toEqual(before);
  });
});

describe("a connect link's member sign-in", () => {
  it("stores nothing in the team's index for a forged, huge or expired handle, another server's, or one of a server without members' own accounts", async () => {
    await oauthTeam("bd-forged", { mode: "per_user" }, { shared: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "shared" } } });
    await withIdp("bd-forged");
    const bob = await userIdFor("bd-forged", env.IDP_ISSUER, "bob");
    const real = handleOf(await link("bd-forged", bob));
    const forged = real.slice(0, -4) + (real.endsWith("AAAA") ? "BBBB" : "AAAA");
    const expired = handleOf(await link("bd-forged", bob, "up", Date.now() - CONNECT_TTL_MS - 60_000));
    const attempts: Array<{ server: string; body: string | ReadableStream<Uint8Array>; status: number; says: string }> = [
      { server: "up", body: new URLSearchParams({ h: forged }).toString(), status: 400, says: "This is not a connect link of this server" },
      { server: "up", body: countedBody(1536 * 1024).stream, status: 413, says: "The sign-in form is over 4096 bytes" },
      { server: "up", body: new URLSearchParams({ h: "x".repeat(3000) }).toString(), status: 400, says: "This is not a connect link of this server" },
      { server: "up", body: new URLSearchParams({ h: expired }).toString(), status: 400, says: "This connect link has expired" },
      { server: "nosuch", body: new URLSearchParams({ h: real }).toString(), status: 400, says: "This is not a connect link of this server" },
      { server: "shared", body: new URLSearchParams({ h: handleOf(await link("bd-forged", "shared", "shared")) }).toString(), status: 400, says: "does not connect each member's own account" },
    ];
    for (const attempt of attempts) {
      const res = await signInPost("bd-forged", attempt.server, attempt.body);
      expect(res.status).toBe(attempt.status);
      expect(pageText(await res.text())).toContain(attempt.says);
    }
    expect((await pendingSignIns("bd-forged")).size).toBe(0);
    // The member's own link starts a sign-in: one small flow, no larger than what the route puts there.
    const started = await signInPost("bd-forged", "up", new URLSearchParams({ h: real }).toString());
    expect(started.status).toBe(302);
    const flows = [...(await pendingSignIns("bd-forged")).values()];
    expect(flows.length).toBe(1);
    expect(JSON.stringify(flows[0]).length).toBeLessThan(512);
  });

  it("keeps at most five pending sign-ins per account, so a flood from one link never pushes out another member's", async () => {
    await oauthTeam("bd-flood", { mode: "per_user" });
    await withIdp("bd-flood");
    const [alice, mallory] = await Promise.all([userIdFor("bd-flood", env.IDP_ISSUER, "alice"), userIdFor("bd-flood", env.IDP_ISSUER, "mallory")]);
    const aliceHandle = handleOf(await link("bd-flood", alice));
    expect((await signInPost("bd-flood", "up", new URLSearchParams({ h: aliceHandle }).toString())).status).toBe(302);
    // Mallory holds one valid link of her own and posts its sign-in again and again.
    const malloryHandle = handleOf(await link("bd-flood", mallory));
    for (let i = 0; i < 30; i++) {
      expect((await signInPost("bd-flood", "up", new URLSearchParams({ h: malloryHandle }).toString())).status).toBe(302);
    }
    const flows = [...(await pendingSignIns("bd-flood")).values()];
    expect(flows.filter((f) => f.handle === aliceHandle).length).toBe(1);
    expect(flows.filter((f) => f.handle === malloryHandle).length).toBe(5);
  });

  it("keeps at most five pending connects per account and server; another account's stay", async () => {
    const team = "bd-connects";
    const tx = (account: string, server = "up") => ({
      server,
      account,
      resource: "https://example.com/mcp",
      issuer: "https://as.example.com",
      tokenEndpoint: "https://as.example.com/token",
      clientId: "client",
      authMethod: "none" as const,
      verifier: "v".repeat(43),
      redirectUri: `${BASE}/oauth/upstream/callback`,
      expiresAt: Date.now() + CONNECT_TTL_MS,
    });
    await index(team).beginConnect(team, `${team}.alice-0`, tx("alice"));
    await index(team).beginConnect(team, `${team}.alice-other`, tx("alice", "other"));
    for (let i = 0; i < 12; i++) await index(team).beginConnect(team, `${team}.mallory-${i}`, tx("mallory"));
    const kept = await runInDurableObject(index(team), async (_o, state) => [...(await state.storage.list<{ account: string; server: string }>({ prefix: "connect:" })).values()]);
    expect(kept.filter((t) => t.account === "alice").length).toBe(2);
    expect(kept.filter((t) => t.account === "mallory").length).toBe(5);
  });
});
