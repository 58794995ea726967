// Reads and writes the TEAMS KV namespace through wrangler: local state (what `wrangler dev` reads) or --remote.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface KvTarget {
  remote: boolean;
  /** Local state folder; wrangler's default (.wrangler/state) when absent. */
  persistTo?: string;
}

export class KvError extends Error {}

export const wranglerBin = (): string =>
  join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");

function wrangler(target: KvTarget, args: string[]): string {
  const where = target.remote ? ["--remote"] : ["--local", ...(target.persistTo ? ["--persist-to", target.persistTo] : [])];
  const run = spawnSync(process.execPath, [wranglerBin(), "kv", "key", ...args, "--binding", "TEAMS", ...where], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (run.status !== 0) throw new KvError(`wrangler kv key ${args[0]} failed:\n${run.stderr || run.stdout}`);
  return run.stdout;
}

export function kvPut(target: KvTarget, key: string, value: string): void {
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-kv-"));
  try {
    const file = join(dir, "value");
    writeFileSync(file, value, { mode: 0o600 });
    wrangler(target, ["put", key, "--path", file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function kvGet(target: KvTarget, key: string): string | undefined {
  const text = wrangler(target, ["get", key, "--text"]).trim();
  return text === "" || text === "Value not found" ? undefined : text;
}
