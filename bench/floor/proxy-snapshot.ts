// Bench-only: the proxy as it is when a benchmark starts. `wrangler dev` rebuilds and restarts the Worker whenever
// a file it bundles changes, and a restart in the middle of a run mixes two builds (and drops every open session).
// So the benchmarks serve a copy of src/, wrangler.toml and assets/, taken once, from a scratch folder under .wrangler/
// (git-ignored; imports of packages still resolve to the project's node_modules from there).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

export interface ProxySnapshot {
  /** The copied wrangler.toml, for startWranglerDev({ config }). */
  config: string;
  remove: () => void;
}

/**
 * `main`: a bench-only Worker entry (a path under the project root, e.g. bench/floor/audit-parts-worker.ts) served in
 * place of src/index.ts; copied to the same path in the snapshot, so its imports of src/ resolve to the copy.
 */
export function snapshotProxy(main?: string): ProxySnapshot {
  const scratch = join(ROOT, ".wrangler");
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(join(scratch, "bench-snapshot-"));
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(ROOT, "wrangler.toml"), join(dir, "wrangler.toml"));
  if (main) {
    mkdirSync(dirname(join(dir, main)), { recursive: true });
    cpSync(join(ROOT, main), join(dir, main));
    const toml = readFileSync(join(dir, "wrangler.toml"), "utf8");
    if (!/^main = "src\/index\.ts"$/m.test(toml)) throw new Error('wrangler.toml has no line main = "src/index.ts" to replace');
    writeFileSync(join(dir, "wrangler.toml"), toml.replace(/^main = "src\/index\.ts"$/m, `main = "${main}"`));
  }
  // The static assets wrangler.toml names (the token table, src/catalog/tokenizer.ts): wrangler refuses a missing folder.
  cpSync(join(ROOT, "assets"), join(dir, "assets"), { recursive: true });
  return { config: join(dir, "wrangler.toml"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
