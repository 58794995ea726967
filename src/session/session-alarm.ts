// A session object's alarm: idle upstream clients are closed (so the object can hibernate and is not billed while idle;
// the next call reconnects), the usage figures not sent yet go to the team's index, and a session unused for its
// time-to-live is deleted.
import type { Env } from "../lib/env.ts";
import { settings } from "../lib/settings.ts";
import type { IndexReports } from "./index-reports.ts";
import type { ObjectRuntimes } from "./object-runtimes.ts";
import type { SessionActivity } from "./session-activity.ts";
import type { AuditOutbox } from "./audit-outbox.ts";
import { AUDIT_RETRY_MS, type SessionEnd } from "./session-end.ts";
import type { SessionStore } from "./state.ts";

/** What the alarm uses of the object's storage besides the store: the alarm itself. */
export type AlarmClock = Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">;

/** The alarm's parts: the object's storage and the other parts it acts through. */
export interface AlarmParts {
  env: Env;
  store: SessionStore;
  alarms: AlarmClock;
  runtimes: ObjectRuntimes;
  activity: SessionActivity;
  reports: IndexReports;
  end: SessionEnd;
  audit: AuditOutbox;
}

export class SessionAlarm {
  readonly #parts: AlarmParts;

  constructor(parts: AlarmParts) {
    this.#parts = parts;
  }

  /**
   * Idle upstream clients are closed (so the object can hibernate and is not billed while idle; the next call
   * reconnects), and a session unused for its time-to-live is deleted.
   */
  async ring(): Promise<void> {
    const { env, store, alarms, runtimes, activity, reports, end, audit } = this.#parts;
    // Audit entries waiting (an evicted object's, or an ended session's that its end could not send) go first.
    await audit.ship();
    const record = await store.session();
    if (!record) {
      // An ended session whose audit entries the team's index did not take yet: they are kept, and tried again.
      if (await audit.pending()) {
        await alarms.setAlarm(Date.now() + AUDIT_RETRY_MS);
        return;
      }
      // Else only an unreadable session record gets here (the alarm is set after the record is written, and deleted
      // with it): that session answers 404 anyway, so its storage goes.
      await alarms.deleteAlarm();
      await store.clear();
      return;
    }
    const now = Date.now();
    // Activity is written before the alarm is set. Unreadable, it counts from this alarm rather than from the epoch,
    // and is written so that the next alarm counts from the same moment: the time-to-live still runs out.
    let last = await store.activity();
    if (last === undefined) {
      last = now;
      await store.putActivity(now);
    }
    // Upstream clients nothing used for UPSTREAM_IDLE_SECONDS are closed; a session unused for SESSION_TTL_SECONDS is deleted.
    const idleMs = settings(env).upstreamIdleSeconds * 1000;
    const ttlMs = settings(env).sessionTtlSeconds * 1000;
    if (now - last >= ttlMs) {
      await end.end();
      return;
    }
    // What an idle session (or an evicted one, whose figures wait in storage) has not sent yet goes now.
    await reports.flushUsage(record);
    if (now - last >= idleMs && (runtimes.current?.answering ?? 0) > 0) {
      // A request is still being answered (a long call, a program waiting for consent): not idle; look again later.
      await alarms.setAlarm(now + idleMs);
      return;
    }
    if (now - last >= idleMs && (runtimes.current?.hostStreams ?? 0) === 0) {
      // Close the upstream clients and let the whole runtime go: its state is in storage, and the next request
      // builds it again as after an eviction, so an idle session holds no memory while the object lives on.
      // The next request notes its activity at once, which brings this alarm back within one idle period.
      await runtimes.drop();
      activity.forget();
    }
    await alarms.setAlarm(now - last >= idleMs ? last + ttlMs : last + idleMs);
  }
}
