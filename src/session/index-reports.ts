// What a session object tells its team's index: that it is in use (the principal's order of use), the usage figures
// its meter has not sent yet (src/session/usage.ts), and that it has ended. None of it holds an answer back: a send
// that fails is logged, and figures that did not arrive wait for the next flush.
import type { Env } from "../lib/env.ts";
import { log } from "../lib/log.ts";
import { principalOf, type SessionRecord } from "./state.ts";
import type { UsageMeter } from "./usage.ts";

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class IndexReports {
  readonly #env: Env;
  readonly #meter: UsageMeter;

  constructor(env: Env, meter: UsageMeter) {
    this.#env = env;
    this.#meter = meter;
  }

  #index(team: string) {
    return this.#env.TEAM_INDEX.getByName(team);
  }

  /** What a request that noted activity tells the team's index: the usage not sent yet, and that the session is in use. */
  used(record: SessionRecord): Promise<unknown> {
    const seen = this.#index(record.team).seen(record.sessionId);
    return Promise.all([this.flushUsage(record), seen.catch((err) => log({ event: "unhandled", error: `use not told to the team index: ${reason(err)}` }))]);
  }

  /**
   * Sends the usage figures not sent yet to the team's index. They leave the session's storage first; a send that
   * fails gives them back for the next flush (at the end of the session they are lost).
   */
  async flushUsage(record: SessionRecord): Promise<void> {
    try {
      await this.#meter.restore();
      const days = await this.#meter.take();
      if (days.length === 0) return;
      try {
        await this.#index(record.team).addUsage(days, principalOf(record));
      } catch (err) {
        this.#meter.giveBack(days);
        throw err;
      }
    } catch (err) {
      log({ event: "unhandled", error: `usage not sent to the team index: ${reason(err)}` });
    }
  }

  /** The session ended: the team's index lists it no more. */
  async ended(record: SessionRecord): Promise<void> {
    await this.#index(record.team).remove(record.sessionId);
  }
}
