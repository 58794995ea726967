// Every upstream request of a session goes through here: at most N connections at once (Workers allow 6
// simultaneous outbound connections per request) and at most M bytes per response. workerd under `wrangler dev`
// enforces neither, so the proxy counts for itself, and the counters are readable by tests.
import { tapResponse } from "../streams.ts";
import type { FetchLike } from "./client.ts";

export interface GateLimits {
  maxConnections: number;
  maxResponseBytes: number;
}

export const DEFAULT_GATE_LIMITS: GateLimits = { maxConnections: 6, maxResponseBytes: 8 * 1024 * 1024 };

/** A response body that outgrew the limit: the stream errors with this. */
export class ResponseTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the upstream's answer is larger than ${limit} bytes`);
    this.name = "ResponseTooLarge";
    this.limit = limit;
  }
}

export class FetchGate {
  readonly limits: GateLimits;
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** Counters for tests and logs. */
  readonly stats = { peakInFlight: 0, requests: 0, tooLarge: 0, bytes: 0 };

  constructor(limits: GateLimits = DEFAULT_GATE_LIMITS) {
    this.limits = limits;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Wraps a fetch: waits for a free slot, holds it until the response body is read to its end (or fails), and
   * counts the body's bytes. Standalone GET streams (long-lived, open only while the host holds its own) take no
   * slot, and their size limit applies to what arrives in one piece rather than over the stream's whole life.
   */
  wrap(fetch: FetchLike, onTooLarge: (error: ResponseTooLarge) => void): FetchLike {
    return async (input, init) => {
      const stream = (init?.method ?? "GET").toUpperCase() === "GET";
      if (!stream) await this.#acquire();
      this.stats.requests++;
      let released = stream;
      const release = () => {
        if (!released) {
          released = true;
          this.#release();
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

  #acquire(): Promise<void> {
    if (this.#inFlight < this.limits.maxConnections) {
      this.#take();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(() => (this.#take(), resolve())));
  }

  #take(): void {
    this.#inFlight++;
    this.stats.peakInFlight = Math.max(this.stats.peakInFlight, this.#inFlight);
  }

  #release(): void {
    this.#inFlight--;
    this.#waiting.shift()?.();
  }
}
