// A tool call's arguments checked against the tool's inputSchema before anything goes upstream (`argumentRefusal`,
// asked by callTool for every call of every view and era): a mismatch is answered as `invalid_arguments`, naming each
// wrong or missing field and the shape expected, and the upstream never sees the call. The validator is
// `@cfworker/json-schema` (no code generation, so it runs in workerd), built once per schema object: a tool's
// definition is one object for as long as its catalog stands. A schema that is no JSON Schema (src/catalog/
// schema-soundness.ts), or one the validator cannot apply, is not checked: its calls go through as they did, and the
// reason is logged once per schema (never an argument).
import { Validator } from "@cfworker/json-schema";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { argumentFaults } from "../catalog/argument-faults.ts";
import { schemaDialect, schemaFaults } from "../catalog/schema-soundness.ts";
import { log } from "../lib/log.ts";
import type { ExposedTool } from "../upstream/registry.ts";
import { toolError } from "./tool-errors.ts";

/** A schema's checker, or why its calls go unchecked. */
type Checker = { validator: Validator } | { unchecked: string };

const checkers = new WeakMap<object, Checker>();

/** The checker of a tool's schema, built (and an unchecked schema logged) the first time the schema is met. */
function checkerOf(team: string, found: ExposedTool): Checker {
  const schema = found.tool.inputSchema as Record<string, unknown>;
  const known = checkers.get(schema);
  if (known) return known;
  const faults = schemaFaults(schema);
  const dialect = schemaDialect(schema);
  const checker: Checker =
    faults.length > 0 || dialect === undefined
      ? unchecked(team, found, `not a valid JSON Schema: ${faults.join("; ")}`)
      : { validator: new Validator(schema as never, dialect, false) };
  checkers.set(schema, checker);
  return checker;
}

/** Marks a schema unchecked from now on, and says so once. */
function unchecked(team: string, found: ExposedTool, reason: string): Checker {
  log({ event: "schema_unchecked", team, upstream: found.upstream, tool: found.tool.name, reason });
  const checker = { unchecked: reason };
  checkers.set(found.tool.inputSchema, checker);
  return checker;
}

/**
 * The `invalid_arguments` answer for a call of `found` whose `input` its schema refuses (`name`: the tool as the host
 * called it), or undefined when the call may go.
 */
export function argumentRefusal(team: string, found: ExposedTool, input: Record<string, unknown>, name: string): CallToolResult | undefined {
  const checker = checkerOf(team, found);
  if ("unchecked" in checker) return undefined;
  let outcome: ReturnType<Validator["validate"]>;
  try {
    outcome = checker.validator.validate(input);
  } catch (err) {
    // A reference the validator cannot follow, a keyword it cannot apply: the schema is the fault, not the call. Its
    // message is not logged: what it quotes is not known to be the schema's alone.
    unchecked(team, found, `the validator could not apply it (${err instanceof Error ? err.name : "a throw"}: a $ref it cannot follow or a keyword it cannot apply)`);
    return undefined;
  }
  if (outcome.valid) return undefined;
  const faults = argumentFaults(found.tool.inputSchema, input, outcome.errors);
  const said = faults.length > 0 ? faults.join("; ") : "they do not match its inputSchema";
  return toolError("invalid_arguments", `Invalid arguments for ${name} (not sent to the server): ${said}.`, found.upstream);
}
