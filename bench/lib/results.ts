// Shared by every benchmark: order statistics, the machine's description, and finishing a run: its figures printed,
// its result section written.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";

const sortedCopy = (samples: readonly number[]): number[] => [...samples].sort((a, b) => a - b);

/** Nearest rank of the q-quantile (0..1) in samples already sorted. */
function nearestRank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The q-quantile (0..1) of samples, nearest-rank on a sorted copy. */
export function quantile(samples: readonly number[], q: number): number {
  return nearestRank(sortedCopy(samples), q);
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  n: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = sortedCopy(samples);
  return { p50: nearestRank(sorted, 0.5), p95: nearestRank(sorted, 0.95), p99: nearestRank(sorted, 0.99), n: samples.length };
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

/**
 * `--render`: a benchmark's section written again from the figures it recorded (`bench/results/<name>.json`), with
 * the machine line of that run: a change to the section's words measures nothing again (a held-out set scored once
 * stays scored once).
 */
export const isRender = (): boolean => process.argv.includes("--render");

export function renderRecorded<F>(name: string, render: (figures: F) => string): void {
  const recorded = JSON.parse(readFileSync(join(RESULTS_DIR, `${name}.json`), "utf8")) as { measured: string; figures: F };
  const text = render(recorded.figures);
  console.log(text);
  writeFileSync(join(RESULTS_DIR, `${name}.md`), `${text.trim()}\n\n_Measured ${recorded.measured}._\n`);
}

/** `--smoke` runs a benchmark with tiny counts so `npm test` proves it still works, and writes nothing. */
export const isSmoke = (): boolean => process.argv.includes("--smoke");

/**
 * The end of a run under `wrangler dev`: prints `FIGURES <json>` (the figures and `printed`, the smoke tests read
 * it) and writes the result, unless the run saw errors or, outside a smoke run, wrangler reloaded the Worker (it
 * rebuilds and restarts it when src changes: such a run measured two builds). Then it writes nothing and sets
 * exit code 1.
 */
export function finishRun(run: {
  name: string;
  figures: object;
  markdown: string;
  smoke: boolean;
  /** Everything the proxy's `wrangler dev` printed. */
  wranglerOutput: string;
  errors?: number;
  /** More fields for the FIGURES line only. */
  printed?: Record<string, unknown>;
}): void {
  const errors = run.errors ?? 0;
  const at = run.wranglerOutput.indexOf("Reloading local server");
  const reloaded = at >= 0;
  console.log(`FIGURES ${JSON.stringify({ ...run.figures, ...run.printed, reloaded })}`);
  if (reloaded) {
    const said = run.wranglerOutput.slice(Math.max(0, at - 1500), at + 300);
    console.error(`${run.name}: wrangler reloaded the Worker during the run; results not written. wrangler said:\n${said}`);
  }
  if (errors > 0) console.error(`${run.name}: ${errors} errors; results not written`);
  if (errors > 0 || (reloaded && !run.smoke)) {
    process.exitCode = 1;
    return;
  }
  writeResult(run.name, run.figures, run.markdown, run.smoke);
}
