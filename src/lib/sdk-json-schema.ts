// The JSON Schema validator the MCP SDK's server and client use in the deployed Worker, on the project's one copy of
// `@cfworker/json-schema`. The SDK's workerd shims (`@modelcontextprotocol/server/_shims`, `…/client/_shims`) each
// carry a copy of that library sealed in a chunk of their own; wrangler.toml's `[alias]` puts sdk-server-shims.ts and
// sdk-client-shims.ts in their place, so the bundle holds the library once (the proxy's argument check uses it too).
// The same contract as the SDK's `CfWorkerJsonSchemaValidator`: the dialect from `$schema` (none: 2020-12), others
// refused, the first error reported.
import { Validator } from "@cfworker/json-schema";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/server";

/** The engine's name for the dialect a schema declares; a `$schema` it cannot validate throws, as the SDK's does. */
function draftOf(schema: JsonSchemaType): "7" | "2019-09" | "2020-12" {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return "2020-12";
  if (typeof declared === "string") {
    if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return "2020-12";
    if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return "2019-09";
    if (/^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/.test(declared)) return "7";
  }
  throw new Error(`Unsupported JSON Schema dialect ${JSON.stringify(declared)}.`);
}

/** What the SDK's `DefaultJsonSchemaValidator` is in the deployed Worker. */
export class SharedJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const validator = new Validator(schema as never, draftOf(schema), true);
    return (input: unknown) => {
      const result = validator.validate(input);
      return result.valid
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: result.errors.map((e) => `${e.instanceLocation}: ${e.error}`).join("; ") };
    };
  }
}
