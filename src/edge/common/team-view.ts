// What the routes need of a team's config without validating it, read from KV (the config's presence and its `view`
// alone) and kept per isolate for TOKEN_CACHE_SECONDS, as token lookups are:
// - its default view: a 2026 request carries no session, so the router, not a session object, decides whether it
//   goes to the code object; a changed default reaches 2026 clients within that bound (plus KV's propagation). 2025
//   sessions read the config at initialize (src/session/object.ts);
// - whether the team exists: the OAuth and connect routes wake a team's index object only for a team that does, so
//   made-up team names create nothing. An unknown team is kept only as briefly as an unknown token (REFUSAL_MS), so a
//   team created just after it was asked for is found within seconds.
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { loadTeamSummary, type KvText } from "../../config/load.ts";
import type { View } from "../../config/view.ts";
import { REFUSAL_MS, cacheTtlMs } from "./token-cache.ts";

interface Summary {
  exists: boolean;
  view: View | undefined;
  until: number;
}

/**
 * By team, set again at each read from KV, so the oldest entry is the team read longest ago: made-up names push out
 * only each other. Expiry is judged by the caller's clock (`until`).
 */
const known = new BoundedCache<string, Summary>({ max: 1000 });

async function summary(kv: KvText, team: string, seconds: number, now: () => number): Promise<Summary> {
  const ttlMs = cacheTtlMs(seconds);
  const hit = ttlMs > 0 ? known.get(team) : undefined;
  if (hit && hit.until > now()) return hit;
  const read = await loadTeamSummary(kv, team);
  const fresh = { ...read, until: now() + (read.exists ? ttlMs : Math.min(REFUSAL_MS, ttlMs)) };
  if (ttlMs > 0) known.set(team, fresh);
  return fresh;
}

/** The team's default view (undefined: the config names none); `seconds` as TOKEN_CACHE_SECONDS, clamped to [0, 60]. */
export async function teamDefaultView(kv: KvText, team: string, seconds: number, now: () => number = Date.now): Promise<View | undefined> {
  return (await summary(kv, team, seconds, now)).view;
}

/** Whether the team has a config; `seconds` as TOKEN_CACHE_SECONDS. */
export async function teamExists(kv: KvText, team: string, seconds: number, now: () => number = Date.now): Promise<boolean> {
  return (await summary(kv, team, seconds, now)).exists;
}
