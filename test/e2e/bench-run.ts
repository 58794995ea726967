// Shared by the benchmarks' smoke tests (and the conformance test): run a script as a child process
// (asynchronously, so the event loop stays free), read the `FIGURES <json>` line it prints, and check that the run
// left the recorded results as they were (smoke runs write nothing).
import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The project's Node 22 (the scripts are TypeScript run with type stripping), whatever Node runs vitest. */
const NODE = existsSync(join(ROOT, "node_modules", ".bin", "node")) ? join(ROOT, "node_modules", ".bin", "node") : process.execPath;

export interface BenchRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Both streams, for assertion messages. */
  output: string;
}

/** Runs a script of this project with its Node; killed after `timeoutMs` (keep it under the test's own time-out). */
export function execScript(script: string, args: string[], timeoutMs: number): Promise<BenchRun> {
  return new Promise((resolve) => {
    execFile(NODE, [script, ...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 2 ** 20, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, output: `${stdout}\n${stderr}` });
    });
  });
}

export const runBench = (script: string, args: string[] = ["--smoke"]): Promise<BenchRun> => execScript(script, args, 280_000);

/**
 * The figures of the `FIGURES <json>` line a benchmark prints (the assertion fails when there is none), untyped:
 * each test reads the fields it checks, as JSON.
 */
export function figures(run: BenchRun): any {
  const line = run.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
  expect(line, `no FIGURES line in:\n${run.stdout.slice(-3000)}`).toBeDefined();
  return JSON.parse(line!.slice("FIGURES ".length));
}

/** A check that a run left `bench/results/<name>.*` and the named charts untouched. */
export function resultsUnchanged(name: string, charts: string[] = []): () => boolean {
  const files = [
    ...["json", "md"].map((ext) => join(ROOT, "bench", "results", `${name}.${ext}`)),
    ...charts.map((c) => join(ROOT, "bench", "charts", `${c}.svg`)),
  ];
  const stamp = () => files.map((f) => (existsSync(f) ? statSync(f).mtimeMs : -1)).join(",");
  const before = stamp();
  return () => stamp() === before;
}
