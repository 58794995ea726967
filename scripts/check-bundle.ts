// `node scripts/check-bundle.ts [--json FILE]` (part of `npm test`): builds the Worker the way `npm run deploy` does
// (`wrangler deploy --dry-run --env production`, nothing uploaded) and fails when it is over its budget, or when any
// of its code comes from a package the Worker must not carry. Prints the size, the gzip size and the largest packages.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wranglerArgs } from "../harness/processes.ts";

/**
 * Half of the bundle before the one-SDK restructure (issue 13: 3609.91 KiB, gzip 698.25 KiB, with agents, the v1 SDK
 * and both v2 packages). docs/sdk-choice.md has how that was measured.
 */
export const BUDGET = { kib: 1804.96, gzipKib: 349.13 } as const;
/**
 * Packages whose code must not be in the bundle (scripts/check-layers.ts keeps src/ from importing the first two).
 * acorn is the code sandbox's parser: it runs in a Dynamic Worker from a static asset (src/views/code/instrument.ts), and
 * would cost the bundle about 33 KiB of gzip if anything in the Worker imported src/views/code/checkpoints.ts.
 * zod-openapi makes the admin API's OpenAPI document at set-up (scripts/build-openapi.ts), served from the assets.
 */
export const FORBIDDEN = ["@modelcontextprotocol/sdk", "agents", "ajv", "acorn", "zod-openapi"] as const;

export interface BundleFigures {
  kib: number;
  gzipKib: number;
  /** KiB of output per package (`src/` for our own code), largest first. */
  packages: Array<{ name: string; kib: number }>;
  /** The MCP SDK's own copies of its JSON Schema validator found in the bundle (wrangler.toml's `[alias]` replaces them). */
  sealedValidators?: string[];
}

/** The SDK's chunks that each seal a copy of `@cfworker/json-schema` into its workerd shim. */
const SEALED_VALIDATOR = /node_modules\/@modelcontextprotocol\/[^/]+\/dist\/cfWorkerProvider-[^/]*$/;

/** Pure: the SDK's sealed validator chunks among an esbuild metafile's inputs. */
export function sealedValidatorsOf(metafile: { outputs: Record<string, { inputs?: Record<string, unknown> }> }): string[] {
  return Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs ?? {}).filter((input) => SEALED_VALIDATOR.test(input)));
}

/** The package an esbuild input path belongs to: the innermost node_modules package, or `src/`, or `other`. */
export function packageOf(input: string): string {
  const found = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (found) return found[found.length - 1]!.slice("node_modules/".length);
  return input.startsWith("src/") ? "src/" : "other";
}

/** Pure: KiB per package from an esbuild metafile. */
export function packagesOf(metafile: { outputs: Record<string, { inputs?: Record<string, { bytesInOutput: number }> }> }): BundleFigures["packages"] {
  const bytes = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, info] of Object.entries(output.inputs ?? {})) {
      const name = packageOf(input);
      bytes.set(name, (bytes.get(name) ?? 0) + info.bytesInOutput);
    }
  }
  return [...bytes]
    .map(([name, n]) => ({ name, kib: Math.round((n / 1024) * 10) / 10 }))
    .sort((a, b) => b.kib - a.kib);
}

/** Pure: wrangler's "Total Upload: X KiB / gzip: Y KiB" line. */
export function uploadLine(output: string): { kib: number; gzipKib: number } {
  const m = output.match(/Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/);
  if (!m) throw new Error(`wrangler printed no "Total Upload" line:\n${output.slice(-2000)}`);
  return { kib: Number(m[1]), gzipKib: Number(m[2]) };
}

/** Pure: what is wrong with a build, one line each (empty when it is within budget and clean). */
export function problemsOf(figures: BundleFigures, budget: { kib: number; gzipKib: number } = BUDGET): string[] {
  const problems: string[] = [];
  if (figures.kib > budget.kib) problems.push(`bundle is ${figures.kib} KiB, over the budget of ${budget.kib} KiB`);
  if (figures.gzipKib > budget.gzipKib) problems.push(`bundle is ${figures.gzipKib} KiB gzipped, over the budget of ${budget.gzipKib} KiB`);
  for (const name of FORBIDDEN) {
    const found = figures.packages.find((p) => p.name === name);
    if (found) problems.push(`bundle holds ${found.kib} KiB of ${name}, which the Worker must not carry`);
  }
  for (const input of figures.sealedValidators ?? []) {
    problems.push(`bundle holds the SDK's own validator copy ${input}: wrangler.toml's [alias] for its _shims is not in effect`);
  }
  return problems;
}

/**
 * Builds the Worker into a scratch directory and measures it: as it deploys (minified since issue 15, see
 * wrangler.toml), or with `minify: false` as the build was before, for comparisons across that change.
 */
export function measureBundle(options: { minify?: false } = {}): BundleFigures {
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bundle-"));
  try {
    const metafile = join(dir, "meta.json");
    const output = execFileSync(
      process.execPath,
      wranglerArgs(["deploy", "--dry-run", "--env", "production", "--outdir", join(dir, "out"), "--metafile", metafile, ...(options.minify === false ? ["--no-minify"] : [])]),
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
    );
    const meta = JSON.parse(readFileSync(metafile, "utf8"));
    return { ...uploadLine(output), packages: packagesOf(meta), sealedValidators: sealedValidatorsOf(meta) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const figures = measureBundle();
  const json = process.argv.indexOf("--json");
  if (json > 0 && process.argv[json + 1]) writeFileSync(process.argv[json + 1]!, `${JSON.stringify(figures, null, 2)}\n`);
  const top = figures.packages.slice(0, 6).map((p) => `${p.name} ${p.kib}`).join(", ");
  const problems = problemsOf(figures);
  for (const line of problems) console.error(`bundle: ${line}`);
  console.log(`bundle: ${figures.kib} KiB, gzip ${figures.gzipKib} KiB (budget ${BUDGET.kib} / ${BUDGET.gzipKib}); largest: ${top}`);
  if (problems.length > 0) process.exit(1);
}
