// The team config's default view as the 2026 era's router needs it: a request of that era carries no session, so the
// router, not a session object, decides whether it goes to the code object. Read from KV (the config's `view` alone)
// and kept per isolate for TOKEN_CACHE_SECONDS, as token lookups are: a changed default reaches 2026 clients within
// that bound (plus KV's propagation). 2025 sessions read the config at initialize (src/session/object.ts).
import { loadTeamView, type KvText } from "../config/load.ts";
import type { View } from "../config/view.ts";
import { cacheTtlMs } from "./token-cache.ts";

const MAX_TEAMS = 1000;

const known = new Map<string, { view: View | undefined; until: number }>();

/** The team's default view (undefined: the config names none); `seconds` as TOKEN_CACHE_SECONDS, clamped to [0, 60]. */
export async function teamDefaultView(kv: KvText, team: string, seconds: number, now: () => number = Date.now): Promise<View | undefined> {
  const ttlMs = cacheTtlMs(seconds);
  const hit = ttlMs > 0 ? known.get(team) : undefined;
  if (hit && hit.until > now()) return hit.view;
  const view = await loadTeamView(kv, team);
  if (ttlMs > 0) {
    if (known.size >= MAX_TEAMS) known.clear();
    known.set(team, { view, until: now() + ttlMs });
  }
  return view;
}
