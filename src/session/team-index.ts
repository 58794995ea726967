// One per team: the ids of the team's live sessions, since Durable Objects cannot be listed, and the team's token
// usage per UTC day. Admin reloads and reconnects find the sessions here; a session adds itself at initialize and
// removes itself when it ends. Sessions send their usage figures here (src/session/usage.ts); the admin API reads them.
import { DurableObject } from "cloudflare:workers";
import { logUnreadable } from "../config/keys.ts";
import type { Env, TeamIndexRpc, UsageDay as UsageDayShape } from "../env.ts";
import { accepted, type Same } from "../teams/kv.ts";
import { USAGE_DAYS_KEPT, UsageDay, UsageFigures, addFigures, emptyFigures, firstDayOf } from "./usage.ts";

/** The RPC's types (src/env.ts, which imports nothing) are the schema's. */
const dayMatches: Same<UsageDay, UsageDayShape> = true;
void dayMatches;

const PREFIX = "session:";
/** `usage:<YYYY-MM-DD>`: the figures of one UTC day, at most USAGE_DAYS_KEPT of them. */
const USAGE_PREFIX = "usage:";

export class TeamIndex extends DurableObject<Env> implements TeamIndexRpc {
  async add(sessionId: string): Promise<void> {
    await this.ctx.storage.put(PREFIX + sessionId, Date.now());
  }

  async remove(sessionId: string): Promise<void> {
    await this.ctx.storage.delete(PREFIX + sessionId);
  }

  async list(): Promise<string[]> {
    return [...(await this.ctx.storage.list({ prefix: PREFIX })).keys()].map((key) => key.slice(PREFIX.length));
  }

  async addUsage(days: UsageDay[]): Promise<void> {
    const now = Date.now();
    const first = firstDayOf(now, USAGE_DAYS_KEPT);
    // A day already out of the window, or a malformed entry, is not written.
    const fresh = days.filter((d) => UsageDay.safeParse(d).success && d.day >= first);
    if (fresh.length > 0) {
      const stored = await this.ctx.storage.get([...new Set(fresh.map((d) => USAGE_PREFIX + d.day))]);
      const next: Record<string, UsageFigures> = {};
      for (const { day, figures } of fresh) {
        const key = USAGE_PREFIX + day;
        next[key] = addFigures(next[key] ?? this.#figures(key, stored.get(key)) ?? emptyFigures(), figures);
      }
      await this.ctx.storage.put(next);
    }
    // Days that have left the window go as new ones come.
    const old = [...(await this.ctx.storage.list({ prefix: USAGE_PREFIX, end: USAGE_PREFIX + first })).keys()];
    if (old.length > 0) await this.ctx.storage.delete(old);
  }

  async usage(days: number): Promise<UsageDay[]> {
    const window = Math.min(Math.max(Math.trunc(days) || 1, 1), USAGE_DAYS_KEPT);
    const rows = await this.ctx.storage.list({ prefix: USAGE_PREFIX, start: USAGE_PREFIX + firstDayOf(Date.now(), window) });
    return [...rows].flatMap(([key, value]) => {
      const figures = this.#figures(key, value);
      return figures ? [{ day: key.slice(USAGE_PREFIX.length), figures }] : [];
    });
  }

  /** A stored day's figures; unreadable ones are left out (and counted afresh from the next addition), logged once. */
  #figures(key: string, value: unknown): UsageFigures | undefined {
    if (value === undefined) return undefined;
    const figures = accepted(UsageFigures, value);
    if (!figures) logUnreadable("usage figures", key);
    return figures;
  }
}
