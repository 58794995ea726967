// The end of a session object: a host's DELETE, a failed initialize, its time-to-live, or the team's index making room
// for a newer session of its principal. Upstream sessions close, the last usage figures go, storage is wiped and the
// index forgets it, so the id answers 404 from now on.
import type { AuditOutbox } from "./audit-outbox.ts";
import type { IndexReports } from "./index-reports.ts";
import type { ObjectRuntimes } from "./object-runtimes.ts";
import type { SessionStore } from "./state.ts";
import type { UsageMeter } from "./usage.ts";

/** What the end uses of the object's storage besides the store: its alarm. */
export type EndStorage = Pick<DurableObjectStorage, "deleteAlarm" | "setAlarm">;

/** How soon the alarm of an ended session tries again to ship the audit entries its end could not. */
export const AUDIT_RETRY_MS = 60_000;

export class SessionEnd {
  readonly #store: SessionStore;
  readonly #alarms: EndStorage;
  readonly #runtimes: ObjectRuntimes;
  readonly #reports: IndexReports;
  readonly #meter: UsageMeter;
  readonly #audit: AuditOutbox;

  constructor(store: SessionStore, alarms: EndStorage, runtimes: ObjectRuntimes, reports: IndexReports, meter: UsageMeter, audit: AuditOutbox) {
    this.#store = store;
    this.#alarms = alarms;
    this.#runtimes = runtimes;
    this.#reports = reports;
    this.#meter = meter;
    this.#audit = audit;
  }

  /** Ends the session: upstream sessions closed (those of retired runtimes too), storage wiped, so the id answers 404 from now on. */
  async end(): Promise<void> {
    const record = await this.#store.session();
    const retired = this.#runtimes.takeRetired();
    // The last usage figures go to the team's index while the upstream sessions close; then the meter stops.
    await Promise.all([record && this.#reports.flushUsage(record), this.#runtimes.drop(), ...retired.map((served) => served.close())]);
    this.#meter.close();
    // The audit entries go to the team's trail; those it could not take outlive the wipe, and the alarm sends them.
    await this.#audit.ship();
    const unsent = await this.#audit.waiting();
    await this.#alarms.deleteAlarm();
    await this.#store.clear();
    if (unsent.size > 0) {
      await this.#audit.keep(unsent);
      await this.#alarms.setAlarm(Date.now() + AUDIT_RETRY_MS);
    }
    if (record) await this.#reports.ended(record);
  }

  /**
   * The team's index, for a principal at its bound: this session ends if it answers nothing right now, and, unless
   * `evenListening`, holds no host GET stream either (a stream left open by a host that forgot its session is ended
   * with it; the host, if alive, gets 404 at its next request and starts a new session).
   */
  async ifIdle(evenListening: boolean): Promise<boolean> {
    const served = this.#runtimes.serving();
    if (served.some((one) => one.answering > 0 || (!evenListening && one.hostStreams > 0))) return false;
    for (const one of served) one.endHostStream();
    await this.end();
    return true;
  }
}
