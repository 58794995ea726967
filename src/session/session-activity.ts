// When a session object was last used, as its alarm reads it: noted in storage (`activity`) at most once a minute and
// at least four times per idle period, with the alarm kept within one idle period of the last use.
import type { Env } from "../lib/env.ts";
import { settings } from "../lib/settings.ts";
import type { SessionStore } from "./state.ts";

/** Activity is written to storage at most this often, and at least four times per idle period (the alarm reads it). */
export const ACTIVITY_WRITE_MS = 60_000;

/** What the activity uses of the object's storage: its alarm. */
export type AlarmStorage = Pick<DurableObjectStorage, "getAlarm" | "setAlarm">;

export class SessionActivity {
  readonly #env: Env;
  readonly #store: SessionStore;
  readonly #alarms: AlarmStorage;
  /** When activity was last written by this instance (0: not since it started, or since an idle close). */
  #written = 0;

  constructor(env: Env, store: SessionStore, alarms: AlarmStorage) {
    this.#env = env;
    this.#store = store;
    this.#alarms = alarms;
  }

  /**
   * Notes activity (in storage at most once a minute, and at least four times per idle period) and makes sure
   * the alarm looks at it within one idle period: after an idle close the alarm waits for the time-to-live, so a
   * session used again pulls it forward, or its new clients would stay open until then. True when it was written
   * now (the cadence at which the team's index is told of the session's use).
   */
  async touch(): Promise<boolean> {
    const now = Date.now();
    const idleMs = settings(this.#env).upstreamIdleSeconds * 1000;
    if (now - this.#written < Math.min(ACTIVITY_WRITE_MS, idleMs / 4)) return false;
    this.#written = now;
    await this.#store.putActivity(now);
    const alarm = await this.#alarms.getAlarm();
    if (alarm === null || alarm > now + idleMs) await this.#alarms.setAlarm(now + idleMs);
    return true;
  }

  /** The runtime went at an idle close: the next request notes its activity at once, which brings the alarm back. */
  forget(): void {
    this.#written = 0;
  }
}
