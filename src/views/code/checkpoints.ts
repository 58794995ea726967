// Pure: where a program module gets its checkpoints, found by parsing it with acorn. A checkpoint is a call to the
// run's clock (src/views/code/clock.ts) at the top of every loop body and every function body, and around
// every `await`: each loop turn and each call asks the clock, so a run that spins is stopped at its CPU limit even
// where the platform enforces none (local workerd runs every isolate on one thread: one endless loop would freeze
// every request of every team). In an async function the checkpoint also yields the thread when the program has
// had it for a while, so other requests are answered meanwhile.
//
// This file is not part of the Worker's bundle: scripts/build-checkpoints.ts bundles it with acorn into a static
// asset that a Dynamic Worker of its own runs (src/views/code/checkpoint-worker.ts), so the parser costs the Worker
// nothing. The session applies what it answers itself (src/views/code/instrument.ts): only the kinds of
// src/views/code/checkpoint-kinds.ts, at offsets it checks.
import { parse, type Node } from "acorn";
import type { Checkpoint, CheckpointAnswer, CheckpointKind } from "./checkpoint-kinds.ts";

export type { Checkpoint, CheckpointAnswer, CheckpointKind };

type AnyNode = Node & Record<string, unknown>;

const LOOPS = new Set(["WhileStatement", "DoWhileStatement", "ForStatement", "ForInStatement", "ForOfStatement"]);
const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

const isNode = (value: unknown): value is AnyNode =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string" && typeof (value as { start?: unknown }).start === "number";

/**
 * The checkpoints of one module, in the order they are to be inserted (by offset; at one offset, in the order the
 * walk met them: an outer body's opening before an inner one's, an inner closing before an outer one's). A module
 * acorn cannot parse gets none (`ok: false`): it is loaded as it is, and the platform reports its syntax error.
 */
export function findCheckpoints(source: string): CheckpointAnswer {
  let program: Node;
  try {
    program = parse(source, { ecmaVersion: "latest", sourceType: "module" });
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
  const found: Checkpoint[] = [];
  const add = (at: number, kind: CheckpointKind) => found.push({ at, kind });

  /**
   * A function's or a loop's body: a block gets its checkpoint as its first statement; anything else is wrapped,
   * opened before it and closed after it (`(tick(), expression)` for an arrow, `{tick(); statement}` for a loop).
   */
  const body = (node: AnyNode, inAsync: boolean, wrap: readonly [CheckpointKind, CheckpointKind, CheckpointKind]): void => {
    if (node.type === "BlockStatement") {
      add(node.start + 1, inAsync ? "tick-yield" : "tick");
      walkChildren(node, inAsync);
      return;
    }
    add(node.start, inAsync ? wrap[1] : wrap[0]);
    walk(node, inAsync);
    add(node.end, wrap[2]);
  };

  /** `inAsync`: whether the code at hand may `await` (the nearest function around it is async). */
  const walk = (node: AnyNode, inAsync: boolean): void => {
    if (FUNCTIONS.has(node.type)) {
      for (const param of node.params as AnyNode[]) walk(param, false);
      body(node.body as AnyNode, node.async === true, ["expr-tick", "expr-tick-yield", "end"]);
      return;
    }
    if (node.type === "StaticBlock" || node.type === "PropertyDefinition") {
      // Class static blocks and field initializers cannot await, whatever surrounds the class.
      walkChildren(node, false);
      return;
    }
    if (LOOPS.has(node.type)) {
      for (const [key, value] of Object.entries(node)) if (key !== "body") visit(value, inAsync);
      body(node.body as AnyNode, inAsync, ["block-tick", "block-tick-yield", "block-end"]);
      return;
    }
    if (node.type === "AwaitExpression") {
      const argument = node.argument as AnyNode;
      add(node.start, "resumed");
      add(argument.start, "suspend");
      walk(argument, inAsync);
      add(argument.end, "end");
      add(node.end, "end");
      return;
    }
    walkChildren(node, inAsync);
  };
  const visit = (value: unknown, inAsync: boolean): void => {
    if (Array.isArray(value)) for (const item of value) visit(item, inAsync);
    else if (isNode(value)) walk(value, inAsync);
  };
  const walkChildren = (node: AnyNode, inAsync: boolean): void => {
    for (const value of Object.values(node)) visit(value, inAsync);
  };

  // The module's top level cannot await (the program runs inside the wrapper's async function).
  walk(program as AnyNode, false);
  // A stable sort keeps the walk's order at equal offsets.
  found.sort((a, b) => a.at - b.at);
  return { ok: true, checkpoints: found };
}
