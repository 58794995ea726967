// Every upstream request of a session goes through here: at most N connections at once (Workers allow 6
// simultaneous outbound connections per request), at most N-1 of them for one upstream, and at most M bytes per
// response. workerd under `wrangler dev` enforces neither, so the proxy counts for itself, and the counters are
// readable by tests.
import { ProxyError } from "../lib/errors.ts";
import { tapResponse } from "../lib/streams.ts";
import type { FetchLike } from "./exchange.ts";

export interface GateLimits {
  maxConnections: number;
  maxResponseBytes: number;
}

export const DEFAULT_GATE_LIMITS: GateLimits = { maxConnections: 6, maxResponseBytes: 8 * 1024 * 1024 };

/** A response body that outgrew the limit: the stream errors with this (kind `too_large`, the fault it becomes). */
export class ResponseTooLarge extends ProxyError {
  readonly limit: number;
  constructor(limit: number) {
    super("too_large", `the upstream's answer is larger than ${limit} bytes`);
    this.name = "ResponseTooLarge";
    this.limit = limit;
  }
}

export class FetchGate {
  readonly limits: GateLimits;
  #inFlight = 0;
  /** Slots held per upstream. */
  readonly #held = new Map<string, number>();
  /** Exchanges waiting for a slot, oldest first. */
  readonly #waiting: Array<{ owner: string; grant: () => void }> = [];
  /** Counters for tests and logs. */
  readonly stats = { peakInFlight: 0, requests: 0, tooLarge: 0, bytes: 0 };

  constructor(limits: GateLimits = DEFAULT_GATE_LIMITS) {
    this.limits = limits;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Slots one upstream may hold: all but one, so an upstream that hangs can never starve the others. */
  get perUpstream(): number {
    return Math.max(1, this.limits.maxConnections - 1);
  }

  /**
   * Wraps the fetch of one upstream (`owner`): waits for a free slot (giving up when the exchange's signal
   * aborts), holds it until the response body is read to its end (or fails), and counts the body's bytes.
   * Standalone GET streams (long-lived, open only while the host holds its own) take no slot, and their size
   * limit applies to what arrives in one piece rather than over the stream's whole life.
   */
  wrap(fetch: FetchLike, onTooLarge: (error: ResponseTooLarge) => void, owner = ""): FetchLike {
    return async (input, init) => {
      const stream = (init?.method ?? "GET").toUpperCase() === "GET";
      if (!stream) await this.#acquire(owner, init?.signal ?? undefined);
      this.stats.requests++;
      let released = stream;
      const release = () => {
        if (!released) {
          released = true;
          this.#release(owner);
        }
      };
      let response: Response;
      try {
        response = await fetch(input, init);
      } catch (err) {
        release();
        throw err;
      }
      const limit = this.limits.maxResponseBytes;
      const stats = this.stats;
      let size = 0;
      return tapResponse(response, {
        chunk: (value) => {
          size += value.byteLength;
          stats.bytes += value.byteLength;
          // A long-lived stream is judged per message-sized window, not over its whole life.
          if (stream && size > limit && value.byteLength <= limit) size = value.byteLength;
          if (size <= limit) return undefined;
          stats.tooLarge++;
          return new ResponseTooLarge(limit);
        },
        end: (error) => {
          release();
          if (error instanceof ResponseTooLarge) onTooLarge(error);
        },
      });
    };
  }

  #free(owner: string): boolean {
    return this.#inFlight < this.limits.maxConnections && (this.#held.get(owner) ?? 0) < this.perUpstream;
  }

  #acquire(owner: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free(owner)) {
      this.#take(owner);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        owner,
        grant: () => {
          signal?.removeEventListener("abort", giveUp);
          this.#take(owner);
          resolve();
        },
      };
      const giveUp = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", giveUp, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #take(owner: string): void {
    this.#inFlight++;
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + 1);
    this.stats.peakInFlight = Math.max(this.stats.peakInFlight, this.#inFlight);
  }

  #release(owner: string): void {
    this.#inFlight--;
    const held = (this.#held.get(owner) ?? 1) - 1;
    if (held > 0) this.#held.set(owner, held);
    else this.#held.delete(owner);
    // The oldest waiter that may take a slot now (one of an upstream at its share waits on).
    const next = this.#waiting.findIndex((w) => this.#free(w.owner));
    if (next >= 0) this.#waiting.splice(next, 1)[0]!.grant();
  }
}
