// A team's live sessions, kept in its index object (Durable Objects cannot be listed): every id, for the admin API's
// reloads and reconnects, and each principal's share, in the order its sessions were last used. A principal holds
// at most MAX_SESSIONS_PER_PRINCIPAL: at the bound, its least recently used session that serves nothing right now
// ends to make room for the new one (else the least recently used whose only use is a host's open GET stream); when
// every one is answering a request, the new one is refused. Hosts often go away without
// ending their session (it then lives until SESSION_TTL_SECONDS), so a plain refusal would lock a member out for a
// day after a few restarts of their editor; ending the stale session costs its host nothing it still uses.
import type { Admission } from "../lib/env.ts";

/** `session:<id>` → the principal it belongs to (a number: listed before sessions had principals here). */
const SESSION = "session:";
/** `live:<principal>/<id>` → when the session was last used (ms), at most a minute behind. */
const LIVE = "live:";
/** A principal as sessions name them (src/session/state.ts principalOf): `t:<token id>` or `u:<user id>`; no `/`. */
export const PRINCIPAL = /^[tu]:[A-Za-z0-9._-]{1,100}$/;

const liveKey = (principal: string, sessionId: string): string => `${LIVE}${principal}/${sessionId}`;

export class LiveSessions {
  readonly #storage: DurableObjectStorage;
  /** Each principal's admission under way: one at a time, so that two cannot end the same session and both enter. */
  readonly #turns = new Map<string, Promise<unknown>>();
  /** The last time written: each later one is at least a millisecond past it, so that the order of use has no ties. */
  #last = 0;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /**
   * Lists `sessionId` as one of `principal`'s, ending the least recently used of its idle sessions when it already
   * holds `max` (`endIfIdle` ends one and says whether it did). A session already listed is admitted again.
   */
  admit(sessionId: string, principal: string, max: number, endIfIdle: (sessionId: string, evenListening: boolean) => Promise<boolean>): Promise<Admission> {
    if (!PRINCIPAL.test(principal)) throw new Error("a session's principal is t:<token id> or u:<user id>");
    const turn = (this.#turns.get(principal) ?? Promise.resolve()).then(() => this.#admit(sessionId, principal, max, endIfIdle));
    const settled = turn.catch(() => {});
    this.#turns.set(principal, settled);
    void settled.then(() => this.#turns.get(principal) === settled && this.#turns.delete(principal));
    return turn;
  }

  async #admit(sessionId: string, principal: string, max: number, endIfIdle: (sessionId: string, evenListening: boolean) => Promise<boolean>): Promise<Admission> {
    const prefix = liveKey(principal, "");
    const live = await this.#storage.list<unknown>({ prefix });
    if (live.has(prefix + sessionId)) return { admitted: true };
    // Past the bound by more than one only when an operator lowered it: as many end as bring it back.
    const needed = live.size - max + 1;
    let ended: string | undefined;
    if (needed > 0) {
      const oldestFirst = [...live]
        .map(([key, at]) => ({ id: key.slice(prefix.length), at: typeof at === "number" ? at : 0 }))
        .sort((a, b) => a.at - b.at);
      let room = 0;
      // First those that serve nothing at all; then, if still short, those whose only use is a host's open GET stream
      // (hosts that exit without ending their session can leave one open): a call under way is never cut.
      const gone = new Set<string>();
      for (const evenListening of [false, true]) {
        for (const { id } of oldestFirst) {
          if (room === needed) break;
          if (gone.has(id)) continue;
          // One that cannot be asked (its object failed) stays listed and counted: it may be in use.
          if (!(await endIfIdle(id, evenListening).catch(() => false))) continue;
          await this.remove(id);
          gone.add(id);
          ended ??= id;
          room++;
        }
      }
      if (room < needed) return { admitted: false, held: live.size - room };
    }
    await this.#storage.put({ [SESSION + sessionId]: principal, [prefix + sessionId]: this.#now() });
    return ended === undefined ? { admitted: true } : { admitted: true, ended };
  }

  /** The session was used now; a session no longer listed is not listed again. */
  async seen(sessionId: string): Promise<void> {
    const principal = await this.#storage.get(SESSION + sessionId);
    if (typeof principal === "string") await this.#storage.put(liveKey(principal, sessionId), this.#now());
  }

  #now(): number {
    this.#last = Math.max(Date.now(), this.#last + 1);
    return this.#last;
  }

  async remove(sessionId: string): Promise<void> {
    const principal = await this.#storage.get(SESSION + sessionId);
    await this.#storage.delete([SESSION + sessionId, ...(typeof principal === "string" ? [liveKey(principal, sessionId)] : [])]);
  }

  /** Every live session's id (of every principal). */
  async list(): Promise<string[]> {
    return [...(await this.#storage.list({ prefix: SESSION })).keys()].map((key) => key.slice(SESSION.length));
  }
}
