// The one bounded in-memory cache: what an isolate (or one object) keeps to save a read, a parse or a MAC, never a
// store of record. At most `max` entries: setting a new key when full drops the entry set longest ago (a Map keeps
// insertion order, and setting a key again moves it to the end), so a flood of new keys pushes out only the oldest
// and never empties the cache at once. Reading does not reorder: what the caller refreshes by setting it again stays.
// With `ttlMs`, an entry is served until that long after it was set (or the `ttlMs` its `set` names) and then read
// as absent; an expired entry is removed when it is read, or pushed out like any other. With `maxWeight` and `weigh`,
// the entries' weights together stay within it too (the oldest go first, never the entry just set).

export interface BoundedCacheOptions<V = unknown> {
  /** At most this many entries (at least 1). */
  max: number;
  /** How long an entry is served after it was set, in ms; absent: until it is pushed out. */
  ttlMs?: number | undefined;
  /** The clock expiry is judged by (tests bring their own). */
  now?: () => number;
  /** At most this much weight in all (e.g. estimated bytes), each value weighed by `weigh` when set. */
  maxWeight?: number | undefined;
  weigh?: ((value: V) => number) | undefined;
}

interface Slot<V> {
  value: V;
  /** When it stops being served (ms); Infinity without a time to live. */
  until: number;
  weight: number;
}

export class BoundedCache<K, V> {
  readonly #slots = new Map<K, Slot<V>>();
  readonly #max: number;
  readonly #ttlMs: number | undefined;
  readonly #now: () => number;
  readonly #maxWeight: number;
  readonly #weigh: (value: V) => number;
  #weight = 0;

  constructor({ max, ttlMs, now = Date.now, maxWeight = Infinity, weigh = () => 0 }: BoundedCacheOptions<V>) {
    if (!(max >= 1)) throw new RangeError(`a bounded cache holds at least one entry (max ${max})`);
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.#maxWeight = maxWeight;
    this.#weigh = weigh;
  }

  /** The value set for `key`, unless it expired (then it is removed) or was pushed out. */
  get(key: K): V | undefined {
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    if (slot.until !== Infinity && slot.until <= this.#now()) {
      this.delete(key);
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
    if (!this.delete(key) && this.#slots.size >= this.#max) this.delete(this.#slots.keys().next().value!);
    const weight = this.#weigh(value);
    this.#slots.set(key, { value, until: ttlMs === Infinity ? Infinity : this.#now() + ttlMs, weight });
    this.#weight += weight;
    for (const oldest of this.#slots.keys()) {
      if (this.#weight <= this.#maxWeight || oldest === key) break;
      this.delete(oldest);
    }
    return this;
  }

  delete(key: K): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    this.#weight -= slot.weight;
    return this.#slots.delete(key);
  }

  clear(): void {
    this.#slots.clear();
    this.#weight = 0;
  }

  /** The weight of the entries held (0 without `weigh`). */
  get weight(): number {
    return this.#weight;
  }

  /** Entries held, expired ones not yet removed included. */
  get size(): number {
    return this.#slots.size;
  }
}
