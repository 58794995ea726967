// The validator that takes the place of the MCP SDK's own in the deployed Worker (src/lib/sdk-json-schema.ts, through
// wrangler.toml's [alias]) answers as the SDK's workerd validator does: the same verdict and the same message for
// every corpus tool's input schema against a few inputs, and the same dialects accepted and refused.
import { describe, expect, it } from "vitest";
import { corpusFiles, loadCorpus } from "../../harness/replay-server.ts";
import { SharedJsonSchemaValidator } from "../../src/lib/sdk-json-schema.ts";
import { CORS_IS_POSSIBLE } from "../../src/lib/sdk-client-shims.ts";
import { process as shimProcess } from "../../src/lib/sdk-server-shims.ts";
// The SDK's own workerd shim, by file: its package exports it only under the workerd condition.
import { DefaultJsonSchemaValidator as SdkValidator } from "../../node_modules/@modelcontextprotocol/server/dist/shimsWorkerd.mjs";

type Schema = Parameters<SharedJsonSchemaValidator["getValidator"]>[0];
const schemas = corpusFiles().flatMap((file) => loadCorpus(file).tools.map((tool) => tool.inputSchema as Schema));
const inputs: unknown[] = [{}, { a: 1 }, { query: "x", limit: "ten" }, [], "text", null];

describe("the shared JSON Schema validator", () => {
  it("gives the SDK's verdict and message for every corpus schema", () => {
    const ours = new SharedJsonSchemaValidator();
    const theirs = new SdkValidator();
    expect(schemas.length).toBeGreaterThanOrEqual(421);
    let refusals = 0;
    for (const schema of schemas) {
      const [mine, sdk] = [ours.getValidator(schema), theirs.getValidator(schema)];
      for (const input of inputs) {
        const [a, b] = [mine(input), sdk(input)];
        expect(a).toEqual(b);
        if (!a.valid) refusals++;
      }
    }
    // The inputs are wrong for most schemas: the comparison covers refusals, not only passes.
    expect(refusals).toBeGreaterThan(schemas.length);
  });

  it("takes the dialects the SDK takes and refuses the others", () => {
    const ours = new SharedJsonSchemaValidator();
    const theirs = new SdkValidator();
    for (const $schema of ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-06/schema#"]) {
      const schema = { $schema, type: "object", required: ["a"] } as Schema;
      expect(ours.getValidator(schema)({})).toEqual(theirs.getValidator(schema)({}));
    }
    const old = { $schema: "http://json-schema.org/draft-04/schema#", type: "object" } as Schema;
    expect(() => theirs.getValidator(old)).toThrow();
    expect(() => ours.getValidator(old)).toThrow(/Unsupported JSON Schema dialect/);
  });

  it("exports what the SDK's workerd shims export", () => {
    expect(CORS_IS_POSSIBLE).toBe(false);
    expect(() => shimProcess.stdin).toThrow(/not supported/);
  });
});
