// Floods from one client address (CF-Connecting-IP) that need no working credential: random team tokens at the MCP
// endpoint, wrong admin tokens, requests of the OAuth and connect routes, and callbacks or sign-in forms naming
// made-up teams or carrying no valid state. Each is tried as an attacker would, counting what it costs: KV reads,
// Durable Objects created, log lines. Every test uses addresses of its own, so the budgets do not meet.
import { env } from "cloudflare:workers";
import { createExecutionContext, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { mintToken } from "../../src/auth/token.ts";
import { app } from "../../src/edge/app.ts";
import { ADDRESS_LIMIT, UNKNOWN_ADDRESS, clientAddress, countAddressEvent, overAddressLimit } from "../../src/edge/common/address-limit.ts";
import { ADMIN, BASE, addToken, initializeBody, replayUrl, seedTeam } from "./helpers.ts";
import { captureConsole, oauthTeam, withIdp } from "./upstream-oauth-helpers.ts";
import { expectThrottled } from "../shared/throttled.ts";

const logged = captureConsole();

/** The TEAMS namespace itself, with every `get` counted: the real binding, only watched. */
function countingKv(kv: KVNamespace): { kv: KVNamespace; reads: () => number } {
  let reads = 0;
  const watched = new Proxy(kv, {
    get(target, property) {
      if (property === "get") return (...args: Parameters<KVNamespace["get"]>) => (reads++, target.get(...args));
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: watched, reads: () => reads };
}

/** The Worker with the test's env, TEAMS watched. */
function proxyCounting() {
  const teams = countingKv(env.TEAMS);
  const fetch = (request: Request) => app.fetch(request, { ...env, TEAMS: teams.kv }, createExecutionContext());
  return { fetch, reads: teams.reads };
}

const from = (address: string, headers: Record<string, string> = {}) => ({ ...headers, "cf-connecting-ip": address });

const mcpPost = (team: string, headers: Record<string, string>) =>
  new Request(`${BASE}/t/${team}/mcp`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(initializeBody),
  });

describe("failed authentication at the MCP endpoint", () => {
  it("1,000 random well-formed team tokens from one address: 100 are looked up and refused, the rest are 429 without a read", async () => {
    await seedTeam("th-mcp", { mcp: { a: { url: replayUrl("memory") } } });
    const good = await addToken("th-mcp");
    const proxy = proxyCounting();
    const statuses: number[] = [];
    let throttled: Response | undefined;
    for (let i = 0; i < 1000; i++) {
      const res = await proxy.fetch(mcpPost("th-mcp", from("203.0.113.10", { authorization: `Bearer ${(await mintToken()).token}` })));
      statuses.push(res.status);
      if (res.status === 429) throttled ??= res;
      else await res.body?.cancel();
    }
    expect(statuses.slice(0, ADDRESS_LIMIT).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(ADDRESS_LIMIT).every((s) => s === 429)).toBe(true);
    expect(proxy.reads()).toBe(ADDRESS_LIMIT);
    expectThrottled(throttled!);
    const body = (await throttled!.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toMatch(/^Too many failed authentications from this address/);
    // Once over, the address is refused before its token is looked at, a good one too; another address is not.
    expect((await proxy.fetch(mcpPost("th-mcp", from("203.0.113.10", { authorization: `Bearer ${good}` })))).status).toBe(429);
    expect((await proxy.fetch(mcpPost("th-mcp", from("203.0.113.11", { authorization: `Bearer ${good}` })))).status).toBe(200);
    const wrong = await proxy.fetch(mcpPost("th-mcp", from("203.0.113.11", { authorization: `Bearer ${(await mintToken()).token}` })));
    expect(wrong.status).toBe(401);
    expect(proxy.reads()).toBe(ADDRESS_LIMIT + 2);
    // The address is logged once, as it goes over.
    const lines = logged.filter((l) => l.includes('"throttled"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ budget: "failed_auth", address: "203.0.113.10", route: "mcp" })]);
  });

  it("counts failures only: successful requests and requests without any credential are not throttled", async () => {
    await seedTeam("th-ok", { mcp: { a: { url: replayUrl("memory") } } });
    const good = await addToken("th-ok");
    const proxy = proxyCounting();
    const address = "203.0.113.20";
    // 120 authenticated requests (a GET without a session: 400), and 150 without a token (OAuth discovery's 401).
    for (let i = 0; i < 120; i++) {
      const res = await proxy.fetch(new Request(`${BASE}/t/th-ok/mcp`, { headers: from(address, { authorization: `Bearer ${good}`, accept: "text/event-stream" }) }));
      expect(res.status).toBe(400);
    }
    for (let i = 0; i < 150; i++) expect((await proxy.fetch(mcpPost("th-ok", from(address)))).status).toBe(401);
    // The address still has its whole budget of failures.
    for (let i = 0; i < ADDRESS_LIMIT; i++) {
      expect((await proxy.fetch(mcpPost("th-ok", from(address, { authorization: "Bearer dmt_0123456789abcdef_wrong" })))).status).toBe(401);
    }
    expectThrottled(await proxy.fetch(mcpPost("th-ok", from(address, { authorization: "Bearer dmt_0123456789abcdef_wrong" }))));
  });

  it("counts an IPv6 client by its /64: rotating addresses inside it does not escape the budget", async () => {
    const proxy = proxyCounting();
    for (let i = 0; i < ADDRESS_LIMIT; i++) {
      const res = await proxy.fetch(mcpPost("th-v6", from(`2001:db8:1:2::${(i + 1).toString(16)}`, { authorization: `Bearer ${(await mintToken()).token}` })));
      expect(res.status).toBe(401);
    }
    expectThrottled(await proxy.fetch(mcpPost("th-v6", from("2001:db8:1:2:ffff::1", { authorization: "Bearer x" }))));
    expect((await proxy.fetch(mcpPost("th-v6", from("2001:db8:1:3::1", { authorization: "Bearer x" })))).status).toBe(401);
  });
});

describe("failed authentication at the admin API", () => {
  it("2,000 wrong admin tokens from one address: 100 refusals, each logged without the token, then 429", async () => {
    const proxy = proxyCounting();
    const statuses: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const res = await proxy.fetch(new Request(`${BASE}/admin/teams/a/config`, { headers: from("203.0.113.30", { authorization: `Bearer wrong-admin-token-${i}` }) }));
      statuses.push(res.status);
      if (i === 1999) expectThrottled(res);
      await res.body?.cancel();
    }
    expect(statuses.slice(0, ADDRESS_LIMIT).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(ADDRESS_LIMIT).every((s) => s === 429)).toBe(true);
    const refusals = logged.filter((l) => l.includes('"admin_auth"'));
    expect(refusals).toHaveLength(ADDRESS_LIMIT);
    expect(JSON.parse(refusals[0]!)).toMatchObject({ event: "admin_auth", outcome: "refused", reason: "wrong token", address: "203.0.113.30" });
    expect(logged.join("\n")).not.toContain("wrong-admin-token");
    // A request with no token is a refusal too; the admin's own token from another address works.
    expect((await proxy.fetch(new Request(`${BASE}/admin/teams/a/config`, { headers: from("203.0.113.31") }))).status).toBe(401);
    expect(JSON.parse(logged.filter((l) => l.includes('"admin_auth"')).at(-1)!)).toMatchObject({ reason: "no token", address: "203.0.113.31" });
    expect((await proxy.fetch(new Request(`${BASE}/admin/teams/a/config`, { headers: from("203.0.113.32", ADMIN) }))).status).toBe(404);
  });

  it("shares one budget with the MCP endpoint", async () => {
    const proxy = proxyCounting();
    for (let i = 0; i < ADDRESS_LIMIT / 2; i++) {
      expect((await proxy.fetch(mcpPost("th-share", from("203.0.113.40", { authorization: "Bearer x" })))).status).toBe(401);
      expect((await proxy.fetch(new Request(`${BASE}/admin/teams/a/config`, { headers: from("203.0.113.40", { authorization: "Bearer x" }) }))).status).toBe(401);
    }
    expectThrottled(await proxy.fetch(new Request(`${BASE}/admin/teams/a/config`, { headers: from("203.0.113.40", ADMIN) })));
    expectThrottled(await proxy.fetch(mcpPost("th-share", from("203.0.113.40", { authorization: "Bearer x" }))));
  });
});

describe("the OAuth and connect routes", () => {
  it("answer 100 requests a minute from one address, whatever they are, then 429; other addresses go on", async () => {
    const proxy = proxyCounting();
    const routes = [
      () => new Request(`${BASE}/t/th-oauth/oauth/token`, { method: "POST", headers: from("203.0.113.50", { "content-type": "application/x-www-form-urlencoded" }), body: "grant_type=refresh_token&refresh_token=x" }),
      () => new Request(`${BASE}/t/th-oauth/oauth/register`, { method: "POST", headers: from("203.0.113.50", { "content-type": "application/json" }), body: "{}" }),
      () => new Request(`${BASE}/t/th-oauth/oauth/authorize?client_id=x`, { headers: from("203.0.113.50") }),
      () => new Request(`${BASE}/t/th-oauth/oauth/callback?state=x`, { headers: from("203.0.113.50") }),
      () => new Request(`${BASE}/t/th-oauth/connect/up?h=x`, { headers: from("203.0.113.50") }),
      () => new Request(`${BASE}/oauth/upstream/callback?state=th-oauth.${"A".repeat(22)}`, { headers: from("203.0.113.50") }),
    ];
    for (let i = 0; i < ADDRESS_LIMIT; i++) {
      const res = await proxy.fetch(routes[i % routes.length]!());
      expect(res.status, `request ${i}`).not.toBe(429);
      await res.body?.cancel();
    }
    const readsBefore = proxy.reads();
    for (const route of routes) {
      const res = await proxy.fetch(route());
      expectThrottled(res);
      expect(((await res.json()) as { error: string }).error).toBe("rate_limited");
    }
    expect(proxy.reads()).toBe(readsBefore);
    // The metadata documents are constant answers and are not limited; another address is not throttled.
    expect((await proxy.fetch(new Request(`${BASE}/.well-known/oauth-protected-resource/t/th-oauth/mcp`, { headers: from("203.0.113.50") }))).status).toBe(200);
    expect((await proxy.fetch(new Request(`${BASE}/t/th-oauth/oauth/authorize?client_id=x`, { headers: from("203.0.113.51") }))).status).not.toBe(429);
  });
});

describe("objects of teams", () => {
  const indexes = async () => (await listDurableObjectIds(env.TEAM_INDEX)).length;
  const state = () => crypto.randomUUID().replaceAll("-", "").slice(0, 22);

  it("callbacks naming made-up teams, or carrying a state this proxy did not mint, wake no team index", async () => {
    const proxy = proxyCounting();
    // A team that exists, whose index has never been woken.
    await oauthTeam("th-quiet", { mode: "per_user" });
    const before = await indexes();
    for (let i = 0; i < 10; i++) {
      const address = `203.0.113.${60 + i}`;
      for (const team of [`th-madeup-${i}`, "th-quiet"]) {
        // States of the proxy's shape (`<team>.<nonce>.<mac>`, `m.<nonce>.<mac>`), made up.
        const connect = await proxy.fetch(new Request(`${BASE}/oauth/upstream/callback?state=${team}.${state()}.${state()}&code=c`, { headers: from(address) }));
        expect(connect.status).toBe(400);
        const signIn = await proxy.fetch(new Request(`${BASE}/t/${team}/oauth/callback?state=m.${state()}.${state()}&code=c`, { headers: from(address) }));
        expect(signIn.status).toBe(400);
      }
    }
    expect(await indexes()).toBe(before);
  });

  it("a connect link's sign-in form without a handle wakes no team index", async () => {
    await oauthTeam("th-form", { mode: "per_user" });
    await withIdp("th-form");
    const proxy = proxyCounting();
    const before = await indexes();
    for (const handle of ["", "cx1.garbage", "x".repeat(200)]) {
      const res = await proxy.fetch(
        new Request(`${BASE}/t/th-form/connect/up/sign-in`, {
          method: "POST",
          headers: from("203.0.113.80", { "content-type": "application/x-www-form-urlencoded" }),
          body: new URLSearchParams({ h: handle }).toString(),
        }),
      );
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("This is not a connect link of this server");
    }
    expect(await indexes()).toBe(before);
  });
});

describe("the count per address", () => {
  it("reads CF-Connecting-IP: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64, anything else as one unknown address", () => {
    const at = (ip?: string) => clientAddress(new Request(BASE, ip === undefined ? {} : { headers: { "cf-connecting-ip": ip } }));
    expect(at("198.51.100.7")).toBe("198.51.100.7");
    expect(at("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(at("2001:db8:aa:bb:1:2:3:4")).toBe("2001:db8:aa:bb::/64");
    expect(at("2001:DB8:AA:BB::9")).toBe("2001:db8:aa:bb::/64");
    expect(at()).toBe(UNKNOWN_ADDRESS);
    expect(at("")).toBe(UNKNOWN_ADDRESS);
    expect(at("not an address")).toBe(UNKNOWN_ADDRESS);
  });

  it("is a sliding minute: the last 100 events of 60 s, released as the oldest of them leaves it", async () => {
    const noBinding = {};
    let now = 1_000_000;
    for (let i = 0; i < ADDRESS_LIMIT; i++) {
      expect(overAddressLimit("oauth", "w-slide", now)).toBeUndefined();
      expect(await countAddressEvent(noBinding, "oauth", "w-slide", "test", now)).toBeUndefined();
      now += 100;
    }
    // The first event was at 1,000,000: the address is over until 1,060,000.
    expect(overAddressLimit("oauth", "w-slide", now)).toBe(50);
    expect(overAddressLimit("oauth", "w-slide", 1_059_999)).toBe(1);
    expect(overAddressLimit("oauth", "w-slide", 1_060_000)).toBeUndefined();
    // One more event: now the second oldest (1,000,100) bounds it.
    await countAddressEvent(noBinding, "oauth", "w-slide", "test", 1_060_000);
    expect(overAddressLimit("oauth", "w-slide", 1_060_099)).toBe(1);
    expect(overAddressLimit("oauth", "w-slide", 1_060_100)).toBeUndefined();
    // Each budget counts apart.
    expect(overAddressLimit("failed_auth", "w-slide", now)).toBeUndefined();
  });

  // Fakes of the binding (faults): its refusal, which only events at other isolates can bring here, and its failure.
  it("takes the binding's word for events at other isolates, and goes on counting here when the binding fails", async () => {
    const refusing = { ADDRESS_LIMITER: { limit: async () => ({ success: false }) } };
    expect(await countAddressEvent(refusing, "oauth", "w-refused", "test", 0)).toBe(60);
    expect(overAddressLimit("oauth", "w-refused", 59_999)).toBe(1);
    expect(overAddressLimit("oauth", "w-refused", 60_000)).toBeUndefined();
    const failing = { ADDRESS_LIMITER: { limit: async (): Promise<RateLimitOutcome> => Promise.reject(new Error("limiter down")) } };
    for (let i = 0; i < ADDRESS_LIMIT - 1; i++) expect(await countAddressEvent(failing, "oauth", "w-failing", "test", 0)).toBeUndefined();
    expect(overAddressLimit("oauth", "w-failing", 0)).toBeUndefined();
    expect(await countAddressEvent(failing, "oauth", "w-failing", "test", 0)).toBeUndefined();
    expect(overAddressLimit("oauth", "w-failing", 0)).toBe(60);
  });
});
