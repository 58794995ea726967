// A team's token usage per UTC day, kept in its index object: the sum of its sessions' flushes (src/session/usage.ts
// is what a session counts and sends), the team's total and each principal's share, at most USAGE_DAYS_KEPT days. The
// admin API reads it.
import { logUnreadable } from "../config/keys.ts";
import type { UsageDay as UsageDayShape } from "../lib/env.ts";
import { accepted, type Same } from "../store/kv.ts";
import { PRINCIPAL } from "./live-sessions.ts";
import { USAGE_DAYS_KEPT, UsageDay, UsageFigures, addFigures, emptyFigures, firstDayOf } from "../session/usage.ts";

/** The RPC's types (src/lib/env.ts, which imports nothing) are the schema's. */
const dayMatches: Same<UsageDay, UsageDayShape> = true;
void dayMatches;

/** `usage:<YYYY-MM-DD>`: the figures of one UTC day, at most USAGE_DAYS_KEPT of them. */
const USAGE_PREFIX = "usage:";
/** `usage-by:<YYYY-MM-DD>:<principal>`: one principal's share of a day (same window; sorted by day like the totals). */
const BY_PREFIX = "usage-by:";
/** `YYYY-MM-DD:`, between the prefix and the principal of a share's key. */
const DAY_AND_COLON = 11;

/** A window of `days` UTC days ending today, as asked (a number of days), bounded to 1..USAGE_DAYS_KEPT. */
const windowOf = (days: number): number => Math.min(Math.max(Math.trunc(days) || 1, 1), USAGE_DAYS_KEPT);

export class UsageLedger {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /**
   * Adds a session's figures to the team's days, and to `principal`'s (`t:<token id>` or `u:<user id>`) when it is
   * one; then deletes the days that have left the window.
   */
  async add(days: UsageDay[], principal?: string): Promise<void> {
    const now = Date.now();
    const first = firstDayOf(now, USAGE_DAYS_KEPT);
    // A day already out of the window, or a malformed entry, is not written.
    const fresh = days.flatMap((d) => {
      const parsed = UsageDay.safeParse(d);
      return parsed.success && parsed.data.day >= first ? [parsed.data] : [];
    });
    const by = typeof principal === "string" && PRINCIPAL.test(principal) ? principal : undefined;
    if (fresh.length > 0) {
      // Each day's team total, and the principal's share of it: one read and one write of all the keys.
      const keysOf = (day: string) => [USAGE_PREFIX + day, ...(by ? [`${BY_PREFIX}${day}:${by}`] : [])];
      const stored = await this.#storage.get([...new Set(fresh.flatMap((d) => keysOf(d.day)))]);
      const next: Record<string, UsageFigures> = {};
      for (const { day, figures } of fresh) {
        for (const key of keysOf(day)) next[key] = addFigures(next[key] ?? figuresAt(key, stored.get(key)) ?? emptyFigures(), figures);
      }
      await this.#storage.put(next);
    }
    // Days that have left the window go as new ones come.
    const old = [
      ...(await this.#storage.list({ prefix: USAGE_PREFIX, end: USAGE_PREFIX + first })).keys(),
      ...(await this.#storage.list({ prefix: BY_PREFIX, end: BY_PREFIX + first })).keys(),
    ];
    if (old.length > 0) await this.#storage.delete(old);
  }

  /** The team's figures of the last `days` UTC days (today included), oldest first; days with nothing recorded left out. */
  async days(days: number): Promise<UsageDay[]> {
    const rows = await this.#storage.list({ prefix: USAGE_PREFIX, start: USAGE_PREFIX + firstDayOf(Date.now(), windowOf(days)) });
    return [...rows].flatMap(([key, value]) => {
      const figures = figuresAt(key, value);
      return figures ? [{ day: key.slice(USAGE_PREFIX.length), figures }] : [];
    });
  }

  /** Each principal's figures summed over the last `days` UTC days, principals in order. */
  async byPrincipal(days: number): Promise<Array<{ principal: string; figures: UsageFigures }>> {
    const rows = await this.#storage.list({ prefix: BY_PREFIX, start: BY_PREFIX + firstDayOf(Date.now(), windowOf(days)) });
    const sums = new Map<string, UsageFigures>();
    for (const [key, value] of rows) {
      // `usage-by:YYYY-MM-DD:<principal>`: the principal is all after the day.
      const principal = key.slice(BY_PREFIX.length + DAY_AND_COLON);
      const figures = figuresAt(key, value);
      if (figures) sums.set(principal, addFigures(sums.get(principal) ?? emptyFigures(), figures));
    }
    return [...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([principal, figures]) => ({ principal, figures }));
  }
}

/** A stored day's figures; unreadable ones are left out (and counted afresh from the next addition), logged once. */
function figuresAt(key: string, value: unknown): UsageFigures | undefined {
  if (value === undefined) return undefined;
  const figures = accepted(UsageFigures, value);
  if (!figures) logUnreadable("usage figures", key);
  return figures;
}
