// `npm run bench:checkpoints`: what code mode's checkpoints cost (docs/code-mode.md 5.5). Two `wrangler dev`
// proxies from one snapshot of the code, one with `CODE_CHECKPOINTS=on` (the default) and one with `off` (programs
// run as written: the baseline), each with a code-view session of the same team; the same programs run on both,
// interleaved, and every pair must return the same value. Measured: the first execute of each proxy (the finder's
// Dynamic Worker is loaded then), and per program the median wall time of `execute` through the proxy and the ratio
// on/off: a trivial program (the cost of placing checkpoints), a tight loop, a program of many small function calls,
// and one of tool calls (its awaits). `--smoke`: two repetitions, nothing written. The last line printed is
// `FIGURES <json>`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { E2E_SECRETS_KEY, connectClient, provisionByAdmin } from "../harness/clients.ts";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { loadCorpus, startReplayServer } from "../harness/replay-server.ts";
import { snapshotProxy } from "./floor/proxy-snapshot.ts";
import { table } from "./lib/markdown.ts";
import { finishRun, isSmoke, median } from "./lib/results.ts";
import { teardown } from "./lib/teardown.ts";

const smoke = isSmoke();
const REPS = smoke ? 2 : 25;
const ADMIN_TOKEN = "bench-admin-token";
const VARIANTS = ["on", "off"] as const;
type Variant = (typeof VARIANTS)[number];

/** The programs, each a code-mode body; generous limits, so the clock never ends one. */
const PROGRAMS: Record<string, string> = {
  trivial: "return 1;",
  "tight loop (3M turns)": "let s = 0;\nfor (let i = 0; i < 3_000_000; i++) s += i % 7;\nreturn s;",
  "100k small calls": "const items = Array.from({ length: 100_000 }, (_, i) => ({ id: i, tag: i % 5 }));\nreturn items.filter((x) => x.tag === 1).map((x) => x.id * 2).reduce((a, b) => a + b, 0);",
  "5 tool calls": "const out = [];\nfor (let i = 0; i < 5; i++) out.push(await notes.search_nodes({ query: 'n' + i }));\nreturn out.length;",
};

const textOf = (result: CallToolResult): string => (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

async function execute(client: Client, code: string): Promise<{ ms: number; text: string }> {
  const started = performance.now();
  const result = (await client.request({ method: "tools/call", params: { name: "execute", arguments: { code } } }, CallToolResultSchema, { timeout: 300_000 })) as CallToolResult;
  const ms = performance.now() - started;
  if (result.isError) throw new Error(`execute failed: ${textOf(result).slice(0, 300)}`);
  return { ms, text: textOf(result).split("\n")[0]! };
}

async function main(): Promise<void> {
  const snapshot = snapshotProxy();
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-checkpoints-"));
  const replay = await startReplayServer({ notes: { catalog: loadCorpus("modelcontextprotocol__server-memory") } });
  const proxies: Partial<Record<Variant, Running>> = {};
  const clients: Partial<Record<Variant, Client>> = {};
  let errors = 0;
  try {
    for (const variant of VARIANTS) {
      const proxy = await startWranglerDev({
        persistTo: join(dir, variant),
        config: snapshot.config,
        vars: { SESSION_KEY: "bench-session-key-0123456789abcd", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, CODE_CHECKPOINTS: variant, CODE_CPU_MS: "120000", CODE_WALL_MS: "300000" },
      });
      proxies[variant] = proxy;
      const token = await provisionByAdmin(proxy.url, ADMIN_TOKEN, "bench", { view: "code", mcp: { notes: { url: replay.url("notes") } } });
      clients[variant] = (await connectClient(`${proxy.url}/t/bench/mcp`, token)).client;
    }
    // The first execute of each proxy: on "on", the finder's module is read and its Dynamic Worker loaded.
    const first: Record<Variant, number> = { on: 0, off: 0 };
    for (const variant of VARIANTS) first[variant] = (await execute(clients[variant]!, PROGRAMS.trivial!)).ms;

    const samples: Record<string, Record<Variant, number[]>> = {};
    for (const name of Object.keys(PROGRAMS)) samples[name] = { on: [], off: [] };
    for (let rep = 0; rep < REPS; rep++) {
      for (const [name, code] of Object.entries(PROGRAMS)) {
        // Interleaved, the order alternating: neither side always runs on a warmer machine.
        const order: Variant[] = rep % 2 === 0 ? ["on", "off"] : ["off", "on"];
        const answers: string[] = [];
        for (const variant of order) {
          const run = await execute(clients[variant]!, code);
          samples[name]![variant].push(run.ms);
          answers.push(run.text);
        }
        if (answers[0] !== answers[1]) {
          errors++;
          console.error(`${name}: the two proxies answered differently: ${answers.join(" / ")}`);
        }
      }
    }
    const programs = Object.keys(PROGRAMS).map((name) => {
      const on = median(samples[name]!.on);
      const off = median(samples[name]!.off);
      return { name, onMs: Number(on.toFixed(1)), offMs: Number(off.toFixed(1)), ratio: Number((on / off).toFixed(2)) };
    });
    const figures = { reps: REPS, firstExecuteMs: { on: Number(first.on.toFixed(1)), off: Number(first.off.toFixed(1)) }, programs };
    const markdown = [
      "## Code mode checkpoints",
      "",
      "What the checkpoints cost (`npm run bench:checkpoints`; docs/code-mode.md 5.5): two `wrangler dev` proxies from one",
      "snapshot, `CODE_CHECKPOINTS=on` (the default) against `off` (programs as written), the same programs interleaved on",
      `each (${REPS} repetitions; every pair returned the same value). Wall time of \`execute\` through the proxy, medians.`,
      "",
      table(
        ["program", "on (ms)", "off (ms)", "on / off"],
        programs.map((p) => [p.name, p.onMs.toFixed(1), p.offMs.toFixed(1), `${p.ratio.toFixed(2)}×`]),
      ),
      "",
      `The first execute of a fresh proxy (the finder's module read from the assets and its Dynamic Worker loaded): ${first.on.toFixed(1)} ms with`,
      `checkpoints, ${first.off.toFixed(1)} ms without. Locally the clock is what ends an endless program; on Cloudflare the platform's CPU limit`,
      "is, and the checkpoints cost what this table shows.",
    ].join("\n");
    finishRun({ name: "checkpoints", figures, markdown, smoke, errors, wranglerOutput: VARIANTS.map((v) => proxies[v]?.output() ?? "").join("\n") });
  } finally {
    await Promise.all(VARIANTS.map((v) => clients[v]?.close().catch(() => {})));
    await proxies.off?.stop();
    await teardown({ proxy: proxies.on, snapshot, replay, dir });
  }
}

await main();
