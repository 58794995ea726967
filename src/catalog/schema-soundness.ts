// Whether a tool's inputSchema is a JSON Schema the proxy can check arguments against. An upstream's schema may not
// be one (a `type` no draft knows, a `required` that is not a list of names, a `pattern` that is no regular expression,
// a `$ref` to nothing): checked against such a schema, every call would be refused, or the validator would throw.
// The dialect is the one its `$schema` names; without one, 2020-12 (MCP's default since SEP-1613). The check follows
// the keywords' shapes as the drafts' meta-schemas give them (what each keyword's value must be), not their vocabulary
// documents; an unknown keyword is an annotation and passes. Pure.

/** The drafts the validator (`@cfworker/json-schema`) knows, by the name it takes. */
export type SchemaDialect = "4" | "7" | "2019-09" | "2020-12";

const DIALECTS: ReadonlyArray<[RegExp, SchemaDialect]> = [
  [/^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/, "7"],
  [/^https?:\/\/json-schema\.org\/draft-04\/schema#?$/, "4"],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, "2019-09"],
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, "2020-12"],
];

/** The dialect a schema declares (2020-12 when it declares none), or undefined for a `$schema` no draft is. */
export function schemaDialect(schema: Record<string, unknown>): SchemaDialect | undefined {
  const named = schema.$schema;
  if (named === undefined) return "2020-12";
  if (typeof named !== "string") return undefined;
  return DIALECTS.find(([uri]) => uri.test(named))?.[1];
}

const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
/** Keywords whose value is one schema. */
const ONE_SCHEMA = ["additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Keywords whose value is a non-empty list of schemas. */
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNTS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"];
const NUMBERS = ["minimum", "maximum"];
const STRINGS = ["title", "description", "format", "$comment", "$id", "$anchor"];

/** How deep a schema is followed; a deeper one is not judged below it (nothing a tool's arguments reach). */
const MAX_DEPTH = 32;
/** At most this many faults are named. */
const MAX_FAULTS = 5;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;
const escapeToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/** Whether `pattern` compiles as the validator compiles it (a Unicode regular expression). */
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}

/** The reference tokens of a URI-fragment JSON pointer (`#/a~1b%20c` → `["a/b c"]`), or undefined when malformed. */
export function pointerTokens(pointer: string): string[] | undefined {
  if (pointer === "#" || pointer === "") return [];
  if (!pointer.startsWith("#/")) return undefined;
  try {
    return pointer.slice(2).split("/").map((raw) => decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~"));
  } catch {
    return undefined;
  }
}

/** One step into a JSON value: an object's own key or an array's index. */
export function stepInto(at: unknown, key: string): unknown {
  if (Array.isArray(at)) return /^(0|[1-9][0-9]*)$/.test(key) ? at[Number(key)] : undefined;
  return isObject(at) && Object.hasOwn(at, key) ? at[key] : undefined;
}

/** The value a local `$ref` (`#`, `#/json/pointer`) points at in `root`, or undefined when it points at nothing. */
export function resolvePointer(root: unknown, ref: string): unknown {
  const tokens = pointerTokens(ref);
  return tokens === undefined ? undefined : tokens.reduce<unknown>((at, key) => stepInto(at, key), root);
}

class SoundnessWalk {
  readonly faults: string[] = [];
  readonly root: unknown;
  readonly dialect: SchemaDialect;
  constructor(root: unknown, dialect: SchemaDialect) {
    this.root = root;
    this.dialect = dialect;
  }

  fault(at: string, text: string): void {
    if (this.faults.length < MAX_FAULTS) this.faults.push(`${at || "/"}: ${text}`);
  }

  schema(value: unknown, at: string, depth: number): void {
    if (typeof value === "boolean" && this.dialect !== "4") return;
    if (!isObject(value)) return this.fault(at, "a schema is an object" + (this.dialect === "4" ? "" : " or a boolean"));
    if (depth > MAX_DEPTH) return;
    this.shapes(value, at);
    this.subschemas(value, at, depth);
  }

  /** The keywords whose values are not schemas. */
  shapes(s: Record<string, unknown>, at: string): void {
    const { type, required, pattern, $ref } = s;
    if (type !== undefined) {
      const types = Array.isArray(type) ? type : [type];
      if (types.length === 0 || types.some((t) => typeof t !== "string" || !TYPES.has(t)) || new Set(types).size !== types.length) this.fault(`${at}/type`, "not a type name or a list of distinct type names");
    }
    if (required !== undefined && (!Array.isArray(required) || required.some((r) => typeof r !== "string") || new Set(required).size !== required.length)) this.fault(`${at}/required`, "not a list of distinct property names");
    if (pattern !== undefined && (typeof pattern !== "string" || !compiles(pattern))) this.fault(`${at}/pattern`, "not a regular expression");
    if (s.enum !== undefined && !Array.isArray(s.enum)) this.fault(`${at}/enum`, "not a list");
    if (s.uniqueItems !== undefined && typeof s.uniqueItems !== "boolean") this.fault(`${at}/uniqueItems`, "not a boolean");
    if (s.multipleOf !== undefined && !(typeof s.multipleOf === "number" && s.multipleOf > 0)) this.fault(`${at}/multipleOf`, "not a number above 0");
    for (const k of COUNTS) if (s[k] !== undefined && !isCount(s[k])) this.fault(`${at}/${k}`, "not a non-negative integer");
    for (const k of NUMBERS) if (s[k] !== undefined && typeof s[k] !== "number") this.fault(`${at}/${k}`, "not a number");
    for (const k of ["exclusiveMinimum", "exclusiveMaximum"]) {
      if (s[k] !== undefined && typeof s[k] !== (this.dialect === "4" ? "boolean" : "number")) this.fault(`${at}/${k}`, `not a ${this.dialect === "4" ? "boolean" : "number"}`);
    }
    for (const k of STRINGS) if (s[k] !== undefined && typeof s[k] !== "string") this.fault(`${at}/${k}`, "not a string");
    if ($ref !== undefined) {
      if (typeof $ref !== "string") this.fault(`${at}/$ref`, "not a string");
      else if (($ref === "#" || $ref.startsWith("#/")) && resolvePointer(this.root, $ref) === undefined) this.fault(`${at}/$ref`, "points at nothing in the schema");
    }
  }

  /** The keywords whose values are schemas, each followed. */
  subschemas(s: Record<string, unknown>, at: string, depth: number): void {
    for (const k of ONE_SCHEMA) if (s[k] !== undefined) this.schema(s[k], `${at}/${k}`, depth + 1);
    for (const k of SCHEMA_MAPS) {
      const map = s[k];
      if (map === undefined) continue;
      if (!isObject(map)) {
        this.fault(`${at}/${k}`, "not an object of schemas");
        continue;
      }
      for (const [name, sub] of Object.entries(map)) {
        if (k === "patternProperties" && !compiles(name)) this.fault(`${at}/${k}/${escapeToken(name)}`, "not a regular expression");
        this.schema(sub, `${at}/${k}/${escapeToken(name)}`, depth + 1);
      }
    }
    for (const k of SCHEMA_LISTS) {
      const list = s[k];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0) this.fault(`${at}/${k}`, "not a non-empty list of schemas");
      else list.forEach((sub, i) => this.schema(sub, `${at}/${k}/${i}`, depth + 1));
    }
    const { items } = s;
    // A list of item schemas is the older drafts' tuple form; 2020-12 has prefixItems for it.
    if (Array.isArray(items) && this.dialect !== "2020-12") items.forEach((sub, i) => this.schema(sub, `${at}/items/${i}`, depth + 1));
    else if (items !== undefined) this.schema(items, `${at}/items`, depth + 1);
  }
}

/**
 * What makes `schema` no JSON Schema of its dialect (at most a few faults, each at its JSON pointer), or none. A
 * tool's arguments are checked only against a schema with none.
 */
export function schemaFaults(schema: unknown): string[] {
  if (!isObject(schema)) return ["/: an inputSchema is an object"];
  const dialect = schemaDialect(schema);
  if (dialect === undefined) return ["/$schema: names no JSON Schema draft the proxy knows"];
  const walk = new SoundnessWalk(schema, dialect);
  walk.schema(schema, "", 0);
  return walk.faults;
}
