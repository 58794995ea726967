// A short in-isolate cache of token lookups: saves a KV read per request; bounds how long a revoked token lingers.
import { SETTING_DEFAULTS } from "../settings.ts";
import type { TokenRecord } from "../config/keys.ts";

export const DEFAULT_TOKEN_CACHE_SECONDS = SETTING_DEFAULTS.tokenCacheSeconds;
export const MAX_TOKEN_CACHE_SECONDS = 60;

export class TokenCache {
  readonly #entries = new Map<string, { record: TokenRecord | null; expires: number }>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  /** `seconds` is clamped to [0, 60]; 0 disables caching. */
  constructor(seconds: number, now: () => number = Date.now) {
    this.#ttlMs = Math.min(Math.max(Number.isFinite(seconds) ? seconds : DEFAULT_TOKEN_CACHE_SECONDS, 0), MAX_TOKEN_CACHE_SECONDS) * 1000;
    this.#now = now;
  }

  async get(key: string, load: () => Promise<TokenRecord | null>): Promise<TokenRecord | null> {
    if (this.#ttlMs === 0) return load();
    const hit = this.#entries.get(key);
    if (hit && hit.expires > this.#now()) return hit.record;
    const record = await load();
    if (this.#entries.size > 10_000) this.#entries.clear();
    this.#entries.set(key, { record, expires: this.#now() + this.#ttlMs });
    return record;
  }
}
