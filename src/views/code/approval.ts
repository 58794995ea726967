// What a paused program keeps for its resume: the calls it made, in the order it made them, with their results,
// so that a resumed run repeats none of them (the writes above all). Pure.
import * as z from "zod";

/** A paused program's record lives this long in the session (the agent asks the user meanwhile). */
export const PAUSE_TTL_MS = 60 * 60 * 1000;
/** The most bytes of results a paused program may keep for its resume (past it, it cannot pause: it is told why). */
export const PAUSE_MAX_BYTES = 1024 * 1024;
/** The most paused programs a session keeps; the oldest goes first. */
export const MAX_PAUSED = 10;

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
