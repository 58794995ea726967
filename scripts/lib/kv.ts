// The TEAMS KV namespace through wrangler, as the KvLike the team store takes: local state (what `wrangler dev`
// reads) or --remote.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KvEntry, KvLike } from "../../src/store/kv.ts";
import { wranglerArgs, wranglerEnv } from "../../harness/processes.ts";

export interface KvTarget {
  remote: boolean;
  /** Local state folder; wrangler's default (.wrangler/state) when absent. */
  persistTo?: string;
}

export class KvError extends Error {}

/**
 * One `wrangler kv key` command. Locally it is tried once more after a pause when it fails: a `wrangler dev` serving
 * the same state can hold its database at that moment (seen once on a loaded CI machine). The operations are
 * idempotent (get, put of a whole value, delete, list), so a second try changes nothing a first one did.
 */
async function wrangler(target: KvTarget, args: string[]): Promise<string> {
  try {
    return await wranglerOnce(target, args);
  } catch (err) {
    if (target.remote || !(err instanceof KvError)) throw err;
    await new Promise((r) => setTimeout(r, 1_000));
    return wranglerOnce(target, args);
  }
}

function wranglerOnce(target: KvTarget, args: string[]): Promise<string> {
  const where = target.remote ? ["--remote"] : ["--local", ...(target.persistTo ? ["--persist-to", target.persistTo] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, wranglerArgs(["kv", "key", ...args, "--binding", "TEAMS", ...where]), {
      env: wranglerEnv({ WRANGLER_SEND_METRICS: "false" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new KvError(`wrangler kv key ${args[0]} failed:\n${err || out}`))));
  });
}

export function wranglerKv(target: KvTarget): KvLike {
  return {
    async get(key) {
      const text = (await wrangler(target, ["get", key, "--text"])).replace(/\n$/, "");
      return text === "" || text === "Value not found" ? null : text;
    },
    async put(key, value, metadata) {
      const dir = mkdtempSync(join(tmpdir(), "dynmcp-kv-"));
      try {
        const file = join(dir, "value");
        writeFileSync(file, value, { mode: 0o600 });
        await wrangler(target, ["put", key, "--path", file, ...(metadata === undefined ? [] : ["--metadata", JSON.stringify(metadata)])]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async delete(key) {
      await wrangler(target, ["delete", key]);
    },
    async list(prefix) {
      const out = await wrangler(target, ["list", "--prefix", prefix]);
      return JSON.parse(out.slice(out.indexOf("["))) as KvEntry[];
    },
  };
}
