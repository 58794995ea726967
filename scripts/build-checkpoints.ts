// `node scripts/build-checkpoints.ts`: writes assets/sandbox/checkpoints.js (generated, git-ignored), the module of
// the Dynamic Worker that finds where a code-mode program gets its checkpoints: src/views/code/checkpoint-worker.ts and
// src/views/code/checkpoints.ts bundled with acorn, minified. It is a static asset, read by the Worker at run time
// (src/views/code/instrument.ts), so the parser is not part of the Worker's bundle. scripts/setup.mjs runs this when the
// file is missing or its build key (first line) is not that of the current inputs.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const ROOT = join(import.meta.dirname, "..");
export const MODULE_PATH = join(ROOT, "assets", "sandbox", "checkpoints.js");

/**
 * What the module is made from, relative to the project root. scripts/setup.mjs hashes the same files the same
 * way (its `checkpointsKey`); keep the two in step.
 */
export const KEY_INPUTS = [
  "scripts/build-checkpoints.ts",
  "src/views/code/checkpoints.ts",
  "src/views/code/checkpoint-worker.ts",
  "src/views/code/checkpoint-kinds.ts",
  "node_modules/acorn/package.json",
  "node_modules/esbuild/package.json",
] as const;

/** The module's first line: the build key (sha256 over each input as `path \0 length \0 bytes`, in order). */
export const KEY_LINE_PREFIX = "// dynmcp checkpoint finder, build key ";

export function buildKey(root = ROOT): string {
  const hash = createHash("sha256");
  for (const path of KEY_INPUTS) {
    const bytes = readFileSync(join(root, path));
    hash.update(`${path}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}

// acorn's licence (MIT) travels with the copy of it in the module.
const licence = readFileSync(join(ROOT, "node_modules", "acorn", "LICENSE"), "utf8").trim();
const result = await build({
  entryPoints: [join(ROOT, "src", "views", "code", "checkpoint-worker.ts")],
  bundle: true,
  minify: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  external: ["cloudflare:workers"],
  write: false,
  legalComments: "none",
  banner: { js: `/* acorn ${JSON.parse(readFileSync(join(ROOT, "node_modules", "acorn", "package.json"), "utf8")).version}:\n${licence.replaceAll("*/", "* /")}\n*/` },
});
const code = `${KEY_LINE_PREFIX}${buildKey()}\n${result.outputFiles[0]!.text}`;
mkdirSync(dirname(MODULE_PATH), { recursive: true });
// Written whole or not at all: a half-written module would be taken as built.
writeFileSync(`${MODULE_PATH}.tmp`, code);
renameSync(`${MODULE_PATH}.tmp`, MODULE_PATH);
const bytes = Buffer.byteLength(code);
console.log(
  `checkpoints: wrote assets/sandbox/checkpoints.js, ${(bytes / 1024).toFixed(1)} KiB (gzip ${(gzipSync(readFileSync(MODULE_PATH)).length / 1024).toFixed(1)} KiB)`,
);
