// Shared by the benchmarks' smoke tests: run a bench script with --smoke as a child process (asynchronously, so the
// event loop stays free), and check that the run left the recorded results as they were (smoke runs write nothing).
import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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

export function runBench(script: string, args: string[] = ["--smoke"]): Promise<BenchRun> {
  return new Promise((resolve) => {
    execFile(NODE, [script, ...args], { cwd: ROOT, timeout: 280_000, maxBuffer: 64 * 2 ** 20, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, output: `${stdout}\n${stderr}` });
    });
  });
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
