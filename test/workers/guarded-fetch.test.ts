// The guarded fetch (src/lib/guarded-fetch.ts) follows redirects itself, the URL guard judging every hop, at most
// five; and the fetches the OAuth library makes by itself (a host's client metadata document: its `client_id` URL)
// go through it (src/lib/library-fetch.ts), so a host cannot make the proxy fetch a loopback or private address.
// Real loopback servers: the replay server's redirecting routes and the OAuth fixture's control port (a redirect to a
// target that counts its hits, and a count of TLS handshakes it received). The one fake is `client.test`, a public
// name that does not resolve here: a spy on fetch answers it from the control port, as DNS would.
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/edge/app.ts";
import { GuardedFetchError, MAX_REDIRECTS, guardedFetch } from "../../src/lib/guarded-fetch.ts";
import { urlPolicy } from "../../src/lib/url-policy.ts";
import { pageText } from "../shared/oauth-driver.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { replayStats, replayUrl, seedTeam } from "./helpers.ts";
import { captureConsole } from "./upstream-oauth-helpers.ts";

const logged = captureConsole();

/** This deployment's policy with private upstreams off, as in production (the pool runs with them on). */
const PUBLIC_ONLY = { ALLOW_PRIVATE_UPSTREAMS: "false" };

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
const post = (headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
  body: JSON.stringify(initialize),
});

type Probes = { targetHits: number; notHttp: number };
const probes = async (): Promise<Probes> => (await fetch(`${env.OAUTH_UPSTREAM_CONTROL}/probes`)).json() as Promise<Probes>;

/** `https://client.test/…` answered by the control port's `path`, as if that name resolved to it; the rest as ever. */
function resolveClientTest(path: string) {
  const realFetch = globalThis.fetch;
  return vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    // Only the requests that go out on the network: the guard's own, one hop each (`redirect: "manual"`).
    if (url.startsWith("https://client.test/") && init?.redirect === "manual") return realFetch(`${env.OAUTH_UPSTREAM_CONTROL}${path}`, init);
    return realFetch(input, init);
  });
}

describe("the guarded fetch's redirects", () => {
  it("does not follow a provider's redirect to a loopback address when private upstreams are off", async () => {
    // An authorization server at a public name whose endpoint redirects (307, so the POST is repeated) to loopback.
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      return url === "https://as.example/register" ? realFetch(replayUrl("gf-redirect-away"), init) : realFetch(input, init);
    });
    const before = (await replayStats("gf-redirect-target")).requests;
    try {
      const refused = await guardedFetch(urlPolicy(PUBLIC_ONLY))("https://as.example/register", post()).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(GuardedFetchError);
      expect((refused as Error).message).toBe("the provider named a redirect to a URL the proxy may not fetch: upstream URLs must use https (got http)");
    } finally {
      spy.mockRestore();
    }
    expect((await replayStats("gf-redirect-target")).requests).toBe(before);
  });

  it("follows at most five redirects", async () => {
    const before = (await replayStats("gf-redirect-loop")).requests;
    const refused = await guardedFetch(urlPolicy(env))(replayUrl("gf-redirect-loop"), post()).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(GuardedFetchError);
    expect((refused as Error).message).toBe(`the provider redirected more than ${MAX_REDIRECTS} times`);
    expect((await replayStats("gf-redirect-loop")).requests - before).toBe(MAX_REDIRECTS + 1);
  });

  it("follows an allowed redirect, repeating a 307's POST, without the request's credentials at another origin", async () => {
    const before = (await replayStats("gf-redirect-target")).requests;
    const res = await guardedFetch(urlPolicy(env))(replayUrl("gf-redirect-away"), post({ authorization: "Bearer not-for-another-origin" }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { serverInfo: unknown } }).result.serverInfo).toBeDefined();
    const target = await replayStats("gf-redirect-target");
    expect(target.requests - before).toBe(1);
    expect(target.methods["initialize"]).toBeGreaterThan(0);
    expect(target.lastHeaders["authorization"]).toBeUndefined();
  });

  it("gives a manual redirect back as it is", async () => {
    const res = await guardedFetch(urlPolicy(env))(replayUrl("gf-redirect-away"), { ...post(), redirect: "manual" });
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toMatch(/\/gf-redirect-target\/mcp$/);
  });
});

describe("a host's client metadata document (CIMD)", () => {
  const proxy = (request: Request) => app.fetch(request, { ...env, ...PUBLIC_ONLY, OAUTH_HOSTS: "on" }, createExecutionContext());
  const authorize = (team: string, clientId: string) => {
    const url = new URL(`${BASE}/t/${team}/oauth/authorize`);
    const params = { response_type: "code", client_id: clientId, redirect_uri: "https://host.example/callback", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", state: "s", scope: "mcp" };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return proxy(new Request(url));
  };
  const token = (team: string, clientId: string) =>
    proxy(new Request(`${BASE}/t/${team}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", redirect_uri: "https://host.example/callback", client_id: clientId, code_verifier: "v".repeat(43) }),
    }));

  it("is not fetched from a loopback client_id when private upstreams are off (authorize and token endpoints)", async () => {
    await seedTeam("gf-cimd", { mcp: { memory: { url: replayUrl("memory") } } });
    // The control port speaks HTTP: an https fetch of it is a TLS handshake it counts.
    const clientId = `https://127.0.0.1:${new URL(env.OAUTH_UPSTREAM_CONTROL).port}/client.json`;
    const before = await probes();
    const page = await authorize("gf-cimd", clientId);
    expect(page.status).toBe(400);
    expect(pageText(await page.text())).toContain("The application's registration could not be read.");
    const refused = await token("gf-cimd", clientId);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_client");
    expect((await probes()).notHttp).toBe(before.notHttp);
    // The library says why (its own warning, the guard's reason in it).
    expect(logged.filter((l) => l.includes("the provider named a URL the proxy may not fetch: upstream URLs cannot point at loopback"))).toHaveLength(2);
  });

  it("does not follow the document's redirect to a loopback address", async () => {
    await seedTeam("gf-cimd-redirect", { mcp: { memory: { url: replayUrl("memory") } } });
    const spy = resolveClientTest("/redirect-to-target");
    const before = await probes();
    try {
      const page = await authorize("gf-cimd-redirect", "https://client.test/oauth/client.json");
      expect(page.status).toBe(400);
    } finally {
      spy.mockRestore();
    }
    expect((await probes()).targetHits).toBe(before.targetHits);
    expect(logged.some((l) => l.includes("the provider named a redirect to a URL the proxy may not fetch: upstream URLs must use https (got http)"))).toBe(true);
  });
});
