// A member's sign-in through a host (issue 16, increment 3): the proxy's authorize step, its consent page, the team's
// real OpenID provider on loopback (harness/idp.ts, started by global-setup), the callback, and the code the host
// exchanges at the token endpoint. Driven by the SDK clients' own OAuth support (discovery from the 401, dynamic
// registration, PKCE, refresh) and by hand-built requests for each refusal. Only with OAUTH_HOSTS=on.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from "@modelcontextprotocol/client";
import { app } from "../../src/edge/app.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { HostProvider } from "../shared/host-provider.ts";
import { replayUrl, seedTeam } from "./helpers.ts";
import { pkce, withOAuth } from "./oauth-helpers.ts";
import { BASE, HOST_REDIRECT, authorizeUrl, exchange, form, initialize, member, proxy, proxyFetch, redirected, register, store, teamWithIdp } from "./sign-in-helpers.ts";

describe("a member signs in through the team's identity provider", () => {
  it("consents on a page that names the team, the client, where the answer goes and the upstreams; the code works at the token endpoint", async () => {
    await teamWithIdp("si-flow");
    const clientId = await register("si-flow", "Flow <b>Host</b>");
    const { verifier, challenge } = await pkce();
    const outcome = await signInAs(authorizeUrl("si-flow", clientId, challenge), member("alice"));
    const back = redirected(outcome);
    expect(back.origin + back.pathname).toBe(HOST_REDIRECT);
    expect(back.searchParams.get("state")).toBe("host-state-1");
    expect(back.searchParams.get("iss")).toBe(`${BASE}/t/si-flow`);

    // The consent page: escaped client name (its own claim), the team, the loopback warning, the upstream, no framing.
    const consent = outcome.trail.steps.find((s) => s.method === "GET" && s.url.includes("/oauth/authorize") && s.status === 200)!;
    expect(consent.body).toContain("Flow &lt;b&gt;Host&lt;/b&gt;");
    expect(consent.body).toContain("a name the application gave itself");
    expect(consent.body).toContain("<code>si-flow</code>");
    expect(consent.body).toContain("<code>127.0.0.1</code>");
    expect(consent.body).toContain("Any program running here could be listening");
    expect(consent.body).toContain("<code>memory</code>: Knowledge graph memory");
    // The browser went to the team's IdP with PKCE and came back through the callback.
    const toIdp = outcome.trail.steps.find((s) => s.method === "POST" && s.url.endsWith("/t/si-flow/oauth/authorize"))!;
    const idpRequest = new URL(toIdp.location!);
    expect(idpRequest.origin).toBe(env.IDP_ISSUER);
    expect(idpRequest.searchParams.get("code_challenge_method")).toBe("S256");
    expect(idpRequest.searchParams.get("redirect_uri")).toBe(`${BASE}/t/si-flow/oauth/callback`);
    expect(idpRequest.searchParams.get("scope")).toBe("openid email profile");

    const tokens = await exchange("si-flow", clientId, back.searchParams.get("code")!, verifier);
    expect(tokens.status).toBe(200);
    expect((await initialize("si-flow", tokens.body.access_token!)).status).toBe(200);
    // The code is single-use.
    expect((await exchange("si-flow", clientId, back.searchParams.get("code")!, verifier)).status).toBe(400);

    // The user index holds the member under their pseudonymous id; the grant is listed under it.
    const id = await userIdFor("si-flow", env.IDP_ISSUER, "alice");
    expect(await store().getUser("si-flow", id)).toMatchObject({ sub: "alice", issuer: env.IDP_ISSUER, email: "alice@example.com" });
    expect((await store().listUsers("si-flow")).map((u) => u.id)).toEqual([id]);
  });

  it("goes back to the host with access_denied, state and iss when the member declines or cancels at the IdP", async () => {
    await teamWithIdp("si-deny");
    const clientId = await register("si-deny");
    const { challenge } = await pkce();
    const declined = redirected(await signInAs(authorizeUrl("si-deny", clientId, challenge), member("alice", { consent: "deny" })));
    expect(Object.fromEntries(declined.searchParams)).toMatchObject({ error: "access_denied", state: "host-state-1", iss: `${BASE}/t/si-deny` });

    await teamWithIdp("si-cancel");
    const other = await register("si-cancel");
    const cancelled = redirected(await signInAs(authorizeUrl("si-cancel", other, challenge), member("alice", { cancelAtIdp: true })));
    expect(cancelled.searchParams.get("error")).toBe("access_denied");
    expect(cancelled.searchParams.get("error_description")).toContain("cancelled or refused");
    expect(await store().listUsers("si-cancel")).toEqual([]);
  });

  it("admits only the team's members: a verified address in an allowed domain, or an allowed group", async () => {
    await teamWithIdp("si-domain", { allowed_domains: ["example.com"] });
    const clientId = await register("si-domain");
    const { challenge } = await pkce();
    // bob's address is at other.test; carol's is at example.com but not verified.
    for (const account of ["bob", "carol"]) {
      const refused = redirected(await signInAs(authorizeUrl("si-domain", clientId, challenge), member(account)));
      expect(refused.searchParams.get("error")).toBe("access_denied");
      expect(refused.searchParams.get("error_description")).toContain("a verified email address in an allowed domain");
      expect(refused.searchParams.has("code")).toBe(false);
    }
    expect(await store().listUsers("si-domain")).toEqual([]);

    await teamWithIdp("si-groups", { allowed_groups: ["mcp-users"] });
    const groupsClient = await register("si-groups");
    expect(redirected(await signInAs(authorizeUrl("si-groups", groupsClient, challenge), member("bob"))).searchParams.has("code")).toBe(true);
    const alice = redirected(await signInAs(authorizeUrl("si-groups", groupsClient, challenge), member("alice")));
    expect(alice.searchParams.get("error_description")).toContain("membership of an allowed group");
  });

  it("refuses a request without PKCE S256, an unregistered redirect URI, another team's resource, and a team without sign-in", async () => {
    await teamWithIdp("si-audience");
    const clientId = await register("si-audience");
    const { challenge } = await pkce();
    const noPkce = redirected(await signInAs(authorizeUrl("si-audience", clientId, challenge, { code_challenge: null, code_challenge_method: null }), member("alice")));
    expect(noPkce.searchParams.get("error")).toBe("invalid_request");
    const plain = redirected(await signInAs(authorizeUrl("si-audience", clientId, challenge, { code_challenge_method: "plain" }), member("alice")));
    expect(plain.searchParams.get("error")).toBe("invalid_request");
    // Not the registered redirect URI: a local page, and the browser goes nowhere.
    const unregistered = await signInAs(authorizeUrl("si-audience", clientId, challenge, { redirect_uri: "http://127.0.0.1:2/elsewhere" }), member("alice"));
    expect(unregistered).toMatchObject({ kind: "page", status: 400 });
    const foreign = redirected(await signInAs(authorizeUrl("si-audience", clientId, challenge, { resource: `${BASE}/t/si-flow/mcp` }), member("alice")));
    expect(foreign.searchParams.get("error")).toBe("invalid_target");
    // A team with no provider says so to the host.
    await seedTeam("si-none", { mcp: { memory: { url: replayUrl("memory") } } });
    const noneClient = await register("si-none");
    const none = redirected(await signInAs(authorizeUrl("si-none", noneClient, challenge), member("alice")));
    expect(none.searchParams.get("error")).toBe("access_denied");
    expect(none.searchParams.get("error_description")).toContain("sign-in is not set up for team si-none");
  });

  it("fetches nothing of a provider the URL guard refuses: the host hears the provider cannot be used", async () => {
    // Stored while private addresses were allowed (as locally); the deployment at sign-in time refuses them.
    await teamWithIdp("si-ssrf");
    const clientId = await register("si-ssrf");
    const { challenge } = await pkce();
    const guarded = { ...withOAuth, ALLOW_PRIVATE_UPSTREAMS: "false" };
    const outcome = await signInAs(authorizeUrl("si-ssrf", clientId, challenge), {
      ...member("alice"),
      proxy: async (request) => app.fetch(request, guarded, createExecutionContext()),
    });
    const back = redirected(outcome);
    expect(back.searchParams.get("error")).toBe("temporarily_unavailable");
    // Refused before any request: plain http to a loopback provider (oauth4webapi and the URL guard both refuse it).
    expect(back.searchParams.get("error_description")).toMatch(/^the team's identity provider cannot be used: .*(may not fetch|only requests to HTTPS)/);
    expect(outcome.trail.steps.some((s) => s.url.startsWith(env.IDP_ISSUER))).toBe(false);
  });

  it("honours a consent page and an IdP answer once, in the browser that started them", async () => {
    await teamWithIdp("si-replay");
    const clientId = await register("si-replay");
    const { challenge } = await pkce();
    const outcome = await signInAs(authorizeUrl("si-replay", clientId, challenge), member("alice"));
    redirected(outcome);
    const posted = outcome.trail.steps.find((s) => s.method === "POST" && s.url.endsWith("/oauth/authorize"))!;
    const consent = outcome.trail.steps.find((s) => s.method === "GET" && s.url.includes("/oauth/authorize") && s.status === 200)!;
    const handle = /name="handle" value="([^"]+)"/.exec(consent.body!)![1]!;
    const cookie = outcome.trail.jar.header(new URL(posted.url));
    // The same handle again, with the browser's cookies: used up.
    const again = await proxy(new Request(posted.url, { ...form({ handle, decision: "approve" }), headers: { "content-type": "application/x-www-form-urlencoded", cookie } }));
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("Start again from the application");
    // The callback URL replayed: its state is spent.
    const callback = outcome.trail.steps.find((s) => s.url.includes("/oauth/callback"))!;
    const replayed = await proxy(new Request(callback.url, { headers: { cookie: outcome.trail.jar.header(new URL(callback.url)) } }));
    expect(replayed.status).toBe(400);
    // A fresh consent page posted from another browser (no binding cookie) is refused too.
    const page = await proxy(new Request(authorizeUrl("si-replay", clientId, challenge)));
    const freshHandle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    const foreign = await proxyFetch(`${BASE}/t/si-replay/oauth/authorize`, form({ handle: freshHandle, decision: "approve" }));
    expect(foreign.status).toBe(400);
  });
});

describe("the SDK clients' own OAuth flow against the proxy", () => {
  it("v1 client (what mcp-remote and the Inspector use): 401 → discovery → registration → sign-in → tools; a stale token is refreshed", async () => {
    await teamWithIdp("si-v1");
    const host = new HostProvider({ name: "v1 host", redirectUri: HOST_REDIRECT });
    const url = new URL(`${BASE}/t/si-v1/mcp`);
    const newClient = () => new Client({ name: "v1-host", version: "1.0.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const first = new StreamableHTTPClientTransport(url, { authProvider: host, fetch: proxyFetch });
    await expect(newClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(host.authorizations).toHaveLength(1);
    const authorization = host.authorizations[0]!;
    expect(authorization.searchParams.get("resource")).toBe(`${BASE}/t/si-v1/mcp`);
    expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
    const back = redirected(await signInAs(authorization.href, member("alice")));
    await first.finishAuth(back.searchParams.get("code")!);
    expect(host.stored?.refresh_token).toBeTruthy();

    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: host, fetch: proxyFetch }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("discover_tool");
    await client.close();

    // A token the proxy no longer takes: the client refreshes with its refresh token (rotated) and goes on.
    const oldRefresh = host.stored!.refresh_token;
    host.stored = { ...host.stored!, access_token: "stale:token:value" };
    const again = newClient();
    await again.connect(new StreamableHTTPClientTransport(url, { authProvider: host, fetch: proxyFetch }));
    expect(host.stored.access_token).not.toBe("stale:token:value");
    expect(host.stored.refresh_token).not.toBe(oldRefresh);
    expect(host.authorizations).toHaveLength(1);
    await again.close();
  });

  it("v2 client: the same flow, and the token it gets is refused at another team's URL", async () => {
    await teamWithIdp("si-sdk");
    const host = new HostProvider({ name: "v2 host", redirectUri: HOST_REDIRECT });
    const url = new URL(`${BASE}/t/si-sdk/mcp`);
    const first = new StreamableHTTPClientTransportV2(url, { authProvider: host, fetch: proxyFetch });
    await expect(new ClientV2({ name: "v2-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedErrorV2);
    const back = redirected(await signInAs(host.authorizations[0]!.href, member("alice")));
    await first.finishAuth(back.searchParams);
    const client = new ClientV2({ name: "v2-host", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransportV2(url, { authProvider: host, fetch: proxyFetch }));
    // The upstream is lazy: loading it and reading a tool's schema work under the member's grant.
    expect((await client.callTool({ name: "load_mcp", arguments: { mcp_name: "memory" } })).isError).toBeFalsy();
    const discover = await client.callTool({ name: "discover_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(discover.isError, JSON.stringify(discover)).toBeFalsy();
    await client.close();
    expect((await initialize("si-flow", host.stored!.access_token)).status).toBe(401);
  });

  it("v2 client registered by its metadata document (CIMD): the consent page shows its verified domain", async () => {
    await teamWithIdp("si-cimd");
    const documentUrl = "https://client.test/oauth/client.json";
    const document = {
      client_id: documentUrl,
      client_name: "Metadata Host",
      redirect_uris: [HOST_REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
    // The library fetches the document with the Worker's own fetch; there is no client.test, so it is answered here.
    const realFetch = globalThis.fetch;
    let fetched = 0;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      if ((input instanceof Request ? input.url : String(input)) === documentUrl) {
        fetched++;
        return Response.json(document);
      }
      return realFetch(input, init);
    });
    try {
      const metadata = (await (await proxyFetch(`${BASE}/.well-known/oauth-authorization-server/t/si-cimd`)).json()) as Record<string, unknown>;
      expect(metadata["client_id_metadata_document_supported"]).toBe(true);
      const host = new HostProvider({ name: "Metadata Host", redirectUri: HOST_REDIRECT, clientMetadataUrl: documentUrl });
      const url = new URL(`${BASE}/t/si-cimd/mcp`);
      const first = new StreamableHTTPClientTransportV2(url, { authProvider: host, fetch: proxyFetch });
      await expect(new ClientV2({ name: "cimd-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedErrorV2);
      expect(host.authorizations[0]!.searchParams.get("client_id")).toBe(documentUrl);
      const outcome = await signInAs(host.authorizations[0]!.href, member("alice"));
      const consent = outcome.trail.steps.find((s) => s.method === "GET" && s.url.includes("/oauth/authorize") && s.status === 200)!;
      expect(consent.body).toContain("verified domain <code>client.test</code>");
      expect(consent.body).not.toContain("a name the application gave itself");
      await first.finishAuth(redirected(outcome).searchParams);
      const client = new ClientV2({ name: "cimd-host", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransportV2(url, { authProvider: host, fetch: proxyFetch }));
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("use_tool");
      await client.close();
      expect(fetched).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
    }
  });
});
