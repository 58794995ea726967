// How the soak's printed summary and its markdown section write numbers, durations and error counts.
import { ms } from "../lib/results.ts";

/** Error counts by kind, the most frequent first: `12 timeout, 3 HTTP 503`. */
export function kinds(byKind: Record<string, number>): string {
  return Object.entries(byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
}

/** Bytes as MiB with two decimals. */
export const mib = (bytes: number): string => ms(bytes / 2 ** 20, 2);
/** Seconds with one decimal, or "—" when there is none. */
export const sec = (s: number | undefined): string => (s === undefined ? "—" : `${ms(s, 1)} s`);
/** A number with `digits` decimals, or "—" when it is not finite. */
export const num = (v: number, digits = 1): string => (Number.isFinite(v) ? ms(v, digits) : "—");
