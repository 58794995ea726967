// The one bounded cache: its bound (the oldest set goes, never everything at once), its time to live (the cache's,
// or one entry's own), and that reading reorders nothing.
import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../src/lib/bounded-cache.ts";

describe("BoundedCache", () => {
  it("holds at most max entries, dropping the one set longest ago, one at a time", () => {
    const cache = new BoundedCache<string, number>({ max: 3 });
    for (const [i, key] of ["a", "b", "c", "d"].entries()) cache.set(key, i);
    expect(cache.size).toBe(3);
    expect(cache.get("a")).toBeUndefined();
    expect([cache.get("b"), cache.get("c"), cache.get("d")]).toEqual([1, 2, 3]);
    // A thousand new keys push out the old ones one by one: the last three are all there.
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i);
    expect(cache.size).toBe(3);
    expect([cache.get("k997"), cache.get("k998"), cache.get("k999")]).toEqual([997, 998, 999]);
  });

  it("moves a key set again to the newest place; reading it does not", () => {
    const cache = new BoundedCache<string, number>({ max: 2 });
    cache.set("a", 1).set("b", 2);
    cache.set("a", 10);
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([10, undefined, 3]);

    const read = new BoundedCache<string, number>({ max: 2 });
    read.set("a", 1).set("b", 2);
    expect(read.get("a")).toBe(1);
    read.set("c", 3);
    expect(read.has("a")).toBe(false);
    expect(read.has("b")).toBe(true);
  });

  it("serves an entry for its time to live, the cache's or its own, and then reads it as absent and removes it", () => {
    let now = 1_000;
    const cache = new BoundedCache<string, string>({ max: 10, ttlMs: 500, now: () => now });
    cache.set("default", "x");
    cache.set("short", "y", 100);
    cache.set("forever", "z", Infinity);
    now += 99;
    expect([cache.get("default"), cache.get("short"), cache.get("forever")]).toEqual(["x", "y", "z"]);
    now += 1;
    expect(cache.get("short")).toBeUndefined();
    expect(cache.size).toBe(2);
    now += 399;
    expect(cache.get("default")).toBe("x");
    now += 1;
    expect(cache.has("default")).toBe(false);
    now += 1e9;
    expect(cache.get("forever")).toBe("z");
    // A time to live of 0 or less is never served.
    cache.set("gone", "w", 0);
    expect(cache.get("gone")).toBeUndefined();
  });

  it("without a time to live keeps entries until pushed out, deleted or cleared", () => {
    const cache = new BoundedCache<number, true>({ max: 5 });
    cache.set(1, true).set(2, true);
    expect(cache.delete(1)).toBe(true);
    expect(cache.delete(1)).toBe(false);
    expect(cache.has(2)).toBe(true);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it("with a weight bound pushes out the oldest until the rest fit, never the entry just set, and tracks the weight", () => {
    let now = 0;
    const cache = new BoundedCache<string, number>({ max: Infinity, maxWeight: 10, weigh: (n) => n, ttlMs: 5, now: () => now });
    cache.set("a", 4).set("b", 4);
    expect(cache.weight).toBe(8);
    // Setting "a" again makes it the newest: "b" is the oldest now.
    cache.set("a", 4).set("c", 4);
    expect([cache.has("a"), cache.has("b"), cache.has("c")]).toEqual([true, false, true]);
    expect(cache.weight).toBe(8);
    // One entry heavier than the bound stays alone.
    cache.set("huge", 30);
    expect(cache.size).toBe(1);
    expect(cache.weight).toBe(30);
    // An expired entry read, deleted, or the cache cleared, gives its weight back.
    now = 10;
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.weight).toBe(0);
    cache.set("d", 3);
    cache.delete("d");
    expect(cache.weight).toBe(0);
    cache.set("e", 2).clear();
    expect(cache.weight).toBe(0);
  });

  it("refuses a bound below one", () => {
    expect(() => new BoundedCache({ max: 0 })).toThrow(RangeError);
    expect(() => new BoundedCache({ max: Number.NaN })).toThrow(RangeError);
  });
});
