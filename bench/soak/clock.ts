// The run's clock (ms since the sessions started, shared by the driver and every host), its waits, and the one-line
// form of an error that the soak's notes use.
import { performance } from "node:perf_hooks";

let runStart = 0;

/** Starts the run's clock: `now()` counts from here. */
export function startClock(): void {
  runStart = performance.now();
}

/** ms since the run started. */
export const now = (): number => performance.now() - runStart;

export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms));

/** A random duration from `lo` to `hi`. */
export const between = ([lo, hi]: readonly [number, number]): number => lo + Math.random() * (hi - lo);

/** An error as one line of at most 300 characters. */
export const short = (err: unknown): string =>
  (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).replace(/\s+/g, " ").slice(0, 300);
