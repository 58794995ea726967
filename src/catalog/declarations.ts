// Pure: the TypeScript declarations code mode shows a model, written from the tools' JSON Schemas (the project's
// own generator). A server is `declare const github: { … };`, each tool a method of it whose input type comes from
// its inputSchema and whose result comes from its outputSchema (`Promise<unknown>` without one). A method is a
// property, not a `function` of a `declare namespace`, so a tool named `export` or `delete` keeps its name.
// Every description is written once, as the doc comment of what it describes: the JSON Schemas' own weight, not
// more (a generator that also lists `@param` lines costs 1.24× the JSON on the corpus). Only the shape is typed:
// bounds, patterns and `not` are validation the upstream does. A schema too deep, recursive or too large ends in a
// commented `unknown` rather than an unbounded text, and nothing in a description or a key can leave its comment
// or its string.
import { firstSentenceEnd } from "./sentence.ts";

/** The tool as the declarations need it (an MCP `Tool` fits). */
export interface DeclarableTool {
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

export interface DeclarationLimits {
  /** Object and array levels written out; deeper values are `unknown`. */
  maxDepth: number;
  /** Characters of one schema's type, about; past it the depth is lowered until it fits. */
  maxChars: number;
  /**
   * Tool descriptions shortened to their first sentence (at most BRIEF_TOOL_CHARS), a cut one ending in `…`.
   * Writing a call needs the types and what each thing is; the tool was chosen already (search shows the same first
   * sentence), and the selection and usage guides some servers write into descriptions are asked for whole.
   * Parameter descriptions are never shortened: their examples and formats ("e.g. 'System.Title'") are what a call
   * is written from.
   */
  brief?: boolean;
}

/** The brief form's longest tool description, in characters. */
export const BRIEF_TOOL_CHARS = 240;

/** The corpus's deepest schema (MongoDB's `explain`) has 8 levels; its largest method (`export`) is 11,515 characters. */
export const DECLARATION_LIMITS: DeclarationLimits = { maxDepth: 12, maxChars: 20_000 };

const INDENT = "  ";
const PROPERTY_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** What the depth cut and the size cut write in place of a type. */
const DEEPER = "unknown /* deeper levels not declared */";
const TOO_LARGE = "Record<string, unknown> /* too large to declare */";

type Schema = { [key: string]: unknown };

/** A rendered type and how tightly it binds, for parentheses: a union inside an array needs them, an object not. */
interface Rendered {
  text: string;
  binds: "union" | "intersection" | "atom";
}

interface Context {
  root: unknown;
  /** Descriptions shortened (`DeclarationLimits.brief`), and whether any was. */
  brief: { on: boolean; shortened: boolean };
  maxDepth: number;
  /** Characters left before the rendering gives up (TooLarge, caught by `schemaType`). */
  budget: { left: number };
  /** `$ref`s being expanded: one seen again is recursion. */
  refs: readonly string[];
  depth: number;
  indent: string;
}

class TooLarge extends Error {}

const atom = (text: string): Rendered => ({ text, binds: "atom" });
const isSchema = (value: unknown): value is Schema => typeof value === "object" && value !== null && !Array.isArray(value);

function spend(ctx: Context, text: string): string {
  ctx.budget.left -= text.length;
  if (ctx.budget.left < 0) throw new TooLarge();
  return text;
}

/** A JSON value as a TypeScript literal type: JSON's own syntax is one (strings escaped, objects, tuples). */
const literal = (value: unknown): string => JSON.stringify(value) ?? "undefined";

/** Text cut at a word boundary to at most `max` characters, with `…`. */
function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const space = room.lastIndexOf(" ");
  return `${(space > max / 2 ? room.slice(0, space) : room).replace(/[\s,;:.-]+$/, "")}…`;
}

/**
 * A tool's description in the brief form: its first sentence, whitespace folded, within BRIEF_TOOL_CHARS; `…` ends
 * one that lost anything. Recorded in `brief.shortened` when it did.
 */
function briefly(text: string | undefined, brief: Context["brief"]): string | undefined {
  if (!brief.on || text === undefined) return text;
  const whole = text.replace(/\s+/g, " ").trim();
  const end = firstSentenceEnd(whole);
  const short = cutAt(end === -1 ? whole : whole.slice(0, end + 1), BRIEF_TOOL_CHARS);
  if (short === whole) return text;
  brief.shortened = true;
  return short.endsWith("…") ? short : `${short.replace(/[.:;,]$/, "")} …`;
}

/** Description text safe inside a block comment, lines kept, control characters and line separators made plain. */
function commentText(text: string): string {
  return text
    .replace(/\r\n?|[\u2028\u2029]/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "")
    .replace(/[ \t]+$/gm, "")
    .replace(/\*\//g, "*\\/")
    .trim();
}

/** A doc comment (`/** … *\/`) of a description and its tags, one line when it fits on one; empty when there is nothing. */
function docComment(description: string | undefined, tags: readonly string[], indent: string): string {
  const text = description === undefined ? "" : commentText(description);
  const lines = [...(text === "" ? [] : text.split("\n")), ...tags.map(commentText)];
  if (lines.length === 0) return "";
  if (lines.length === 1 || (tags.length > 0 && !text.includes("\n") && lines.length <= 3)) return `${indent}/** ${lines.join(" ")} */\n`;
  return `${indent}/**\n${lines.map((l) => (l === "" ? `${indent} *` : `${indent} * ${l}`)).join("\n")}\n${indent} */\n`;
}

/** The target of a `$ref` inside the same document (`#`, `#/$defs/x`, `#/definitions/x`); undefined for others. */
function resolveRef(ref: string, root: unknown): unknown {
  if (ref !== "#" && !ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/").filter((p, i) => ref !== "#" || i > 0)) {
    let key: string;
    try {
      key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Schema)[key];
  }
  return node;
}

/** A schema's description, or its `$ref` target's, or that of the one member of a nullable union that is not null. */
function describedBy(schema: unknown, ctx: Context): { text: string | undefined; lifted?: unknown } {
  if (!isSchema(schema)) return { text: undefined };
  if (typeof schema.description === "string") return { text: schema.description };
  if (typeof schema.$ref === "string") {
    const target = resolveRef(schema.$ref, ctx.root);
    if (isSchema(target) && typeof target.description === "string") return { text: target.description, lifted: target };
  }
  // `anyOf: [{ type: "string", description }, { type: "null" }]`: what zod writes for a nullable parameter.
  const members: unknown[] = [schema.anyOf, schema.oneOf].find(Array.isArray) ?? [];
  const others = members.filter((m) => !(isSchema(m) && m.type === "null"));
  const only = others.length === 1 ? others[0] : undefined;
  return isSchema(only) && typeof only.description === "string" ? { text: only.description, lifted: only } : { text: undefined };
}

function union(parts: readonly Rendered[]): Rendered {
  const texts = [...new Set(parts.map((p) => p.text))];
  if (texts.length === 0) return atom("never");
  if (texts.includes("unknown")) return atom("unknown");
  return texts.length === 1 ? parts.find((p) => p.text === texts[0])! : { text: texts.join(" | "), binds: "union" };
}

function intersection(parts: readonly Rendered[]): Rendered {
  const kept = parts.filter((p) => p.text !== "unknown");
  if (kept.length === 0) return atom("unknown");
  if (kept.length === 1) return kept[0]!;
  return { text: kept.map((p) => (p.binds === "union" ? `(${p.text})` : p.text)).join(" & "), binds: "intersection" };
}

/** The type of a schema (at `ctx.indent`), without the description of the schema itself (its owner writes that). */
function typeOf(schema: unknown, ctx: Context, skip?: unknown): Rendered {
  // Every schema visited costs a little, so `$ref`s fanning out to empty schemas stay bounded too.
  spend(ctx, " ");
  if (schema === true || schema === undefined) return atom("unknown");
  if (schema === false) return atom("never");
  if (!isSchema(schema)) return atom("unknown");
  const parts: Rendered[] = [];
  if (typeof schema.$ref === "string") parts.push(refType(schema.$ref, ctx));
  if ("const" in schema) parts.push(atom(spend(ctx, literal(schema.const))));
  else if (Array.isArray(schema.enum)) parts.push(union(schema.enum.map((v) => atom(spend(ctx, literal(v))))));
  else {
    const own = ownType(schema, ctx);
    if (own) parts.push(own);
  }
  if (Array.isArray(schema.allOf)) parts.push(intersection(schema.allOf.map((s) => member(s, ctx, skip))));
  for (const key of ["anyOf", "oneOf"] as const) {
    const members = schema[key];
    if (Array.isArray(members)) parts.push(union(members.map((s) => member(s, ctx, skip))));
  }
  const type = intersection(parts);
  // OpenAPI 3.0's `nullable`, which some servers still write.
  return schema.nullable === true && type.text !== "unknown" ? union([type, atom("null")]) : type;
}

/** A member of a union or intersection: its description, if not lifted to the property, as a comment before it. */
function member(schema: unknown, ctx: Context, skip: unknown): Rendered {
  const type = typeOf(schema, ctx);
  if (schema === skip || !isSchema(schema) || typeof schema.description !== "string") return type;
  const note = spend(ctx, `/** ${commentText(schema.description).replace(/\s+/g, " ")} */ `);
  return { text: `${note}${type.binds === "atom" ? type.text : `(${type.text})`}`, binds: "atom" };
}

function refType(ref: string, ctx: Context): Rendered {
  if (ctx.refs.includes(ref)) return atom(`unknown /* recursive: ${commentText(ref)} */`);
  const target = resolveRef(ref, ctx.root);
  if (target === undefined) return atom("unknown");
  return typeOf(target, { ...ctx, refs: [...ctx.refs, ref] });
}

/** What `type` (one or several), `properties` and `items` say; undefined when they say nothing. */
function ownType(schema: Schema, ctx: Context): Rendered | undefined {
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === "string" ? [schema.type] : [];
  if (types.length === 0) {
    if (isSchema(schema.properties) || schema.additionalProperties !== undefined) return objectType(schema, ctx);
    if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return arrayType(schema, ctx);
    return undefined;
  }
  return union(
    types.map((t): Rendered => {
      if (t === "string") return atom("string");
      if (t === "number" || t === "integer") return atom("number");
      if (t === "boolean" || t === "null") return atom(t);
      if (t === "array") return arrayType(schema, ctx);
      if (t === "object") return objectType(schema, ctx);
      return atom("unknown");
    }),
  );
}

function deeper(ctx: Context): Context | undefined {
  return ctx.depth >= ctx.maxDepth ? undefined : { ...ctx, depth: ctx.depth + 1 };
}

function arrayType(schema: Schema, ctx: Context): Rendered {
  const inner = deeper(ctx);
  if (!inner) return atom(DEEPER);
  // Draft 2020-12 tuples are `prefixItems`; older drafts wrote an array under `items`.
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  if (tuple) return atom(`[${tuple.map((s) => member(s, inner, undefined).text).join(", ")}]`);
  const item = member(schema.items, inner, undefined);
  return atom(item.binds === "atom" ? `${item.text}[]` : `(${item.text})[]`);
}

function objectType(schema: Schema, ctx: Context): Rendered {
  const inner = deeper(ctx);
  if (!inner) return atom(DEEPER);
  const properties = isSchema(schema.properties) ? Object.entries(schema.properties) : [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const extra = schema.additionalProperties;
  // `{}` and `true` say what leaving the keyword out says: other keys allowed, of any type.
  const extraTyped = extra !== undefined && extra !== true && extra !== false && !(isSchema(extra) && Object.keys(extra).length === 0);
  if (properties.length === 0 && !extraTyped) return atom(extra === false ? "{}" : "Record<string, unknown>");
  const pad = inner.indent + INDENT;
  const body = { ...inner, indent: pad };
  const lines: string[] = [];
  for (const [key, value] of properties) {
    const doc = describedBy(value, ctx);
    const type = typeOf(value, body, doc.lifted);
    const name = PROPERTY_KEY.test(key) ? key : JSON.stringify(key);
    lines.push(spend(ctx, `${docComment(doc.text, tags(value), pad)}${pad}${name}${required.has(key) ? "" : "?"}: `) + `${type.text};`);
  }
  if (extraTyped) {
    const doc = describedBy(extra, ctx);
    const type = typeOf(extra, body, doc.lifted);
    if (properties.length === 0 && doc.text === undefined) return atom(`Record<string, ${type.text}>`);
    // TypeScript wants every property to fit the index signature: with properties beside it, any value fits.
    const value = properties.length === 0 ? type.text : `unknown /* other keys: ${commentText(type.text).replace(/\s+/g, " ")} */`;
    lines.push(spend(ctx, `${docComment(doc.text, [], pad)}${pad}[key: string]: `) + `${value};`);
  }
  return atom(`{\n${lines.join("\n")}\n${inner.indent}}`);
}

/** The doc tags of a schema: its default and format, which the type cannot say. */
function tags(schema: unknown): string[] {
  if (!isSchema(schema)) return [];
  const out: string[] = [];
  // A default of null says only that leaving the key out means null: nothing a caller needs.
  if ("default" in schema && schema.default !== undefined && schema.default !== null) out.push(`@default ${literal(schema.default)}`);
  if (typeof schema.format === "string") out.push(`@format ${schema.format}`);
  return out;
}

/** The type of a schema as text at `indent`, or throws TooLarge when `maxChars` is used up. */
function render(schema: unknown, limits: DeclarationLimits, indent: string, brief: Context["brief"]): Rendered {
  return typeOf(schema, { root: schema, brief, maxDepth: limits.maxDepth, budget: { left: limits.maxChars }, refs: [], depth: 0, indent });
}

/** The type of a schema, within the limits: the depth lowered until it fits, then a commented fallback. */
export function schemaType(schema: unknown, limits: DeclarationLimits = DECLARATION_LIMITS, indent = "", brief: Context["brief"] = { on: limits.brief === true, shortened: false }): string {
  for (let depth = limits.maxDepth; depth >= 1; depth = Math.floor(depth / 2)) {
    try {
      return render(schema, { ...limits, maxDepth: depth }, indent, brief).text;
    } catch (error) {
      if (!(error instanceof TooLarge)) throw error;
    }
  }
  return TOO_LARGE;
}

/** Whether an input schema declares no parameter, so the method takes none (`get_env()`). */
function takesNothing(schema: unknown): boolean {
  if (!isSchema(schema) || schema.type !== "object") return false;
  const noProperties = !isSchema(schema.properties) || Object.keys(schema.properties).length === 0;
  return noProperties && (schema.additionalProperties === undefined || schema.additionalProperties === false) && !schema.anyOf && !schema.oneOf && !schema.allOf && !schema.$ref;
}

/** Whether every parameter is optional, so the input may be left out (the caller then sends `{}`). */
function optionalInput(schema: unknown): boolean {
  return isSchema(schema) && schema.type === "object" && !(Array.isArray(schema.required) && schema.required.length > 0) && !schema.$ref && !schema.allOf;
}

/**
 * One method of a namespace, unindented, ending with `;`: the tool's description as a doc comment, then
 * `name(input: {…}): Promise<…>`, every parameter's description once, above the parameter; `tags` (`@destructive`…) close the doc comment.
 */
export function methodDeclaration(method: string, tool: DeclarableTool, limits: DeclarationLimits = DECLARATION_LIMITS, tags: readonly string[] = []): string {
  return declareMethod(method, tool, limits, tags).text;
}

/** `methodDeclaration`, and whether the brief form shortened any description in it. */
export function declareMethod(method: string, tool: DeclarableTool, limits: DeclarationLimits = DECLARATION_LIMITS, tags: readonly string[] = []): { text: string; shortened: boolean } {
  const brief = { on: limits.brief === true, shortened: false };
  // `new(…)` in a type would be a construct signature, not a method named `new`.
  const name = PROPERTY_KEY.test(method) && method !== "new" ? method : JSON.stringify(method);
  const input = takesNothing(tool.inputSchema) ? "" : `input${optionalInput(tool.inputSchema) ? "?" : ""}: ${schemaType(tool.inputSchema, limits, "", brief)}`;
  const output = tool.outputSchema === undefined ? "unknown" : schemaType(tool.outputSchema, limits, "", brief);
  const text = `${docComment(briefly(tool.description, brief), tags, "")}${name}(${input}): Promise<${output}>;`;
  return { text, shortened: brief.shortened };
}

/** A server's namespace: `declare const <namespace>: { … };` around its methods (each from `methodDeclaration`). */
export function namespaceDeclaration(namespace: string, methods: readonly string[], description?: string): string {
  const body = methods.map((m) => m.replace(/^(?=.)/gm, INDENT)).join("\n");
  return `${docComment(description, [], "")}declare const ${namespace}: {\n${body}${body === "" ? "" : "\n"}};`;
}
