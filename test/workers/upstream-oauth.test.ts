// Calls to OAuth-protected upstreams through sessions (issue 16, docs/oauth.md 3.3): the first call says an account is
// needed (an admin's for a shared server, the member's own link for a per_user one), the connect completes, calls
// succeed with the account's token; the vault refreshes ahead of expiry and after the upstream's 401; a deleted user's
// tokens are gone; both protocol eras; and no token of the upstream's anywhere but its sealed record (responses, log
// lines, KV, session storage). The upstream and its authorization server: harness/oauth-upstream.ts (global-setup).
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from "@modelcontextprotocol/client";
import { userIdFor } from "../../src/auth/user.ts";
import { sealSecret, type SealedSecret } from "../../src/lib/secrets.ts";
import type { UpstreamCredential } from "../../src/upstream/oauth-credential.ts";
import { CookieJar } from "../../harness/cookie-jar.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { HostProvider } from "../shared/host-provider.ts";
import { adminFetch, seedTeam, text } from "./helpers.ts";
import { HOST_REDIRECT, SERVER, allKvText, browser, control, index, link, page, proxy, sealedCredential, withIdp, captureConsole } from "./upstream-oauth-helpers.ts";

const proxyFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => proxy(new Request(input, init));
type Counts = { tokenByRefresh: number; mcpUnauthorized: number; mcpCalls: number };

/** A 2025 session at the team's URL with a bearer token (a team token or a member's OAuth access token). */
async function session(team: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp`), { fetch: proxyFetch, requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "uo-host", version: "1.0.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId! };
}

const whoami = async (client: Client) => client.callTool({ name: "use_tool", arguments: { tool_name: `${SERVER}/whoami`, tool_input: {} } });

/** A member signs in through a host (the SDK's own OAuth flow), in this browser: their access token. */
async function memberSignsIn(team: string, account: string, jar: CookieJar): Promise<string> {
  const host = new HostProvider({ name: "uo host", redirectUri: HOST_REDIRECT });
  const transport = new StreamableHTTPClientTransportV2(new URL(`${BASE}/t/${team}/mcp`), { authProvider: host, fetch: proxyFetch });
  await expect(new ClientV2({ name: "uo-host", version: "1.0.0" }).connect(transport)).rejects.toThrow();
  const outcome = await signInAs(host.authorizations[0]!.href, browser(account, { jar }));
  if (outcome.kind !== "redirect") throw new Error(`sign-in stopped at ${outcome.url.pathname}: ${outcome.text}`);
  await transport.finishAuth(outcome.url.searchParams);
  return host.stored!.access_token;
}

/** Rewrites the sealed credential (as only a test can: it holds SECRETS_KEY). */
async function editCredential(team: string, account: string, change: (c: UpstreamCredential) => UpstreamCredential) {
  const next = change(await sealedCredential(team, account));
  const sealed: SealedSecret = await sealSecret(env.SECRETS_KEY!, team, `oauth:${SERVER}:${account}`, JSON.stringify(next));
  await runInDurableObject(index(team), async (_o, state) => state.storage.put(`cred:${SERVER}:${account}`, sealed));
}

/** Every console line of the current test (the proxy's log lines), for searches. */
const logged = captureConsole();

describe("a shared OAuth upstream", () => {
  it("asks for an admin's connect first, then calls with the team's account; refreshes ahead of expiry and after a 401", async () => {
    const token = await seedTeam("uo-shared", { mcp: { [SERVER]: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "shared" } } } });
    const answers: unknown[] = [];

    // Not connected: the call says who connects it, and how.
    const before = await session("uo-shared", token);
    const first = await whoami(before.client);
    answers.push(first);
    expect(first.isError).toBe(true);
    expect(text(first), text(first)).toContain("npm run team -- oauth connect uo-shared up");
    await before.client.close();

    // An admin's link, opened and signed in as alice at the upstream's authorization server.
    const connect = (await (await adminFetch("POST", `/teams/uo-shared/upstreams/${SERVER}/connect`)).json()) as { url: string };
    expect(page(await signInAs(connect.url.replace(/^https?:\/\/[^/]+/, BASE), browser("alice"))).status).toBe(200);

    const { client } = await session("uo-shared", token);
    const ok = await whoami(client);
    answers.push(ok);
    expect(ok.isError, text(ok)).toBeFalsy();
    expect(text(ok)).toContain("alice");

    // Ahead of expiry: the vault refreshes before handing the token out (rotation: a new refresh token is stored).
    const stored = await sealedCredential("uo-shared", "shared");
    await editCredential("uo-shared", "shared", (c) => ({ ...c, expiresAt: Date.now() + 20_000 }));
    const c1 = await control<Counts>("/counts");
    const fresh = await session("uo-shared", token);
    const after = await whoami(fresh.client);
    answers.push(after);
    expect(after.isError, text(after)).toBeFalsy();
    expect((await control<Counts>("/counts")).tokenByRefresh).toBe(c1.tokenByRefresh + 1);
    const refreshed = await sealedCredential("uo-shared", "shared");
    expect(refreshed.accessToken).not.toBe(stored.accessToken);
    expect(refreshed.refreshToken).not.toBe(stored.refreshToken);

    // The upstream stops taking the token: the 401 makes the vault refresh once, and the call goes through.
    await fetch(`${env.OAUTH_UPSTREAM_CONTROL}/revoke-access`, { method: "POST" });
    const c2 = await control<Counts>("/counts");
    const retried = await whoami(fresh.client);
    answers.push(retried);
    expect(retried.isError, text(retried)).toBeFalsy();
    const c3 = await control<Counts>("/counts");
    expect(c3.tokenByRefresh).toBe(c2.tokenByRefresh + 1);
    expect(c3.mcpUnauthorized).toBeGreaterThan(c2.mcpUnauthorized);

    // No token the upstream issued is anywhere but the sealed record: answers, log lines, KV, the session's storage.
    const latest = await sealedCredential("uo-shared", "shared");
    const secrets = [stored.accessToken, stored.refreshToken!, refreshed.accessToken, refreshed.refreshToken!, latest.accessToken, latest.refreshToken!];
    const storageOf = (stub: DurableObjectStub) => runInDurableObject(stub, async (_o, state) => JSON.stringify([...(await state.storage.list())]));
    // The team index holds the sealed record: ciphertext, so no token in clear there either.
    const objects = [await storageOf(env.SESSIONS.getByName(`uo-shared/${fresh.sessionId}`)), await storageOf(index("uo-shared"))];
    const everywhere = [JSON.stringify(answers), logged.join("\n"), await allKvText(), ...objects].join("\n");
    for (const secret of secrets) expect(everywhere.includes(secret), "a token leaked").toBe(false);
    await client.close();
    await fresh.client.close();
  });

  it("serves a 2026-07-28 client with the same account", async () => {
    const token = await seedTeam("uo-modern", { mcp: { [SERVER]: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "shared" } } } });
    expect(page(await signInAs(await link("uo-modern", "shared"), browser("bob"))).status).toBe(200);
    const client = new ClientV2({ name: "uo-modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransportV2(new URL(`${BASE}/t/uo-modern/mcp`), { fetch: proxyFetch, requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    expect(client.getProtocolEra()).toBe("modern");
    const result = await client.callTool({ name: "use_tool", arguments: { tool_name: `${SERVER}/whoami`, tool_input: {} } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain("bob");
    await client.close();
  });
});

describe("a per_user OAuth upstream", () => {
  it("gives each member their own link on first use; after connecting, the member's calls use their own account", async () => {
    const teamToken = await seedTeam("uo-user", { mcp: { [SERVER]: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "per_user" } } } });
    await withIdp("uo-user");

    // A team token has no member: it cannot use a per_user server.
    const anonymous = await session("uo-user", teamToken);
    expect(text(await whoami(anonymous.client))).toContain("needs a member signed in through OAuth");
    await anonymous.client.close();

    // Alice signs in through her host, in her browser; her first call gives her a link of her own.
    const jar = new CookieJar();
    const aliceToken = await memberSignsIn("uo-user", "alice", jar);
    const alice = await session("uo-user", aliceToken);
    const asked = text(await whoami(alice.client));
    const linkUrl = /(http:\/\/localhost:8787\/t\/uo-user\/connect\/up\?h=[A-Za-z0-9_-]{22}\.cx2\.[A-Za-z0-9._-]+)/.exec(asked)?.[1];
    expect(linkUrl, asked).toBeDefined();
    // Her browser opens it (her sign-in's cookie says who she is) and she signs in at the upstream.
    const connected = page(await signInAs(linkUrl!, browser("alice", { jar })));
    expect(connected.status, connected.text).toBe(200);
    // The retry works, with the account she connected.
    const mine = await whoami(alice.client);
    expect(mine.isError, text(mine)).toBeFalsy();
    expect(text(mine)).toContain("alice");

    // Bob, another member, has no account yet: his own link, not Alice's account; once he connects, his calls are his.
    const bobJar = new CookieJar();
    const bob = await session("uo-user", await memberSignsIn("uo-user", "bob", bobJar));
    const bobAsked = text(await whoami(bob.client));
    const bobLink = /(http:\/\/localhost:8787\/t\/uo-user\/connect\/up\?h=[A-Za-z0-9_-]{22}\.cx2\.[A-Za-z0-9._-]+)/.exec(bobAsked)?.[1];
    expect(bobLink, bobAsked).toBeDefined();
    expect(bobLink).not.toBe(linkUrl);
    expect(page(await signInAs(bobLink!, browser("bob", { jar: bobJar }))).status).toBe(200);
    expect(text(await whoami(bob.client))).toContain("bob");
    expect(text(await whoami(alice.client))).toContain("alice");

    // Deleting Alice deletes her upstream tokens: the account list no longer has her.
    const aliceId = await userIdFor("uo-user", env.IDP_ISSUER, "alice");
    const listed = async () => ((await (await adminFetch("GET", "/teams/uo-user/accounts")).json()) as { accounts: Array<{ account: string }> }).accounts.map((a) => a.account);
    const bobId = await userIdFor("uo-user", env.IDP_ISSUER, "bob");
    expect((await listed()).sort()).toEqual([aliceId, bobId].sort());
    // (At the proxy's loopback base: the OAuth library takes plain http there only.)
    const removed = await proxy(new Request(`${BASE}/admin/teams/uo-user/users/${aliceId}`, { method: "DELETE", headers: { authorization: "Bearer test-admin-token" } }));
    expect(removed.status, await removed.clone().text()).toBe(200);
    expect(await listed()).toEqual([bobId]);
    await alice.client.close();
    await bob.client.close();
  });

  it("asks a 2026 member's host to open the link (URL-mode input), then makes the call; a decline ends it", async () => {
    const teamToken = await seedTeam("uo-url", { mcp: { [SERVER]: { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "per_user" } } } });
    void teamToken;
    await withIdp("uo-url");
    const jar = new CookieJar();
    const token = await memberSignsIn("uo-url", "alice", jar);
    const client = new ClientV2({ name: "uo-url", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { url: {} } } });
    let answer: "accept" | "decline" = "decline";
    const opened: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string; message?: string };
      expect(params.mode).toBe("url");
      opened.push(params.url!);
      // The host shows the link; here the member opens it in her browser (her cookie says who she is) and signs in.
      if (answer === "accept") expect(page(await signInAs(params.url!, browser("alice", { jar }))).status).toBe(200);
      return { action: answer };
    });
    await client.connect(new StreamableHTTPClientTransportV2(new URL(`${BASE}/t/uo-url/mcp`), { fetch: proxyFetch, requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    expect(client.getProtocolEra()).toBe("modern");
    const call = () => client.callTool({ name: "use_tool", arguments: { tool_name: `${SERVER}/whoami`, tool_input: {} } });

    // Declined: nothing connected, the call was not made.
    const declined = await call();
    expect(declined.isError).toBe(true);
    expect(JSON.stringify(declined.content)).toContain("did not connect an account");
    expect(opened[0]).toMatch(/\/t\/uo-url\/connect\/up\?h=[A-Za-z0-9_-]{22}\.cx2\./);

    // Accepted: the member connects, and the same call goes through with her account.
    answer = "accept";
    const done = await call();
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(JSON.stringify(done.content)).toContain("alice");
    expect(opened).toHaveLength(2);
    await client.close();
  });
});
