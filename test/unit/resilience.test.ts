// Pure timing and paging logic, with fake clocks: backoff, the reconnect budget, Retry-After, the token cache.
import { describe, expect, it, vi } from "vitest";
import { ReconnectBudget, backoffDelay, parseRetryAfter, sleep } from "../../src/upstream/backoff.ts";
import { TokenCache } from "../../src/http/token-cache.ts";

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

  it("caches a missing token too (a revoked one stays refused)", async () => {
    const load = vi.fn(async () => null);
    const cache = new TokenCache(30, () => 0);
    expect(await cache.get("gone", load)).toBeNull();
    expect(await cache.get("gone", load)).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });
});
