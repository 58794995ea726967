// Bench-only: the proxy as it is when a benchmark starts. `wrangler dev` rebuilds and restarts the Worker whenever
// a file it bundles changes, and a restart in the middle of a run mixes two builds (and drops every open session).
// So the benchmarks serve a copy of src/, wrangler.toml and assets/, taken once, from a scratch folder under .wrangler/
// (git-ignored; imports of packages still resolve to the project's node_modules from there).
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

export interface ProxySnapshot {
  /** The copied wrangler.toml, for startWranglerDev({ config }). */
  config: string;
  remove: () => void;
}

export function snapshotProxy(): ProxySnapshot {
  const scratch = join(ROOT, ".wrangler");
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(join(scratch, "bench-snapshot-"));
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(ROOT, "wrangler.toml"), join(dir, "wrangler.toml"));
  // The static assets wrangler.toml names (the token table, src/catalog/tokenizer.ts): wrangler refuses a missing folder.
  cpSync(join(ROOT, "assets"), join(dir, "assets"), { recursive: true });
  return { config: join(dir, "wrangler.toml"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
