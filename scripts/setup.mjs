// Runs before `npm run dev` and `npm test`: installs the locked dependencies (Node 22 included, from the npm registry)
// with `npm ci` when node_modules is missing or older than package-lock.json, then builds the Worker's static assets
// when missing or stale: the token table (assets/tokenizer/o200k_base.bin) and the code sandbox's checkpoint finder
// (assets/sandbox/checkpoints.js). Plain JavaScript: it may run on the machine's older
// Node (20), so nothing here may need more.
//
// npm's output is passed through as it comes, except its EBADENGINE warnings: on Node 20 some thirty packages (this
// project among them) say they want a newer Node, five lines each. They are right, and the project answers them by
// running everything on the Node 22 this very install brings (node_modules/.bin/node), so one line replaces them.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";

const marker = "node_modules/.dynmcp-lock";
const lockHash = createHash("sha256").update(readFileSync("package-lock.json")).digest("hex");
const installed = existsSync(marker) && readFileSync(marker, "utf8") === lockHash && existsSync("node_modules/.bin/node");

/**
 * Forwards npm's stderr line by line, without its `npm warn EBADENGINE` lines (the packages they name are collected)
 * and without the usage text `npm ci` appends to a usage error (its reason, printed before it, is kept).
 */
function filterNpmOutput(input, output) {
  const packages = new Set();
  let usageError = false;
  let lockOutOfSync = false;
  let inUsage = false;
  let pending = "";
  const onLine = (line) => {
    // npm colours its output only on a terminal; this is a pipe, but strip colour codes anyway before matching.
    const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
    if (/^npm warn EBADENGINE\b/.test(plain)) {
      const named = /package: '([^']+)'/.exec(plain);
      if (named) packages.add(named[1]);
      return;
    }
    if (/^npm error code EUSAGE\b/.test(plain)) usageError = true;
    if (/can only install packages when your package\.json and package-lock\.json/.test(plain)) lockOutOfSync = true;
    if (usageError && /^npm error Clean install a project/.test(plain)) inUsage = true;
    if (inUsage) {
      if (!/^npm error A complete log/.test(plain)) return;
      inUsage = false;
    }
    output.write(`${line}\n`);
  };
  input.setEncoding("utf8");
  input.on("data", (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) onLine(line);
  });
  return new Promise((resolve) =>
    input.on("end", () => {
      if (pending) onLine(pending);
      resolve({ packages, lockOutOfSync });
    }),
  );
}

/**
 * Runs `npm ci`, its stderr filtered; resolves to its exit code, the packages that asked for a newer Node and
 * whether npm refused the lock as out of step with package.json.
 */
function npmCi() {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const child = spawn(npm, ["ci", "--no-audit", "--no-fund"], { stdio: ["inherit", "inherit", "pipe"] });
  const filtered = filterNpmOutput(child.stderr, process.stderr);
  return new Promise((resolve) => {
    child.once("error", (error) => resolve({ code: 1, packages: new Set(), lockOutOfSync: false, error }));
    child.once("close", async (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), ...(await filtered) }));
  });
}

if (!installed) {
  console.log("installing dependencies from package-lock.json (npm ci)…");
  const { code, packages, lockOutOfSync, error } = await npmCi();
  if (error) {
    console.error(`setup: could not run npm: ${error.message}`);
    process.exit(1);
  }
  if (code !== 0) {
    console.error(
      lockOutOfSync
        ? "setup: npm ci refused package-lock.json (reason above): it no longer matches package.json. Run `npm install` " +
            "to bring the lock up to date and commit it; setup installs only what the lock says."
        : `setup: npm ci failed (exit code ${code}); npm's messages are above.`,
    );
    process.exit(code);
  }
  if (packages.size > 0) {
    const own = [...packages].some((p) => p.startsWith("dynmcp-edge@"));
    const deps = packages.size - (own ? 1 : 0);
    console.log(
      `setup: ${deps} package${deps === 1 ? "" : "s"}${own ? " (and this project)" : ""} asked for a newer Node than ` +
        `${process.version} (npm's EBADENGINE warnings, hidden): the project runs on its own Node 22, node_modules/.bin/node.`,
    );
  }
  writeFileSync(marker, lockHash);
}

// The token table the Worker counts o200k_base tokens with (generated, git-ignored). Its header holds a build key, the
// sha256 of its inputs (bytes 40 to 72); scripts/build-tokenizer.ts computes it the same way (its KEY_INPUTS,
// buildKey): keep the two in step. A missing table or another key means a rebuild (about two seconds).
const tokenTable = "assets/tokenizer/o200k_base.bin";
const tokenTableInputs = ["scripts/build-tokenizer.ts", "src/catalog/token-table.ts", "node_modules/js-tiktoken/package.json"];

function tokenTableKey() {
  const hash = createHash("sha256");
  for (const path of tokenTableInputs) {
    const bytes = readFileSync(path);
    hash.update(`${path}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest();
}

function tokenTableFresh() {
  if (!existsSync(tokenTable)) return false;
  const header = Buffer.alloc(72);
  const fd = openSync(tokenTable, "r");
  try {
    if (readSync(fd, header, 0, 72, 0) !== 72) return false;
  } finally {
    closeSync(fd);
  }
  return header.subarray(40, 72).equals(tokenTableKey());
}

/** Runs one of the project's build scripts on its Node 22; exits with its code when it fails. */
async function runBuilder(script, what, announce = true) {
  if (announce) console.log(`building ${what} (${script})…`);
  const child = spawn("node_modules/.bin/node", [script], { stdio: "inherit" });
  const code = await new Promise((resolve) => {
    child.once("error", (error) => {
      console.error(`setup: could not run node_modules/.bin/node: ${error.message}`);
      resolve(1);
    });
    child.once("close", (exit, signal) => resolve(exit ?? (signal ? 1 : 0)));
  });
  if (code !== 0) {
    console.error(`setup: building ${what} failed (exit code ${code}); its messages are above.`);
    process.exit(code);
  }
}

// The code sandbox's checkpoint finder (generated, git-ignored): acorn and src/views/code/checkpoints.ts bundled into a
// static asset. Its first line holds a build key, the sha256 of its inputs; scripts/build-checkpoints.ts computes it
// the same way (its KEY_INPUTS, buildKey): keep the two in step.
const checkpointsModule = "assets/sandbox/checkpoints.js";
const checkpointsInputs = [
  "scripts/build-checkpoints.ts",
  "src/views/code/checkpoints.ts",
  "src/views/code/checkpoint-worker.ts",
  "src/views/code/checkpoint-kinds.ts",
  "node_modules/acorn/package.json",
  "node_modules/esbuild/package.json",
];
const CHECKPOINTS_KEY_LINE = "// dynmcp checkpoint finder, build key ";

function checkpointsFresh() {
  if (!existsSync(checkpointsModule)) return false;
  const hash = createHash("sha256");
  for (const path of checkpointsInputs) {
    const bytes = readFileSync(path);
    hash.update(`${path}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  const first = readFileSync(checkpointsModule, "utf8").split("\n", 1)[0];
  return first === `${CHECKPOINTS_KEY_LINE}${hash.digest("hex")}`;
}

// Only in this project's own folder (the setup test runs this script in a scratch project that has no builders).
if (existsSync("scripts/build-tokenizer.ts") && !tokenTableFresh()) await runBuilder("scripts/build-tokenizer.ts", tokenTable);
if (existsSync("scripts/build-checkpoints.ts") && !checkpointsFresh()) await runBuilder("scripts/build-checkpoints.ts", checkpointsModule);
// The admin API's OpenAPI document (generated, git-ignored), made from the routes' zod schemas every time (about half a
// second; written only when its text changed): too many files feed it for a build key.
if (existsSync("scripts/build-openapi.ts")) await runBuilder("scripts/build-openapi.ts", "assets/admin/openapi.json", false);
