// The parts of the argument check that need no upstream: whether a schema is one the proxy checks against (judged
// beside ajv's meta-schema check, a third party's reading of the drafts), and the words for a mismatch.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Validator } from "@cfworker/json-schema";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Ajv as AjvDraft7 } from "ajv";
import { describe, expect, it } from "vitest";
import { argumentFaults } from "../../src/catalog/argument-faults.ts";
import { schemaDialect, schemaFaults } from "../../src/catalog/schema-soundness.ts";
import { CORPUS_DIR } from "../../harness/replay-server.ts";

const ajvOptions = { strict: false, validateFormats: false } as const;
const ajv = { "2020-12": new Ajv2020(ajvOptions), "7": new AjvDraft7(ajvOptions) };
/** Valid by the draft's meta-schema, and compiled by ajv (which is where a `pattern`, only a format there, is judged). */
const metaValid = (schema: Record<string, unknown>) => {
  const { $schema: _named, ...rest } = schema;
  const checker = ajv[schemaDialect(schema) === "7" ? "7" : "2020-12"];
  try {
    return checker.validateSchema(rest) === true && typeof checker.compile(rest) === "function";
  } catch {
    return false;
  }
};

const corpusTools = readdirSync(CORPUS_DIR)
  .filter((f) => f.endsWith(".json"))
  .flatMap((f) => (JSON.parse(readFileSync(join(CORPUS_DIR, f), "utf8")) as { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> }).tools);

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });

/** Schemas no draft accepts, each with the pointer its fault is named at. */
const BROKEN: Array<[string, Record<string, unknown>, string]> = [
  ["an unknown type", object({ a: { type: "strin" } }), "/properties/a/type"],
  ["required not a list", object({ a: { type: "string" } }, { required: "a" }), "/required"],
  ["required with a number", object({ a: { type: "string" } }, { required: [1] }), "/required"],
  ["a pattern that does not compile", object({ a: { type: "string", pattern: "(" } }), "/properties/a/pattern"],
  ["properties not an object", { type: "object", properties: [] }, "/properties"],
  ["a property schema that is a string", object({ a: "string" }), "/properties/a"],
  ["an empty anyOf", object({ a: { anyOf: [] } }), "/properties/a/anyOf"],
  ["a negative minLength", object({ a: { type: "string", minLength: -1 } }), "/properties/a/minLength"],
  ["enum not a list", object({ a: { enum: "x" } }), "/properties/a/enum"],
  ["a description that is no string", object({ a: { type: "string", description: 5 } }), "/properties/a/description"],
];

describe("schemaFaults", () => {
  it("accepts every recorded corpus tool's schema, as ajv's meta-schema check does, and the validator applies each", () => {
    expect(corpusTools.length).toBe(421);
    for (const tool of corpusTools) {
      expect([tool.name, schemaFaults(tool.inputSchema)]).toEqual([tool.name, []]);
      expect([tool.name, metaValid(tool.inputSchema)]).toEqual([tool.name, true]);
      expect(() => new Validator(tool.inputSchema as never, schemaDialect(tool.inputSchema), false).validate({})).not.toThrow();
    }
  });

  it.each(BROKEN)("refuses %s where ajv's meta-schema check does, at its pointer", (_what, schema, pointer) => {
    expect(metaValid(schema)).toBe(false);
    const faults = schemaFaults(schema);
    expect(faults.length).toBeGreaterThan(0);
    expect(faults[0]!.startsWith(`${pointer}:`)).toBe(true);
  });

  it("refuses a $ref to nothing and a $schema no draft is; takes the draft's own forms", () => {
    expect(schemaFaults(object({ a: { $ref: "#/$defs/none" } }))).toEqual(["/properties/a/$ref: points at nothing in the schema"]);
    expect(schemaFaults({ $schema: "https://example.com/my-dialect", type: "object" })).toHaveLength(1);
    expect(schemaFaults(object({ a: { $ref: "#/$defs/x" } }, { $defs: { x: { type: "string" } } }))).toEqual([]);
    const draft7 = { $schema: "http://json-schema.org/draft-07/schema#", ...object({ t: { type: "array", items: [{ type: "string" }] } }) };
    expect(schemaFaults(draft7)).toEqual([]);
    expect(schemaFaults(object({ t: { type: "array", items: [{ type: "string" }] } }))).toHaveLength(1);
    expect(schemaFaults(object({ a: true, b: false }))).toEqual([]);
  });
});

const REPO_SCHEMA = {
  type: "object",
  properties: {
    owner: { type: "string" },
    repo: { type: "string" },
    per_page: { type: "integer", minimum: 1 },
    state: { type: "string", enum: ["open", "closed"] },
    filter: { type: "object", properties: { label: { type: "string" } }, required: ["label"], additionalProperties: false },
    id: { anyOf: [{ type: "string" }, { type: "integer" }] },
  },
  required: ["owner", "repo"],
  additionalProperties: false,
};

const faultsOf = (schema: Record<string, unknown>, input: Record<string, unknown>) => {
  const outcome = new Validator(schema as never, "2020-12", false).validate(input);
  return argumentFaults(schema, input, outcome.errors);
};

describe("argumentFaults", () => {
  it("names each wrong or missing field and the shape expected, never a value", () => {
    const input = { repository: "acme/secret-value", per_page: "50", state: "merged", filter: { lable: "bug-secret" }, id: true };
    const lines = faultsOf(REPO_SCHEMA, input);
    expect(lines).toEqual([
      "owner: required (string)",
      "repo: required (string)",
      "per_page: expected integer, got string",
      'state: expected one of "open", "closed"',
      "filter.label: required (string)",
      "filter.lable: not allowed (filter takes label)",
      "id: expected string | integer, got boolean",
      "repository: not allowed (the tool takes owner, repo, per_page, state, filter, id)",
    ]);
    expect(lines.join(" ")).not.toMatch(/secret|merged|50/);
  });

  it("follows $ref to the schema a fault is in, and counts what it does not list", () => {
    const schema = { type: "object", properties: { items: { type: "array", items: { $ref: "#/$defs/item" } } }, $defs: { item: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } } };
    expect(faultsOf(schema, { items: [{ n: "x" }, {}] })).toEqual(["items[0].n: expected number, got string", "items[1].n: required (number)"]);
    const byRef = { type: "object", properties: { repo: { $ref: "#/$defs/name" } }, required: ["repo"], $defs: { name: { type: "string" } } };
    expect(faultsOf(byRef, {})).toEqual(["repo: required (string)"]);
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, { type: "string" }]));
    const lines = faultsOf({ type: "object", properties: many, required: Object.keys(many) }, {});
    expect(lines).toHaveLength(9);
    expect(lines.at(-1)).toBe("and 4 more");
  });
});
