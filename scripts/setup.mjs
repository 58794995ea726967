// Runs before `npm run dev` and `npm test`: installs the locked dependencies (Node 22 included, from the npm registry)
// when node_modules is missing or older than package-lock.json. Plain JavaScript: it may run on the machine's older Node.
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const marker = "node_modules/.dynmcp-lock";
const lockHash = createHash("sha256").update(readFileSync("package-lock.json")).digest("hex");
const installed = existsSync(marker) && readFileSync(marker, "utf8") === lockHash && existsSync("node_modules/.bin/node");

if (!installed) {
  console.log("installing dependencies from package-lock.json…");
  try {
    execSync("npm ci --no-audit --no-fund", { stdio: "inherit" });
  } catch {
    // `npm ci` refuses a lock whose optional packages for other platforms (workerd for macOS, say) the registry
    // in use does not serve; `npm install` takes the same locked versions without that check.
    console.log("npm ci refused the lock (see docs/development.md); installing the same locked versions with npm install");
    execSync("npm install --no-save --no-audit --no-fund", { stdio: "inherit" });
  }
  writeFileSync(marker, lockHash);
}
