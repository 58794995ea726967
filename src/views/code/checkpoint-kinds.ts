// Pure: the kinds of checkpoint a program module gets (found by src/views/code/checkpoints.ts in a Dynamic Worker of its
// own, applied by src/views/code/instrument.ts in the session). Apart from the finder so that the session's bundle, which
// needs these names, does not take the finder and its parser with them.

/**
 * What goes where, by kind (the session renders each with the run's names of the clock's functions):
 * - `tick` / `tick-yield`: a statement at the top of a block body (`T();`, or `T()&&await Y();` in an async body);
 * - `block-tick` / `block-tick-yield` … `block-end`: a loop body that is not a block, made one (`{T();` … `}`);
 * - `expr-tick` / `expr-tick-yield` … `end`: an arrow's expression body (`(T(),` … `)`);
 * - `resumed` … `end`, `suspend` … `end`: around an `await` and its operand (`R(await S(x))`): the clock stops while
 *   the program waits, and starts again when it goes on.
 */
export const CHECKPOINT_KINDS = [
  "tick",
  "tick-yield",
  "block-tick",
  "block-tick-yield",
  "block-end",
  "expr-tick",
  "expr-tick-yield",
  "end",
  "resumed",
  "suspend",
] as const;
export type CheckpointKind = (typeof CHECKPOINT_KINDS)[number];

/** One insertion: `kind` goes before the character at offset `at` (UTF-16 units of the module's source). */
export interface Checkpoint {
  at: number;
  kind: CheckpointKind;
}

export type CheckpointAnswer = { ok: true; checkpoints: Checkpoint[] } | { ok: false; reason: string };
