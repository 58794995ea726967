// Pure: reconnect timing. Jittered exponential backoff, a per-upstream cap on reconnects per minute, Retry-After.

/** About 0.5, 1, 2, 4 s (±25% jitter so sessions that lost the same upstream do not retry in step). */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** attempt, 4000);
  return Math.round(base * (0.75 + 0.5 * random()));
}

/** At most `perMinute` reconnects in any sliding minute, so a flapping upstream cannot make the proxy storm it. */
export class ReconnectBudget {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #times: number[] = [];

  constructor(perMinute = 10, now: () => number = Date.now) {
    this.#perMinute = perMinute;
    this.#now = now;
  }

  /** Takes one reconnect if the budget allows it. */
  take(): boolean {
    const now = this.#now();
    while (this.#times.length > 0 && this.#times[0]! <= now - 60_000) this.#times.shift();
    if (this.#times.length >= this.#perMinute) return false;
    this.#times.push(now);
    return true;
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

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
