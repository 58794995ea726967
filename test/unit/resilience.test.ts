// Pure timing and paging logic, with fake clocks: backoff, the reconnect budget, Retry-After, the token cache,
// upstream exchange deadlines and the request-slot gate.
import { describe, expect, it, vi } from "vitest";
import { ReconnectBudget, backoffDelay, parseRetryAfter, sleep, waitAtMost } from "../../src/upstream/backoff.ts";
import { REFUSAL_MS, TokenCache } from "../../src/edge/common/token-cache.ts";
import { ExchangeTimeout, classify, deadline, exchangeMs } from "../../src/upstream/exchange.ts";
import { FetchGate } from "../../src/upstream/fetch-gate.ts";
import { waitFor } from "../shared/wait.ts";

describe("backoff", () => {
  it("doubles from about half a second to about four, with ±25% jitter", () => {
    expect([0, 1, 2, 3, 4].map((a) => backoffDelay(a, () => 0.5))).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(backoffDelay(0, () => 0)).toBe(375);
    expect(backoffDelay(0, () => 0.999999)).toBe(625);
    expect(backoffDelay(3, () => 0)).toBe(3000);
  });

  it("sleep ends early when its signal aborts", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const waiting = sleep(10_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    // A signal aborted before the wait starts ends it at once too, and no timer is left behind.
    await expect(sleep(10_000, controller.signal)).rejects.toThrow("stop");
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });
});

describe("waitAtMost", () => {
  it("returns when the work settles, or at the limit when it does not, and leaves no timer", async () => {
    vi.useFakeTimers();
    let settled = false;
    const early = waitAtMost(Promise.reject(new Error("failed fast")), 1000).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    let gaveUp = false;
    const never = waitAtMost(new Promise(() => {}), 1000).then(() => (gaveUp = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(gaveUp).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(gaveUp).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await Promise.all([early, never]);
    vi.useRealTimers();
  });
});

describe("reconnect budget", () => {
  it("allows N reconnects at once, then gives one back every 60/N s, never holding more than N", () => {
    let now = 1_000_000;
    const budget = new ReconnectBudget(3, () => now);
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, true]);
    expect(budget.take()).toBe(false);
    expect(budget.waitMs()).toBe(20_000);
    now += 19_999;
    expect(budget.take()).toBe(false);
    expect(budget.waitMs()).toBe(1);
    now += 1; // 20 s: one reconnect is back, and only one
    expect([budget.take(), budget.take()]).toEqual([true, false]);
    // A sustained flap gets N a minute: one per 20 s.
    let granted = 0;
    for (let i = 0; i < 600; i++) {
      now += 1_000;
      if (budget.take()) granted++;
    }
    expect(granted).toBe(30);
    // A long quiet spell refills it to N, no more.
    now += 3_600_000;
    expect([budget.take(), budget.take(), budget.take(), budget.take()]).toEqual([true, true, true, false]);
  });
});

describe("Retry-After", () => {
  it("reads delta-seconds and HTTP dates", () => {
    const now = Date.parse("2026-11-22T08:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("Sun, 22 Nov 2026 08:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 07:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
});

describe("token cache", () => {
  it("serves a lookup for its time-to-live, at most 60 s, and not at all with 0", async () => {
    let now = 0;
    const load = vi.fn(async () => ({ hash: "h", createdAt: "" }));
    const cache = new TokenCache(30, () => now);
    await cache.get("k", load);
    await cache.get("k", load);
    expect(load).toHaveBeenCalledTimes(1);
    now += 30_001;
    await cache.get("k", load);
    expect(load).toHaveBeenCalledTimes(2);

    const capped = new TokenCache(3600, () => now);
    await capped.get("k", load);
    now += 60_001;
    await capped.get("k", load);
    expect(load).toHaveBeenCalledTimes(4);

    const off = new TokenCache(0, () => now);
    await off.get("k", load);
    await off.get("k", load);
    expect(load).toHaveBeenCalledTimes(6);
  });

  it("keeps the token accepted for a lookup only while the lookup is cached, and none for a missing token", async () => {
    let now = 0;
    const cache = new TokenCache(30, () => now);
    await cache.get("k", async () => ({ hash: "h", createdAt: "" }));
    expect(cache.acceptedToken("k")).toBeUndefined();
    cache.accept("k", "the-token");
    expect(cache.acceptedToken("k")).toBe("the-token");
    now += 30_001;
    expect(cache.acceptedToken("k")).toBeUndefined();

    await cache.get("gone", async () => null);
    cache.accept("gone", "the-token");
    expect(cache.acceptedToken("gone")).toBeUndefined();

    const off = new TokenCache(0, () => now);
    await off.get("k", async () => ({ hash: "h", createdAt: "" }));
    off.accept("k", "the-token");
    expect(off.acceptedToken("k")).toBeUndefined();
  });

  it("caches a missing token too (a revoked one stays refused)", async () => {
    const load = vi.fn(async () => null);
    const cache = new TokenCache(30, () => 0);
    expect(await cache.get("gone", load)).toBeNull();
    expect(await cache.get("gone", load)).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it("keeps a refusal for REFUSAL_MS only: a token created just after it was tried works within seconds", async () => {
    let now = 0;
    let stored: { hash: string; createdAt: string } | null = null;
    const load = vi.fn(async () => stored);
    const cache = new TokenCache(30, () => now);
    expect(await cache.get("new", load)).toBeNull();
    stored = { hash: "h", createdAt: "" };
    now += REFUSAL_MS - 1;
    expect(await cache.get("new", load)).toBeNull();
    now += 1;
    expect(await cache.get("new", load)).toEqual(stored);
    expect(load).toHaveBeenCalledTimes(2);
    // Never longer than the cache's own time.
    const short = new TokenCache(1, () => now);
    expect(await short.get("other", async () => null)).toBeNull();
    now += 1_000;
    expect(await short.get("other", load)).toEqual(stored);
  });

  it("a flood of made-up tokens pushes out neither found tokens nor the token accepted for them", async () => {
    const cache = new TokenCache(30, () => 0);
    await cache.get("good", async () => ({ hash: "h", createdAt: "" }));
    cache.accept("good", "the-token");
    for (let i = 0; i < 30_000; i++) await cache.get(`made-up-${i}`, async () => null);
    expect(cache.acceptedToken("good")).toBe("the-token");
    const load = vi.fn(async () => null);
    // The set of refusals is bounded: the oldest went first, the newest are still kept.
    await cache.get("made-up-0", load);
    await cache.get("made-up-29999", load);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it("keeps nothing of a lookup that failed: the next request reads again", async () => {
    const cache = new TokenCache(30, () => 0);
    await expect(cache.get("k", async () => Promise.reject(new Error("KV unavailable")))).rejects.toThrow("KV unavailable");
    const load = vi.fn(async () => null);
    expect(await cache.get("k", load)).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });
});

describe("upstream exchanges", () => {
  const post = (body: unknown) => ({ method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });

  it("tells requests, cancellations, other POSTs, the session's DELETE and GET streams apart", () => {
    expect(classify(post({ jsonrpc: "2.0", id: 7, method: "tools/call" }))).toEqual({ kind: "request", id: 7 });
    expect(classify(post({ jsonrpc: "2.0", id: "a", method: "initialize" }))).toEqual({ kind: "request", id: "a" });
    expect(classify(post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } }))).toEqual({ kind: "cancel", cancels: 7 });
    expect(classify(post({ jsonrpc: "2.0", method: "notifications/initialized" }))).toEqual({ kind: "notification" });
    // An answer to a server-to-client request (result or error), a body that is not JSON: POSTs with a deadline.
    expect(classify(post({ jsonrpc: "2.0", id: 3, result: {} }))).toEqual({ kind: "answer", id: 3 });
    expect(classify(post({ jsonrpc: "2.0", id: "s1", error: { code: -32600, message: "no" } }))).toEqual({ kind: "answer", id: "s1" });
    expect(classify(post("{broken"))).toEqual({ kind: "notification" });
    expect(classify({ method: "DELETE" })).toEqual({ kind: "end" });
    expect(classify({ method: "GET" })).toEqual({ kind: "stream" });
    expect(classify(undefined)).toEqual({ kind: "stream" });
  });

  it("a deadline aborts with ExchangeTimeout after its time, unless cleared first", () => {
    vi.useFakeTimers();
    const late = deadline(500, "a notification");
    const cleared = deadline(500, "a GET stream");
    cleared.clear();
    vi.advanceTimersByTime(499);
    expect(late.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(late.signal.reason).toBeInstanceOf(ExchangeTimeout);
    expect((late.signal.reason as ExchangeTimeout).ms).toBe(500);
    expect(cleared.signal.aborted).toBe(false);
    vi.useRealTimers();
    // An entry without a timeout still bounds what is not a request.
    expect(exchangeMs(0)).toBeGreaterThan(0);
    expect(exchangeMs(2000)).toBe(2000);
  });
});

describe("fetch gate", () => {
  /** A fetch whose answers wait until released, one release per call, in order. */
  function heldFetch() {
    const releases: Array<() => void> = [];
    const fetch = () => new Promise<Response>((resolve) => releases.push(() => resolve(new Response("ok"))));
    return { fetch, releases };
  }
  const post = { method: "POST", body: "{}" };

  it("lets one upstream hold all slots but one, so another upstream always gets through", async () => {
    const gate = new FetchGate({ maxConnections: 3, maxResponseBytes: 1024 });
    const held = heldFetch();
    const hanging = gate.wrap(held.fetch, () => {}, "hanging");
    const other = gate.wrap(async () => new Response("fine"), () => {}, "other");
    const stuck = [hanging("u", post), hanging("u", post), hanging("u", post)];
    await Promise.resolve();
    expect(gate.inFlight).toBe(2);
    // The third exchange of the hanging upstream waits; the other upstream's does not.
    expect(await (await other("u", post)).text()).toBe("fine");
    held.releases.shift()!();
    await (await stuck[0]!).text();
    // The freed slot goes to the waiting exchange.
    expect(await waitFor(() => held.releases.length === 2)).toBe(true);
    for (const release of held.releases.splice(0)) release();
    await Promise.all(stuck.slice(1).map(async (p) => (await p).text()));
    expect(gate.inFlight).toBe(0);
  });

  it("an exchange waiting for a slot gives up when its signal aborts, and leaves the queue", async () => {
    const gate = new FetchGate({ maxConnections: 2, maxResponseBytes: 1024 });
    const held = heldFetch();
    const wrapped = gate.wrap(held.fetch, () => {}, "one");
    const first = wrapped("u", post);
    const controller = new AbortController();
    const waiting = wrapped("u", { ...post, signal: controller.signal });
    controller.abort(new Error("deadline"));
    await expect(waiting).rejects.toThrow("deadline");
    held.releases.shift()!();
    await (await first).text();
    expect(gate.inFlight).toBe(0);
    // Nothing was left queued behind the aborted one: the next exchange goes at once.
    const next = wrapped("u", post);
    expect(await waitFor(() => held.releases.length === 1)).toBe(true);
    held.releases.shift()!();
    await (await next).text();
  });
});
