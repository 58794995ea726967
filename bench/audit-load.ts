// `npm run bench:audit`: the audit writer under a burst, in the workerd pool: test/workers/audit-load.test.ts run
// for AUDIT_LOAD_SECONDS (60; `--smoke`: 3, nothing written), 500 entries a second offered to a session object's
// outbox and shipped to the real team index. Reads the figures the test prints (`audit load: <json>`), writes
// bench/results/audit-load.{json,md}, and stitches BENCHMARKS.md. The last line printed is `FIGURES <json>`.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { isSmoke, ms, writeResult } from "./lib/results.ts";

const ROOT = join(import.meta.dirname, "..");
const smoke = isSmoke();
const seconds = smoke ? 3 : 60;

interface Figures {
  rate: number;
  seconds: number;
  offered: number;
  offeredMs: number;
  stored: number;
  waiting: number;
  drainMs: number;
  putP50Ms: number;
  putP99Ms: number;
  putMaxMs: number;
  logLines: number;
}

const output = execFileSync(
  join(ROOT, "node_modules", ".bin", "node"),
  ["node_modules/vitest/vitest.mjs", "run", "--project", "workers", "test/workers/audit-load.test.ts"],
  { cwd: ROOT, env: { ...process.env, AUDIT_LOAD_SECONDS: String(seconds) }, encoding: "utf8", maxBuffer: 64 * 2 ** 20 },
);
const line = output.split("\n").find((l) => l.includes("audit load: "));
if (!line) throw new Error(`the load test printed no figures:\n${output.slice(-3000)}`);
const f = JSON.parse(line.slice(line.indexOf("audit load: ") + "audit load: ".length)) as Figures;

const markdown = `## Audit trail under load

${f.rate} audit entries a second offered for ${f.seconds} s (${f.offered} entries) to one session object's outbox in the
workerd pool (\`test/workers/audit-load.test.ts\`, \`npm run bench:audit\`), each recorded as a call's end records it
(one put its answer waits for, and its \`audit\` log line), shipped in batches to the real team index beside them.

| figure | value |
| --- | --: |
| entries offered | ${f.offered} in ${ms(f.offeredMs / 1000, 1)} s |
| in the team's trail, each once | ${f.stored} |
| left in the outbox | ${f.waiting} |
| \`audit\` log lines | ${f.logLines} |
| time to drain after the last entry | ${f.drainMs} ms |
| the put an answer waits for: p50 / p99 / max | ${ms(f.putP50Ms)} / ${ms(f.putP99Ms)} / ${ms(f.putMaxMs)} ms |

The put is timed inside the object, where workerd's clock advances only across I/O: it measures what the answer
waits for in the object, not the disk's commit, which the output gate overlaps with sending the answer.`;

writeResult("audit-load", f, markdown, smoke);
if (!smoke) execFileSync(join(ROOT, "node_modules", ".bin", "node"), ["bench/report.ts"], { cwd: ROOT, stdio: "inherit" });
console.log(markdown);
console.log(`FIGURES ${JSON.stringify(f)}`);
