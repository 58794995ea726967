// A short in-isolate cache of token lookups: saves a KV read per request; bounds how long a revoked token lingers.
// It also keeps, per lookup, the one token already found to match it, so that a known token needs no hash again.
// A token that was not found is kept apart, briefly and in a bounded set of its own: a flood of made-up tokens is
// refused again without a read, cannot push found tokens out, and a token created just after it was tried works
// within seconds. A failed read (it throws) is never kept.
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { SETTING_DEFAULTS } from "../../lib/settings.ts";
import type { TokenRecord } from "../../config/keys.ts";

export const DEFAULT_TOKEN_CACHE_SECONDS = SETTING_DEFAULTS.tokenCacheSeconds;
export const MAX_TOKEN_CACHE_SECONDS = 60;
const MAX_ENTRIES = 10_000;
/** How long a token that was not found stays refused without a read (never longer than the cache's own time). */
export const REFUSAL_MS = 5_000;
const MAX_REFUSALS = 10_000;

/** How long the router's isolate keeps what it read of a team (TOKEN_CACHE_SECONDS, clamped to [0, 60]), in ms. */
export const cacheTtlMs = (seconds: number): number =>
  Math.min(Math.max(Number.isFinite(seconds) ? seconds : DEFAULT_TOKEN_CACHE_SECONDS, 0), MAX_TOKEN_CACHE_SECONDS) * 1000;

interface Entry {
  record: TokenRecord;
  /** The token whose hash matched `record` (held in this isolate's memory only, until the entry expires). */
  accepted?: string;
}

export class TokenCache {
  readonly #entries: BoundedCache<string, Entry>;
  /** Lookups that found nothing (the oldest refusal goes first when full). */
  readonly #refusals: BoundedCache<string, true>;
  readonly #ttlMs: number;

  /** `seconds` is clamped to [0, 60]; 0 disables caching (refusals included). */
  constructor(seconds: number, now: () => number = Date.now) {
    this.#ttlMs = cacheTtlMs(seconds);
    this.#entries = new BoundedCache({ max: MAX_ENTRIES, ttlMs: this.#ttlMs, now });
    this.#refusals = new BoundedCache({ max: MAX_REFUSALS, ttlMs: Math.min(REFUSAL_MS, this.#ttlMs), now });
  }

  async get(key: string, load: () => Promise<TokenRecord | null>): Promise<TokenRecord | null> {
    if (this.#ttlMs === 0) return load();
    const hit = this.#entries.get(key);
    if (hit) return hit.record;
    if (this.#refusals.has(key)) return null;
    const record = await load();
    if (record === null) {
      this.#refusals.set(key, true);
      return null;
    }
    this.#entries.set(key, { record });
    return record;
  }

  /** The token accepted for `key` while its lookup is cached (the caller compares, in constant time). */
  acceptedToken(key: string): string | undefined {
    return this.#entries.get(key)?.accepted;
  }

  /** The cached record `acceptedToken` matched (what the token says besides its hash: its view). */
  acceptedRecord(key: string): TokenRecord | undefined {
    const hit = this.#entries.get(key);
    return hit?.accepted === undefined ? undefined : hit.record;
  }

  /** Notes that `token` matched the cached lookup of `key`; the entry still expires when its lookup does. */
  accept(key: string, token: string): void {
    const hit = this.#entries.get(key);
    if (hit) hit.accepted = token;
  }
}
