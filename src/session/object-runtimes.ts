// The runtimes of one session object's life: the one new requests take (a 2025 session's, or a 2026-era object's,
// by record.era), built on the first request of each object life and again after a reload or an idle close, and the
// ones an admin's reload retired, which still answer the calls begun before it (served-runtime.ts).
import type { Env } from "../lib/env.ts";
import type { FetchGate } from "../upstream/fetch-gate.ts";
import { createModernRuntime, createRuntime, type ObjectParts } from "./runtime.ts";
import { ServedRuntime } from "./served-runtime.ts";
import type { SessionRecord, SessionStore } from "./state.ts";
import { reloadTag, type SessionTransport } from "./transport.ts";

export class ObjectRuntimes {
  readonly #env: Env;
  readonly #store: SessionStore;
  /** What the runtimes of this object's life share (a retired one and its successor included). */
  readonly #parts: ObjectParts;
  /** The runtime new requests take, once one was asked for and until a reload, an idle close or the end. */
  #current: ServedRuntime | undefined;
  /** Runtimes a reload replaced that still answer calls begun before it; each leaves the set once closed. */
  readonly #retired = new Set<ServedRuntime>();
  /** The next runtime is built by a reload (its host hears that the lists may have changed). */
  #reloaded = false;
  /** Reloads taken in this object's life: the runtimes they build tag their requests to the host (transport.ts). */
  #reloads = 0;
  /** The upstream connection gate of the live runtime once built (its counters are what tests read). */
  #gate: FetchGate | undefined;

  constructor(env: Env, store: SessionStore, parts: ObjectParts) {
    this.#env = env;
    this.#store = store;
    this.#parts = parts;
  }

  get gate(): FetchGate | undefined {
    return this.#gate;
  }

  /** The runtime new requests take, if there is one. */
  get current(): ServedRuntime | undefined {
    return this.#current;
  }

  /** Every runtime of this life that still serves: the current one and the retired ones. */
  serving(): ServedRuntime[] {
    return [this.#current, ...this.#retired].filter((one) => one !== undefined);
  }

  /** The transports of the retired runtimes, once built: they still hear the host's answers to what they asked. */
  retiredTransports(): SessionTransport[] {
    return [...this.#retired].flatMap((served) => served.transport ?? []);
  }

  /**
   * The runtime new requests take, built when there is none; a failed build is tried again by the next request. It is
   * built from the session record as stored when the build starts: a reload may have replaced `record` since the
   * request read it.
   */
  serve(record: SessionRecord): ServedRuntime {
    if (this.#current) return this.#current;
    const tag = this.#reloads > 0 ? reloadTag(this.#reloads) : undefined;
    const build = async () => {
      await this.#parts.meter.restore();
      const current = (await this.#store.session()) ?? record;
      return current.era === "modern" ? createModernRuntime(this.#env, current, this.#store, this.#parts) : createRuntime(this.#env, current, this.#store, this.#parts, tag);
    };
    const served: ServedRuntime = new ServedRuntime(build(), { afterReload: this.#reloaded, onRetiredClosed: () => this.#retired.delete(served) });
    this.#reloaded = false;
    this.#current = served;
    served.runtime.then(
      (runtime) => {
        if (this.#current === served) this.#gate = runtime.gate;
      },
      () => {
        if (this.#current === served) this.#current = undefined;
      },
    );
    return served;
  }

  /** The runtime serving until now takes no new request; it closes itself once its answers have ended. */
  retire(): void {
    const served = this.#current;
    this.#current = undefined;
    this.#gate = undefined;
    this.#reloaded = true;
    this.#reloads++;
    if (!served) return;
    this.#retired.add(served);
    served.retire();
  }

  /** Lets the current runtime go (its state is in storage): its upstream clients are closed. */
  async drop(): Promise<void> {
    const served = this.#current;
    this.#current = undefined;
    this.#gate = undefined;
    await served?.close();
  }

  /** The retired runtimes, handed over and forgotten: the session is ending, and the caller closes them. */
  takeRetired(): ServedRuntime[] {
    const retired = [...this.#retired];
    this.#retired.clear();
    return retired;
  }
}
