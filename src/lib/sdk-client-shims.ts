// `@modelcontextprotocol/client/_shims` in the deployed Worker (wrangler.toml `[alias]`): what the SDK's own workerd
// shim exports, its validator on the project's copy of `@cfworker/json-schema` (./sdk-json-schema.ts).
export { SharedJsonSchemaValidator as DefaultJsonSchemaValidator } from "./sdk-json-schema.ts";

/** As the SDK's workerd shim says: a Worker's fetch is not a browser's, so no CORS applies. */
export const CORS_IS_POSSIBLE = false;
