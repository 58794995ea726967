// Shared by every benchmark: order statistics, the machine's description, and writing a result section.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";

/** The q-quantile (0..1) of samples, nearest-rank on a sorted copy. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  n: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  return { p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), p99: quantile(samples, 0.99), n: samples.length };
}

export const ms = (value: number, digits = 2): string => value.toFixed(digits);

/** One line that says where and when a figure was measured. */
export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const gib = (totalmem() / 2 ** 30).toFixed(0);
  return `${new Date().toISOString().slice(0, 10)} · ${cpus().length} × ${cpu} · ${gib} GiB · Node ${process.version} · ${process.platform}/${process.arch}`;
}

export const RESULTS_DIR = join(import.meta.dirname, "..", "results");

/**
 * Writes `bench/results/<name>.json` (figures) and `bench/results/<name>.md` (a section of BENCHMARKS.md,
 * starting with `## `), unless this is a smoke run. bench/report.ts stitches the sections together.
 */
export function writeResult(name: string, figures: unknown, markdown: string, smoke: boolean): void {
  if (smoke) return;
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify({ measured: machineLine(), figures }, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, `${name}.md`), `${markdown.trim()}\n\n_Measured ${machineLine()}._\n`);
}

/** `--smoke` runs a benchmark with tiny counts so `npm test` proves it still works, and writes nothing. */
export const isSmoke = (): boolean => process.argv.includes("--smoke");
