// `npm test`, once scripts/setup.mjs has installed everything: the type check, the layer and size checks, the bundle check,
// then vitest with whatever came after `npm test --` (`npm test -- --passWithNoTests nomatch`, a reporter, a file).
//
// Each step runs on this very Node (process.execPath, the project's Node 22) by the path of its entry file, never
// through a `node` looked up on PATH: the shell npm runs a script in may have looked `node` up before
// node_modules/.bin/node existed (a fresh clone's first `npm test` installs it) and kept the machine's older one.
import { spawn } from "node:child_process";

interface Step {
  name: string;
  /** The script to run and its arguments, relative to the project's root. */
  args: string[];
}

const given = process.argv.slice(2);

const STEPS: readonly Step[] = [
  { name: "type check (Worker)", args: ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"] },
  { name: "type check (scripts, tests, benchmarks)", args: ["node_modules/typescript/bin/tsc", "-p", "tsconfig.node.json"] },
  { name: "layer check", args: ["scripts/check-layers.ts"] },
  { name: "size check", args: ["scripts/check-sizes.ts"] },
  { name: "bundle check", args: ["scripts/check-bundle.ts"] },
  { name: "vitest", args: ["node_modules/vitest/vitest.mjs", "run", ...given] },
];

/** Runs one step with this Node, its output passed through; resolves to its exit code (a signal counts as 1). */
function run(step: Step): Promise<number> {
  const child = spawn(process.execPath, step.args, { stdio: "inherit" });
  // Ctrl-C reaches the whole process group anyway; a TERM sent to this process alone is handed on.
  const forward = () => child.kill("SIGTERM");
  process.once("SIGTERM", forward);
  return new Promise((resolve) => {
    child.once("error", (error) => {
      console.error(`npm test: could not start the ${step.name}: ${error.message}`);
      resolve(1);
    });
    child.once("close", (code, signal) => {
      process.removeListener("SIGTERM", forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

for (const step of STEPS) {
  const code = await run(step);
  if (code !== 0) {
    console.error(`npm test: the ${step.name} failed (exit code ${code}); its messages are above.`);
    process.exit(code);
  }
}
