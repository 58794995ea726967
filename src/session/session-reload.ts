// An admin's changes to a live session object: a reload of the team's current config, asked now and taken at the start
// of the next request (never in the middle of one), and a reconnect of one upstream, done at once.
import { loadTeamConfig } from "../config/load.ts";
import type { Env } from "../lib/env.ts";
import type { ObjectRuntimes } from "./object-runtimes.ts";
import type { SessionRecord, SessionStore } from "./state.ts";

export class SessionReload {
  readonly #env: Env;
  readonly #store: SessionStore;
  readonly #runtimes: ObjectRuntimes;

  constructor(env: Env, store: SessionStore, runtimes: ObjectRuntimes) {
    this.#env = env;
    this.#store = store;
    this.#runtimes = runtimes;
  }

  /** Admin: take the team's current config at the start of the next request; false when the session has ended. */
  async ask(): Promise<boolean> {
    if (!(await this.#store.session())) return false;
    await this.#store.setReloadPending(true);
    return true;
  }

  /**
   * The record the request goes on with: `record` itself when no reload waits, else the record with the team's
   * current config (as it was when the config no longer validates; the reload is taken either way).
   */
  async takePending(record: SessionRecord): Promise<SessionRecord> {
    return (await this.#store.reloadPending()) ? this.#take(record) : record;
  }

  /**
   * Swaps in the team's current config; upstreams whose entry did not change keep their state. The runtime serving
   * until now is retired, not closed: the calls it is answering finish on their upstream clients (served-runtime.ts).
   */
  async #take(record: SessionRecord): Promise<SessionRecord> {
    await this.#store.setReloadPending(false);
    const config = await loadTeamConfig(this.#env.TEAMS, record.team);
    if (!config?.ok) return record;
    const kept = new Map(config.config.upstreams.map((u) => [u.name, JSON.stringify(u)]));
    const changed = record.config.upstreams.filter((old) => kept.get(old.name) !== JSON.stringify(old));
    const next = { ...record, config: config.config };
    // Nothing is awaited from the retirement until every write below is issued: the old registry writes no record
    // after it, and a runtime built from here on reads these writes (storage reads see the writes issued before them).
    this.#runtimes.retire();
    await Promise.all([...changed.map((old) => this.#store.remove(old.name)), this.#store.putSession(next)]);
    return next;
  }

  /** Admin: close one upstream's connection and connect it again now (its catalog read anew). */
  async reconnect(name: string): Promise<boolean> {
    const record = await this.#store.session();
    if (!record) return false;
    const served = this.#runtimes.serve(record);
    const lease = served.take();
    try {
      return await (await served.runtime).registry.reconnect(name);
    } finally {
      lease.done();
    }
  }
}
