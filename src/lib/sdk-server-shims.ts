// `@modelcontextprotocol/server/_shims` in the deployed Worker (wrangler.toml `[alias]`): what the SDK's own workerd
// shim exports, its validator on the project's copy of `@cfworker/json-schema` (./sdk-json-schema.ts).
export { SharedJsonSchemaValidator as DefaultJsonSchemaValidator } from "./sdk-json-schema.ts";

const notSupported = (): never => {
  throw new Error("StdioServerTransport is not supported in Cloudflare Workers.");
};

/** The SDK's stdio transport reads these; a Worker has no standard input or output. */
export const process = {
  get stdin(): never {
    return notSupported();
  },
  get stdout(): never {
    return notSupported();
  },
};
