// `npm run bench`: every benchmark that exists (bundle, tokenizer, tokens, latency, load, scale, budget, selection, code-mode, checkpoints, session-cost, audit-load, audit-dev), one after the other so they do not
// disturb each other's timings, then bench/report.ts stitches BENCHMARKS.md. Arguments (e.g. --smoke) are passed on.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runScript } from "../harness/processes.ts";

const BENCHES = ["bundle", "tokenizer", "tokens", "latency", "load", "scale", "budget", "selection", "code-mode", "checkpoints", "session-cost", "audit-load", "audit-dev"];
const args = process.argv.slice(2);
const smoke = args.includes("--smoke");

const failed: string[] = [];
for (const name of BENCHES) {
  const script = join(import.meta.dirname, `${name}.ts`);
  if (!existsSync(script)) {
    process.stdout.write(`\n== bench:${name}: no ${name}.ts, skipped\n`);
    continue;
  }
  process.stdout.write(`\n== bench:${name}\n`);
  const started = performance.now();
  const code = await runScript(script, args);
  process.stdout.write(`== bench:${name} ${code === 0 ? "done" : `FAILED (exit ${code})`} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  if (code !== 0) failed.push(name);
}

if (!smoke) {
  process.stdout.write("\n== report\n");
  if ((await runScript(join(import.meta.dirname, "report.ts"))) !== 0) failed.push("report");
}
if (failed.length) {
  process.stderr.write(`failed: ${failed.join(", ")} (BENCHMARKS.md keeps the previous figures of those)\n`);
  process.exit(1);
}
