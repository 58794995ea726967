// Writes the admin API's OpenAPI document (src/edge/admin/openapi.ts, generated from the zod schemas the routes
// validate with) to assets/admin/openapi.json, which the Worker serves at /admin/openapi.json through its ASSETS
// binding: the generator (zod-openapi, about 25 KiB of minified code) stays out of the deployed bundle. Run by
// scripts/setup.mjs before every `npm run dev`, `npm test` and `npm run deploy`; the file is written only when its
// text changed, so wrangler's asset watcher sees no change otherwise.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { adminOpenApi } from "../src/edge/admin/openapi.ts";

export const OPENAPI_ASSET = join(import.meta.dirname, "..", "assets", "admin", "openapi.json");

/** The document as served: JSON, the same bytes for the same schemas. */
export const openApiText = (): string => `${JSON.stringify(adminOpenApi())}\n`;

function main(): void {
  const text = openApiText();
  if (existsSync(OPENAPI_ASSET) && readFileSync(OPENAPI_ASSET, "utf8") === text) return;
  mkdirSync(dirname(OPENAPI_ASSET), { recursive: true });
  writeFileSync(OPENAPI_ASSET, text);
  console.log(`openapi: wrote ${OPENAPI_ASSET.slice(join(import.meta.dirname, "..").length + 1)}, ${(text.length / 1024).toFixed(1)} KiB`);
}

if (import.meta.main) main();
