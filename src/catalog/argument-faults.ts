// The words for arguments that do not match a tool's inputSchema: one line per wrong or missing field, the field named
// by its path and the shape its schema expects ("owner: required (string)", "repository: not allowed (the tool takes
// owner, repo)", "per_page: expected integer, got string"). Read from the validator's output units (keyword, instance
// and keyword locations: data, never its message text) and the schema they point into. Never an argument's value:
// only field names and JSON types of what was given. Pure.
import type { OutputUnit } from "@cfworker/json-schema";
import { pointerTokens, resolvePointer, stepInto } from "./schema-soundness.ts";

/** At most this many lines are written; the rest are counted. */
export const MAX_FAULT_LINES = 8;
/** Names a "not allowed" line lists of what the object takes. */
const MAX_TAKEN = 12;
const MAX_NAME = 64;
const MAX_SHOWN = 120;

/** Keywords that only say a subschema failed: what failed in it has its own unit. */
const CONTAINERS = new Set(["properties", "patternProperties", "items", "prefixItems", "additionalItems", "$ref", "$recursiveRef", "allOf", "dependentSchemas", "if", "then", "else", "contains", "propertyNames"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const shorten = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** A field's path as a model reads it: `filter.labels[0]`; the arguments themselves are "arguments". */
function fieldName(tokens: string[]): string {
  if (tokens.length === 0) return "arguments";
  const path = tokens.map((t, i) => (/^(0|[1-9][0-9]*)$/.test(t) && i > 0 ? `[${t}]` : i === 0 ? t : `.${t}`)).join("");
  return shorten(path, MAX_NAME);
}

/** The JSON type of a value (never the value). */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** A schema's value (an enum member, a bound) as the schema states it: the schema is the tool's, not the caller's. */
const stated = (value: unknown) => shorten(JSON.stringify(value) ?? String(value), MAX_SHOWN);

/** The shape a schema expects, in a few words: `string`, `integer or null`, `one of "open", "closed"`, `array of string`. */
export function shapeOf(schema: unknown): string {
  if (!isObject(schema)) return schema === false ? "nothing" : "any value";
  if (Array.isArray(schema.enum)) return `one of ${shorten(schema.enum.map((v) => JSON.stringify(v)).join(", "), MAX_SHOWN)}`;
  if (schema.const !== undefined) return stated(schema.const);
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === "string" ? [schema.type] : [];
  if (types.length === 1 && types[0] === "array" && isObject(schema.items)) return `array of ${shapeOf(schema.items)}`;
  if (types.length === 1 && types[0] === "object") return objectShape(schema);
  if (types.length > 0) return types.join(" or ");
  const alternatives = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(alternatives)) return alternatives.map(shapeOf).join(" | ");
  if (isObject(schema.properties)) return objectShape(schema);
  return "any value";
}

/** An object schema's shape with the fields it requires (else those it takes): `object (path, line, body)`. */
function objectShape(schema: Record<string, unknown>): string {
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const fields = required.length > 0 ? required : isObject(schema.properties) ? Object.keys(schema.properties) : [];
  return fields.length === 0 ? "object" : `object (${shorten(fields.join(", "), MAX_SHOWN)})`;
}

/** What one bound keyword asks for, in words. */
function boundWords(keyword: string, value: unknown): string | undefined {
  switch (keyword) {
    case "minLength": return `at least ${stated(value)} characters`;
    case "maxLength": return `at most ${stated(value)} characters`;
    case "minItems": return `at least ${stated(value)} items`;
    case "maxItems": return `at most ${stated(value)} items`;
    case "minProperties": return `at least ${stated(value)} fields`;
    case "maxProperties": return `at most ${stated(value)} fields`;
    case "minimum": return `a number ≥ ${stated(value)}`;
    case "maximum": return `a number ≤ ${stated(value)}`;
    case "exclusiveMinimum": return `a number > ${stated(value)}`;
    case "exclusiveMaximum": return `a number < ${stated(value)}`;
    case "multipleOf": return `a multiple of ${stated(value)}`;
    case "pattern": return `a string matching ${stated(value)}`;
    case "format": return `a string of format ${stated(value)}`;
    case "uniqueItems": return "distinct items";
    case "enum": return shapeOf({ enum: value });
    case "const": return stated(value);
    default: return undefined;
  }
}

/** The schema a keyword location names, following each `$ref` it passes through (local references only). */
function schemaAt(root: unknown, pointer: string): { found: boolean; value: unknown } {
  const tokens = pointerTokens(pointer);
  if (tokens === undefined) return { found: false, value: undefined };
  let at: unknown = root;
  for (const token of tokens) {
    if (token === "$ref" && isObject(at) && typeof at.$ref === "string") {
      const target = pointerTokens(at.$ref);
      if (target === undefined) return { found: false, value: undefined };
      at = target.reduce<unknown>((node, key) => stepInto(node, key), root);
    } else at = stepInto(at, token);
    if (at === undefined) return { found: false, value: undefined };
  }
  return { found: true, value: at };
}

const parentOf = (pointer: string) => pointer.slice(0, pointer.lastIndexOf("/"));

/** The property names an object schema takes, for a "not allowed" line. */
function takenNames(objectSchema: unknown): string {
  const names = isObject(objectSchema) && isObject(objectSchema.properties) ? Object.keys(objectSchema.properties) : [];
  if (names.length === 0) return "no other fields";
  const listed = names.slice(0, MAX_TAKEN).join(", ");
  return names.length > MAX_TAKEN ? `${listed}, …` : listed;
}

/** Keys of `value` an object schema has no place for (neither a property nor a pattern's). */
function extraKeys(objectSchema: unknown, value: unknown): string[] {
  if (!isObject(value) || !isObject(objectSchema)) return [];
  const properties = isObject(objectSchema.properties) ? objectSchema.properties : {};
  const patterns = isObject(objectSchema.patternProperties) ? Object.keys(objectSchema.patternProperties) : [];
  return Object.keys(value).filter((key) => !Object.hasOwn(properties, key) && !patterns.some((p) => new RegExp(p, "u").test(key)));
}

/** The lines for one unit, each keyed by its field (the first line said of a field stands). */
function unitLines(unit: OutputUnit, schema: unknown, input: unknown): Array<[string, string]> {
  const tokens = pointerTokens(unit.instanceLocation) ?? [];
  const value = tokens.reduce<unknown>((at, key) => stepInto(at, key), input);
  const field = fieldName(tokens);
  const { found, value: keywordValue } = schemaAt(schema, unit.keywordLocation);
  const owner = schemaAt(schema, parentOf(unit.keywordLocation)).value;
  const at = (name: string) => fieldName([...tokens, name]);
  switch (unit.keyword) {
    case "required": {
      const required = Array.isArray(keywordValue) ? keywordValue.map(String) : [];
      const missing = required.filter((name) => !(isObject(value) && Object.hasOwn(value, name)));
      const properties = isObject(owner) && isObject(owner.properties) ? owner.properties : {};
      // A field defined by reference (`{"$ref": "#/$defs/repo"}`) is named by the shape it refers to.
      const defined = (field: unknown) => (isObject(field) && typeof field.$ref === "string" ? (resolvePointer(schema, field.$ref) ?? field) : field);
      return missing.map((name) => [at(name), `${at(name)}: required (${shapeOf(defined(properties[name]))})`]);
    }
    case "additionalProperties":
    case "unevaluatedProperties": {
      // A schema for the extra fields reports its own faults; `false` refuses them.
      if (!found || keywordValue !== false) return [];
      const takes = tokens.length === 0 ? "the tool takes" : `${field} takes`;
      return extraKeys(owner, value).map((name) => [at(name), `${at(name)}: not allowed (${takes} ${takenNames(owner)})`]);
    }
    case "false":
      return [[field, `${field}: not allowed`]];
    case "type": {
      const expected = Array.isArray(keywordValue) ? keywordValue.join(" or ") : String(keywordValue);
      return [[field, `${field}: expected ${expected}, got ${jsonType(value)}`]];
    }
    case "anyOf":
    case "oneOf":
      return [[field, `${field}: expected ${shapeOf(owner)}, got ${jsonType(value)}`]];
    default: {
      const words = found ? boundWords(unit.keyword, keywordValue) : undefined;
      return [[field, words ? `${field}: expected ${words}` : `${field}: does not match its schema (${shorten(unit.keyword, 40)})`]];
    }
  }
}

/**
 * One line per wrong or missing field of `input` (the arguments) against `schema`, from the validator's units: the
 * lines of a field inside an `anyOf`/`oneOf` alternative fold into that keyword's one line.
 */
export function argumentFaults(schema: unknown, input: unknown, units: readonly OutputUnit[]): string[] {
  const lines = new Map<string, string>();
  const folded: string[] = [];
  for (const unit of units) {
    if (CONTAINERS.has(unit.keyword)) continue;
    if (folded.some((at) => unit.keywordLocation.startsWith(`${at}/`))) continue;
    if (unit.keyword === "anyOf" || unit.keyword === "oneOf") folded.push(unit.keywordLocation);
    for (const [field, line] of unitLines(unit, schema, input)) if (!lines.has(field)) lines.set(field, line);
  }
  const all = [...lines.values()];
  if (all.length <= MAX_FAULT_LINES) return all;
  return [...all.slice(0, MAX_FAULT_LINES), `and ${all.length - MAX_FAULT_LINES} more`];
}
