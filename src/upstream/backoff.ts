// Pure: reconnect timing. Jittered exponential backoff, a per-upstream budget of reconnects per minute, Retry-After.

/** About 0.5, 1, 2, 4 s (±25% jitter so sessions that lost the same upstream do not retry in step). */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** attempt, 4000);
  return Math.round(base * (0.75 + 0.5 * random()));
}

/**
 * A token bucket of reconnects: `perMinute` at once, then one more every 60/perMinute s (`perMinute` a minute
 * sustained), so a flapping upstream cannot make the proxy storm it. Unlike a count per sliding minute, a spent
 * budget comes back one reconnect at a time: once an outage is over, the next connect is at most 60/perMinute s
 * away instead of up to a minute.
 */
export class ReconnectBudget {
  readonly #perMinute: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(perMinute = 10, now: () => number = Date.now) {
    this.#perMinute = perMinute;
    this.#now = now;
    this.#tokens = perMinute;
    this.#at = now();
  }

  /** Takes one reconnect if the budget allows it. */
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** How long until take() can succeed (0 when it can now). */
  waitMs(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * 60_000) / this.#perMinute);
  }

  /** Gives back what the time since the last look has earned, never more than `perMinute`. */
  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#perMinute, this.#tokens + ((now - this.#at) * this.#perMinute) / 60_000);
    this.#at = now;
  }
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits `ms`; an abort of `signal` (also one that came before) ends the wait at once with its reason. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Waits for `work` to settle (however it settles), but at most `ms`; no timer is left behind either way. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  const done = new AbortController();
  await Promise.race([work.then(noop, noop), sleep(ms, done.signal).catch(noop)]);
  done.abort();
}

const noop = (): void => {};
