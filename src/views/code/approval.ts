// Which calls from a program need the user's consent (the team config's `approve` globs and `approve_destructive`),
// and what a paused program keeps for its resume: the calls it made, in the order it made them, with their results,
// so that a resumed run repeats none of them (the writes above all). Pure.
import * as z from "zod";
import { toolGlobMatcher } from "../../config/tool-globs.ts";
import type { ApprovalRule } from "../../config/validate.ts";
import type { ExposedTool } from "../../upstream/registry.ts";

/** A paused program's record lives this long in the session (the agent asks the user meanwhile). */
export const PAUSE_TTL_MS = 60 * 60 * 1000;
/** The most bytes of results a paused program may keep for its resume (past it, it cannot pause: it is told why). */
export const PAUSE_MAX_BYTES = 1024 * 1024;
/** The most paused programs a session keeps; the oldest goes first. */
export const MAX_PAUSED = 10;

/** Whether a call of this tool from a program needs the user's consent. */
export function needsApproval(rule: ApprovalRule | undefined, found: ExposedTool): boolean {
  if (!rule) return false;
  if (rule.destructive && found.tool.annotations?.destructiveHint === true) return true;
  const matches = toolGlobMatcher(rule.globs);
  return matches(found.tool.name) || matches(found.exposedName);
}

/** One call of a paused run: which, with what (JSON), and what it answered (the value as JSON, or the error's message). */
const LoggedCall = z.object({
  path: z.string(),
  args: z.string(),
  value: z.string().optional(),
  error: z.string().optional(),
});
export type LoggedCall = z.output<typeof LoggedCall>;

/** What a session keeps of a program paused for approval (src/session/state.ts stores it under `paused:<id>`). */
export const PausedRun = z.object({
  /** SHA-256 of the program's text: a resume must send the same program. */
  codeHash: z.string(),
  /** The calls made before the pause, by their place in the order the program made them. */
  calls: z.record(z.string().regex(/^\d+$/), LoggedCall),
  /** The call that waits for consent, and its place. */
  pending: z.object({ index: z.number().int().min(0), path: z.string(), args: z.string() }),
  at: z.number(),
  /**
   * The user was asked about the pending call in a 2026 consent round: only that round's answer resumes the run,
   * never an `approve` with its id (which the round's requestState carries readably).
   */
  askedInRound: z.boolean().optional(),
});
export type PausedRun = z.output<typeof PausedRun>;

/** Bytes a paused run's record takes (what PAUSE_MAX_BYTES bounds). */
export const pausedBytes = (run: PausedRun): number => new TextEncoder().encode(JSON.stringify(run)).length;

/** A value shown in a question or an answer: JSON, cut to `max` characters. */
export function preview(json: string, max = 500): string {
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}

/** Characters of one string value, and items of one array, shown in a consent question before they are shortened. */
const SHOWN_STRING = 120;
const SHOWN_ITEMS = 20;

/** Every key kept, long strings and arrays shortened (each saying how much was left out), so padding hides nothing. */
function shortened(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.length > SHOWN_STRING ? `${value.slice(0, SHOWN_STRING)}… (${value.length} characters)` : value;
  if (typeof value !== "object" || value === null) return value;
  if (depth > 8) return "…";
  if (Array.isArray(value)) {
    const shown = value.slice(0, SHOWN_ITEMS).map((v) => shortened(v, depth + 1));
    return value.length > SHOWN_ITEMS ? [...shown, `… and ${value.length - SHOWN_ITEMS} more items`] : shown;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortened(v, depth + 1)]));
}

/**
 * A call's arguments as a person is asked to allow them: whole while they fit `max` characters; else every key with
 * long values shortened; and if even that does not fit, cut, saying so (then the user cannot see all of it, and
 * should not allow it blind).
 */
export function consentPreview(argsJson: string, max = 1500): string {
  if (argsJson.length <= max) return argsJson;
  let short: string;
  try {
    short = JSON.stringify(shortened(JSON.parse(argsJson), 0));
  } catch {
    short = argsJson;
  }
  const note = ` (long values shortened; ${argsJson.length} characters in all)`;
  if (short.length <= max) return short + note;
  return `${short.slice(0, max - 1)}… (too long to show whole: ${argsJson.length} characters; only the start is shown)`;
}
