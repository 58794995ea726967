// `npm run bench:latency -- --smoke` as a child process (asynchronous: nothing here may block), so the benchmark
// cannot rot: it must start its upstreams, the proxy and the floor, measure every variant without an error, and
// write nothing.
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const RESULT = join("bench", "results", "latency.json");
const mtime = (file: string) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
};

function smoke(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, "--smoke"], { encoding: "utf8", timeout: 240_000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

it("bench/latency.ts --smoke measures the proxy, the direct calls and the floor, without errors", async () => {
  const before = mtime(RESULT);
  const run = await smoke("bench/latency.ts");
  expect(run.code, run.stderr + run.stdout.slice(-2000)).toBe(0);
  const line = run.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
  expect(line, run.stdout.slice(-2000)).toBeDefined();
  const f = JSON.parse(line!.slice("FIGURES ".length));

  expect(f.errorCount).toBe(0);
  for (const key of ["directReplay", "proxiedReplay", "directEverything", "proxiedEverything"]) {
    expect(f.calls[key].n).toBeGreaterThan(0);
    expect(f.calls[key].p50).toBeGreaterThan(0);
    expect(f.calls[key].p99).toBeGreaterThanOrEqual(f.calls[key].p50);
  }
  for (const key of ["node", "worker", "do", "kvDo", "cryptoDo", "doStorage", "doFetch", "readBodyDo"]) {
    expect(f.floor[key].p50).toBeGreaterThan(0);
  }
  // A call through a Worker, a Durable Object and a second hop cannot beat the direct one.
  expect(f.calls.proxiedReplay.p50).toBeGreaterThan(f.calls.directReplay.p50);
  expect(Number.isFinite(f.floorGap)).toBe(true);
  expect(typeof f.goal.met).toBe("boolean");
  expect(f.sessionStart.proxied.p50).toBeGreaterThan(0);
  expect(f.sessionStart.direct.p50).toBeGreaterThan(0);
  if (!("skipped" in f.loadMcp)) {
    expect(f.loadMcp.proxied.p50).toBeGreaterThan(0);
    expect(f.loadMcp.direct.p50).toBeGreaterThan(0);
  }
  expect(run.stdout).toContain("## Latency overhead");
  expect(mtime(RESULT)).toBe(before); // --smoke writes nothing
}, 300_000);
