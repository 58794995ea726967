// Each upstream's protocol era, as its last negotiation found it (2026-07-28 "modern" with its discover result, or
// 2025 "legacy"), in KV with a per-isolate map in front, so a session connects a known upstream without probing it.
// Keyed by the upstream's name and checked against the hash of its entry (configHash: transport, URL, header
// references), so a changed entry is probed afresh. A verdict older than REPROBE_AFTER_MS is not supplied. A stored
// verdict that does not parse is a cache miss (the upstream is probed), logged once per key.
import * as z from "zod";
import { isSpecType, type DiscoverResult } from "@modelcontextprotocol/client";
import { jsonOrUndefined, kvKeys, logUnreadable } from "../config/keys.ts";
import type { EraCache, PriorVerdict } from "../upstream/client.ts";
import { configHash } from "./catalog-cache.ts";
import { accepted, type KvLike, type Same } from "./kv.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";

/**
 * How long a verdict is supplied before the upstream is probed again. Legacy verdicts need it most: an upgraded
 * server still answers `initialize`, so a stale legacy verdict would hold forever without a date. A modern one
 * fails loudly when stale, but its discover result also carries the capabilities and instructions the catalog
 * is read by, which the server may change.
 */
export const REPROBE_AFTER_MS = 24 * 60 * 60 * 1000;

/** The verdict itself, as `connect({ prior })` takes it (a legacy verdict carries nothing else: the SDK checks). */
const Era = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("modern"),
    discover: z.custom<DiscoverResult>((v) => isSpecType.DiscoverResult(v), "not a discover result"),
  }),
  z.strictObject({ kind: z.literal("legacy") }),
]);
const eraMatches: Same<z.output<typeof Era>, PriorVerdict> = true;
void eraMatches;

/** `team/<team>/era/<server>`: the verdict, the hash of the entry's config it holds for, when it was established. */
const StoredEra = z.object({ config: z.string(), era: Era, checkedAt: z.iso.datetime() });
export type StoredEra = z.output<typeof StoredEra>;

/**
 * Verdicts read or written in this isolate, by KV key: shared by the isolate's sessions unless a test brings its
 * own (a Map will do).
 */
export interface EraMemo {
  get(key: string): StoredEra | undefined;
  set(key: string, entry: StoredEra): unknown;
  delete(key: string): unknown;
}
/** It saves reads, it is not the store: past 1000 keys the oldest verdict set goes. */
const isolateMemo: EraMemo = new BoundedCache<string, StoredEra>({ max: 1000 });

export interface EraCacheOptions {
  memo?: EraMemo;
  now?: () => number;
}

export function kvEraCache(kv: KvLike, team: string, options: EraCacheOptions = {}): EraCache {
  const memo = options.memo ?? isolateMemo;
  const now = options.now ?? Date.now;
  const fresh = (entry: StoredEra) => now() - Date.parse(entry.checkedAt) < REPROBE_AFTER_MS;

  /** The entry for this config: the memo's, else KV's (another isolate may have written a newer one). */
  async function read(key: string, config: string): Promise<StoredEra | undefined> {
    const known = memo.get(key);
    if (known?.config === config && fresh(known)) return known;
    const text = await kv.get(key);
    if (text === null) return undefined;
    const entry = accepted(StoredEra, jsonOrUndefined(text));
    if (!entry) {
      logUnreadable("era verdict", key);
      return undefined;
    }
    memo.set(key, entry);
    return entry.config === config ? entry : undefined;
  }

  return {
    async get(spec) {
      const entry = await read(kvKeys.era(team, spec.name), await configHash(spec));
      return entry && fresh(entry) ? entry.era : undefined;
    },
    async put(spec, verdict) {
      const key = kvKeys.era(team, spec.name);
      const entry: StoredEra = { config: await configHash(spec), era: verdict, checkedAt: new Date(now()).toISOString() };
      // Sessions of one isolate that started together probed together: the first one's write is enough (KV takes
      // about one write per second per key).
      const known = memo.get(key);
      if (known?.config === entry.config && fresh(known) && JSON.stringify(known.era) === JSON.stringify(verdict)) return;
      memo.set(key, entry);
      await kv.put(key, JSON.stringify(entry));
    },
    async drop(spec) {
      const key = kvKeys.era(team, spec.name);
      memo.delete(key);
      await kv.delete(key);
    },
  };
}
