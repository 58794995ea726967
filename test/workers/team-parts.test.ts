// The parts of a team's index object, each on its own over a real index's storage: the usage ledger and the connect
// and sign-in flows (the live sessions, the credential vault and the spent secrets have their own tests:
// session-bound, upstream-oauth, oauth-reuse); and the index itself, which serves each call only for its own team.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ROUTE_HEADERS } from "../../src/lib/env.ts";
import { ConnectFlows, MAX_PENDING, MAX_PENDING_PER_ACCOUNT } from "../../src/team/connect-flows.ts";
import { UsageLedger } from "../../src/team/usage-ledger.ts";
import { USAGE_DAYS_KEPT, dayOf, emptyFigures, type UsageFigures } from "../../src/session/usage.ts";

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12);

function withStorage<T>(team: string, fn: (storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  return runInDurableObject(env.TEAM_INDEX.getByName(team), (_index, state) => fn(state.storage));
}

const figures = (sessions: number, tools = 0): UsageFigures => ({ ...emptyFigures(), sessions, calls: { ...emptyFigures().calls, tools } });
const daysAgo = (n: number) => dayOf(NOW - n * DAY_MS);

/** Stores many entries, 128 a put (the most one takes). */
async function putAll(storage: DurableObjectStorage, entries: Array<[string, unknown]>): Promise<void> {
  for (let i = 0; i < entries.length; i += 128) await storage.put(Object.fromEntries(entries.slice(i, i + 128)));
}

describe("a team's usage ledger", () => {
  it("adds each day's figures to the team's total and the principal's share", async () => {
    vi.spyOn(Date, "now").mockReturnValue(NOW);
    try {
      await withStorage("tp-ledger", async (storage) => {
        const ledger = new UsageLedger(storage);
        await ledger.add([{ day: daysAgo(0), figures: figures(1, 2) }], "t:0123456789abcdef");
        await ledger.add([{ day: daysAgo(0), figures: figures(1, 1) }, { day: daysAgo(1), figures: figures(1) }], "u:acme.u1");
        // A figure without a principal counts for the team alone; a malformed principal too.
        await ledger.add([{ day: daysAgo(0), figures: figures(1) }], "not/a principal");
        expect(await ledger.days(2)).toEqual([
          { day: daysAgo(1), figures: figures(1) },
          { day: daysAgo(0), figures: figures(3, 3) },
        ]);
        expect(await ledger.days(1)).toEqual([{ day: daysAgo(0), figures: figures(3, 3) }]);
        expect(await ledger.byPrincipal(1)).toEqual([
          { principal: "t:0123456789abcdef", figures: figures(1, 2) },
          { principal: "u:acme.u1", figures: figures(1, 1) },
        ]);
        expect(await ledger.byPrincipal(2)).toEqual([
          { principal: "t:0123456789abcdef", figures: figures(1, 2) },
          { principal: "u:acme.u1", figures: figures(2, 1) },
        ]);
      });
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("writes no day past the window nor a malformed one, deletes days that left it, and reads around unreadable ones", async () => {
    vi.spyOn(Date, "now").mockReturnValue(NOW);
    try {
      await withStorage("tp-window", async (storage) => {
        const ledger = new UsageLedger(storage);
        await storage.put({ [`usage:${daysAgo(USAGE_DAYS_KEPT)}`]: figures(7), [`usage-by:${daysAgo(USAGE_DAYS_KEPT)}:t:old`]: figures(7), [`usage:${daysAgo(3)}`]: { sessions: "many" } });
        const malformed = { day: "yesterday", figures: figures(1) } as never;
        await ledger.add([{ day: daysAgo(USAGE_DAYS_KEPT), figures: figures(1) }, malformed, { day: daysAgo(USAGE_DAYS_KEPT - 1), figures: figures(2) }], "t:new");
        expect([...(await storage.list({ prefix: "usage" })).keys()]).toEqual([
          `usage-by:${daysAgo(USAGE_DAYS_KEPT - 1)}:t:new`,
          `usage:${daysAgo(USAGE_DAYS_KEPT - 1)}`,
          `usage:${daysAgo(3)}`,
        ]);
        // The unreadable day is left out, and counted afresh from the next addition.
        expect(await ledger.days(USAGE_DAYS_KEPT)).toEqual([{ day: daysAgo(USAGE_DAYS_KEPT - 1), figures: figures(2) }]);
        await ledger.add([{ day: daysAgo(3), figures: figures(1) }]);
        expect((await ledger.days(5))[0]).toEqual({ day: daysAgo(3), figures: figures(1) });
        // Windows asked outside 1..USAGE_DAYS_KEPT are bounded.
        expect(await ledger.days(0)).toEqual([]);
        expect(await ledger.days(1000)).toHaveLength(2);
      });
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe("a team's connect and sign-in flows", () => {
  const connect = (account: string, expiresAt: number) => ({
    server: "docs",
    account,
    resource: "https://docs.example/mcp",
    issuer: "https://auth.example",
    tokenEndpoint: "https://auth.example/token",
    clientId: "proxy",
    authMethod: "none" as const,
    verifier: "v".repeat(43),
    redirectUri: "https://proxy.example/connect/callback",
    expiresAt,
  });
  const signIn = (accountTag: string, expiresAt: number) => ({ verifier: "v", nonce: "n", server: "docs", handle: "cx1.h", accountTag, expiresAt });

  it("gives a flow back once, within its time", async () => {
    await withStorage("tp-once", async (storage) => {
      const flows = new ConnectFlows(storage);
      await flows.beginConnect("s1", connect("shared", Date.now() + 60_000));
      expect(await flows.takeConnect("s1")).toMatchObject({ account: "shared" });
      expect(await flows.takeConnect("s1")).toBeUndefined();
      await flows.beginMemberSignIn("s2", signIn("tag", Date.now() - 1));
      expect(await flows.takeMemberSignIn("s2")).toBeUndefined();
      expect((await storage.list({ prefix: "member-sign-in:" })).size).toBe(0);
      await expect(flows.beginMemberSignIn("s3", { ...signIn("tag", Date.now() + 60_000), handle: "h".repeat(129) })).rejects.toThrow();
    });
  });

  it("keeps at most five per account, pushing out that account's oldest and never another's; at most 500 in all", async () => {
    await withStorage("tp-caps", async (storage) => {
      const flows = new ConnectFlows(storage);
      const later = Date.now() + 60_000;
      await flows.beginMemberSignIn("theirs", signIn("other", later));
      for (let i = 0; i < MAX_PENDING_PER_ACCOUNT + 2; i++) await flows.beginMemberSignIn(`mine-${i}`, signIn("me", later + i));
      const kept = [...(await storage.list({ prefix: "member-sign-in:" })).keys()].sort();
      expect(kept).toEqual(["member-sign-in:mine-2", "member-sign-in:mine-3", "member-sign-in:mine-4", "member-sign-in:mine-5", "member-sign-in:mine-6", "member-sign-in:theirs"]);

      await putAll(storage, Array.from({ length: MAX_PENDING }, (_, i) => [`connect:c-${i}`, connect(`u${i}`, later + i)]));
      await flows.beginConnect("newest", connect("fresh", later + MAX_PENDING));
      const connects = await storage.list({ prefix: "connect:" });
      expect(connects.size).toBe(MAX_PENDING);
      expect(connects.has("connect:c-0")).toBe(false);
      expect(connects.has("connect:newest")).toBe(true);
    });
  });

  it("keeps a team admin's dashboard sign-in once, within its time; each its own account, so only the team's cap pushes one out", async () => {
    await withStorage("tp-dash", async (storage) => {
      const flows = new ConnectFlows(storage);
      const later = Date.now() + 60_000;
      await flows.beginDashboardSignIn("d1", { verifier: "v", nonce: "n1", expiresAt: later });
      expect(await flows.takeDashboardSignIn("d1")).toMatchObject({ verifier: "v", nonce: "n1" });
      expect(await flows.takeDashboardSignIn("d1")).toBeUndefined();
      await flows.beginDashboardSignIn("d2", { verifier: "v", nonce: "n2", expiresAt: Date.now() - 1 });
      expect(await flows.takeDashboardSignIn("d2")).toBeUndefined();
      await expect(flows.beginDashboardSignIn("d3", { verifier: "v".repeat(129), nonce: "n", expiresAt: later })).rejects.toThrow();
      for (let i = 0; i < MAX_PENDING_PER_ACCOUNT + 2; i++) await flows.beginDashboardSignIn(`many-${i}`, { verifier: "v", nonce: `n-${i}`, expiresAt: later + i });
      expect((await storage.list({ prefix: "dashboard-sign-in:" })).size).toBe(MAX_PENDING_PER_ACCOUNT + 2);
    });
  });

  it("spends a shared connect link once, and refuses new ones while 500 unexpired are spent", async () => {
    await withStorage("tp-links", async (storage) => {
      const flows = new ConnectFlows(storage);
      const later = Date.now() + 60_000;
      expect(await flows.spendLink("n1", later)).toBe("first");
      expect(await flows.spendLink("n1", later)).toBe("used");
      await putAll(storage, Array.from({ length: MAX_PENDING - 1 }, (_, i) => [`link-used:x${i}`, { expiresAt: later }]));
      expect(await flows.spendLink("n2", later)).toBe("full");
      // Expired ones make room (and go).
      await storage.put("link-used:x0", { expiresAt: Date.now() - 1 });
      expect(await flows.spendLink("n2", later)).toBe("first");
      expect(await storage.get("link-used:x0")).toBeUndefined();
    });
  });
});

/** What a call answered, or the message of its refusal (awaited here: an RPC's rejection is then handled). */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return await call;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

describe("a team's index object", () => {
  it("serves each call naming a team only for its own team", async () => {
    const index = env.TEAM_INDEX.getByName("tp-own");
    const transaction = { server: "docs", account: "shared", resource: "r", issuer: "i", tokenEndpoint: "t", clientId: "c", authMethod: "none" as const, verifier: "v", redirectUri: "u", expiresAt: Date.now() + 60_000 };
    expect(await outcome(index.beginConnect("tp-other", "s", transaction))).toMatch(/another team's/);
    expect(await outcome(index.takeMemberSignIn("tp-other", "s"))).toMatch(/another team's/);
    expect(await outcome(index.takeDashboardSignIn("tp-other", "s"))).toMatch(/another team's/);
    expect(await outcome(index.spendConnectLink("tp-other", "n", Date.now() + 60_000))).toMatch(/another team's/);
    expect(await outcome(index.listCredentials("tp-other"))).toMatch(/another team's/);
    expect(await outcome(index.spendOAuthSecret("tp-other", "ab".repeat(32)))).toMatch(/another team's/);
    expect(await outcome(index.admit("tp-other", "s", "t:0123456789abcdef", 20))).toMatch(/another team's/);
    expect(await runInDurableObject(index, async (_o, state) => (await state.storage.list()).size)).toBe(0);
    // Its own team's calls are served.
    await index.beginConnect("tp-own", "s", transaction);
    expect(await index.takeConnect("tp-own", "s")).toMatchObject({ server: "docs" });
    expect(await index.listCredentials("tp-own")).toEqual([]);
  });

  it("takes a listen stream only from the router, for its own team", async () => {
    const index = env.TEAM_INDEX.getByName("tp-listen");
    for (const team of ["tp-elsewhere", ""]) {
      const res = await index.fetch("https://proxy.example/t/tp-listen/mcp", { method: "POST", headers: { [ROUTE_HEADERS.era]: "modern", [ROUTE_HEADERS.team]: team } });
      expect(res.status).toBe(404);
      await res.body?.cancel();
    }
    expect(await index.listenStreams()).toBe(0);
  });
});
