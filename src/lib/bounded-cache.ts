// The one bounded in-memory cache: what an isolate (or one object) keeps to save a read, a parse or a MAC, never a
// store of record. At most `max` entries: setting a new key when full drops the entry set longest ago (a Map keeps
// insertion order, and setting a key again moves it to the end), so a flood of new keys pushes out only the oldest
// and never empties the cache at once. Reading does not reorder: what the caller refreshes by setting it again stays.
// With `ttlMs`, an entry is served until that long after it was set (or the `ttlMs` its `set` names) and then read
// as absent; an expired entry is removed when it is read, or pushed out like any other.

export interface BoundedCacheOptions {
  /** At most this many entries (at least 1). */
  max: number;
  /** How long an entry is served after it was set, in ms; absent: until it is pushed out. */
  ttlMs?: number | undefined;
  /** The clock expiry is judged by (tests bring their own). */
  now?: () => number;
}

interface Slot<V> {
  value: V;
  /** When it stops being served (ms); Infinity without a time to live. */
  until: number;
}

export class BoundedCache<K, V> {
  readonly #slots = new Map<K, Slot<V>>();
  readonly #max: number;
  readonly #ttlMs: number | undefined;
  readonly #now: () => number;

  constructor({ max, ttlMs, now = Date.now }: BoundedCacheOptions) {
    if (!(max >= 1)) throw new RangeError(`a bounded cache holds at least one entry (max ${max})`);
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The value set for `key`, unless it expired (then it is removed) or was pushed out. */
  get(key: K): V | undefined {
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    if (slot.until !== Infinity && slot.until <= this.#now()) {
      this.#slots.delete(key);
      return undefined;
    }
    return slot.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /**
   * Keeps `value` under `key` as the newest entry, for `ttlMs` (by default the cache's own; Infinity, or a cache
   * without one: until pushed out).
   * When the cache is full and `key` is new, the entry set longest ago goes.
   */
  set(key: K, value: V, ttlMs: number = this.#ttlMs ?? Infinity): this {
    if (!this.#slots.delete(key) && this.#slots.size >= this.#max) this.#slots.delete(this.#slots.keys().next().value!);
    this.#slots.set(key, { value, until: ttlMs === Infinity ? Infinity : this.#now() + ttlMs });
    return this;
  }

  delete(key: K): boolean {
    return this.#slots.delete(key);
  }

  clear(): void {
    this.#slots.clear();
  }

  /** Entries held, expired ones not yet removed included. */
  get size(): number {
    return this.#slots.size;
  }
}
