// One execute run's consent and replay: which of its calls need the user's consent, how it is asked for (elicitation,
// with the run's wall clock stopped meanwhile, where the host declared it), and, elsewhere, the pause: the calls made
// so far kept in the session with their results, the run stopped, and the agent told how to resume with the user's
// consent. A resumed run (`approve`) is served the kept results in the order the program asks for them, so no call is
// made twice; the waiting call is then made, and the program goes on. A program that asks for something else on
// resume is stopped: nothing after the point where it diverged runs.
import { sha256Hex } from "../../lib/bytes.ts";
import { nonce128 } from "../../auth/signed.ts";
import { APPROVAL_WAIT_MS, allows, consentPreview, consentQuestion, notAllowed } from "../consent-question.ts";
import type { AskNow } from "../input-port.ts";
import type { ExposedTool } from "../../upstream/registry.ts";
import { PAUSE_MAX_BYTES, PAUSE_TTL_MS, pausedBytes, preview, type LoggedCall, type PausedRun } from "./approval.ts";
import { StopRun } from "./run-state.ts";

/** Where the session keeps paused programs (src/session/state.ts). */
export interface PausedRuns {
  get(id: string): Promise<PausedRun | undefined>;
  delete(id: string): Promise<void>;
  put(id: string, run: PausedRun): Promise<void>;
}

/** The SHA-256 of a program's text, hex: what a resume is checked against. */
export const programHash = (code: string): Promise<string> => sha256Hex(code);

/** Asks the user about one call (on the execute request's stream); true only for an explicit yes. */
async function ask(askNow: AskNow, path: string, argsJson: string, signal: AbortSignal): Promise<boolean> {
  return allows(await askNow(consentQuestion(path, argsJson), { signal, timeoutMs: APPROVAL_WAIT_MS }));
}

/** A run that paused for consent: its id (what resumes it), and the call that waits. */
export interface Pause {
  id: string;
  path: string;
  args: string;
}

/** The answer's words for a run that paused: what waits, what to ask, how to go on. */
export function pausedMessage(id: string, path: string, argsJson: string, made: number): string {
  return (
    `The program paused before ${path}(${consentPreview(argsJson)}): calls of this tool need the user's consent, and the proxy cannot ask the user here. ` +
    `Ask the user whether to allow this call. If they agree, call execute again with the same code and approve: "${id}" ` +
    `(within ${PAUSE_TTL_MS / 60_000} minutes); the ${made} call${made === 1 ? "" : "s"} already made will not be made again. If they do not, do nothing.`
  );
}

/** One run's consent: built per execute, from the caller's policies, the host, and a paused run being resumed. */
export class RunConsent {
  readonly #needs: (found: ExposedTool) => boolean;
  /** How the user is asked while the run goes on; undefined where they cannot be (the run pauses instead). */
  readonly #ask: AskNow | undefined;
  readonly #paused: PausedRuns;
  readonly #codeHash: string;
  readonly #resume: PausedRun | undefined;
  readonly #denied: boolean;
  readonly #answered: ((found: ExposedTool, allowed: boolean, askedAt: number) => Promise<void>) | undefined;
  #pausedAt: Pause | undefined;
  /** Calls of this run by their place in the order the program made them (what a pause keeps). */
  readonly #log = new Map<number, LoggedCall>();
  readonly #inFlight = new Set<Promise<unknown>>();
  #next = 0;
  /** Set once a call needs consent that cannot be asked for: the pause every later call ends the run with. */
  #pausing: Promise<StopRun> | undefined;

  constructor(options: {
    /** Whether a tool's calls need the user's consent (the caller's policies decide: src/views/find-tool.ts). */
    needs: (found: ExposedTool) => boolean;
    ask: AskNow | undefined;
    paused: PausedRuns;
    codeHash: string;
    resume?: PausedRun | undefined;
    /** The user refused the call `resume` waits at: it throws in the program instead of being made. */
    denied?: boolean;
    /** The user's answer about a call (asked now, or the consent a resumed run carries), for the audit trail. */
    answered?: ((found: ExposedTool, allowed: boolean, askedAt: number) => Promise<void>) | undefined;
  }) {
    this.#denied = options.denied === true;
    this.#answered = options.answered;
    this.#needs = options.needs;
    this.#ask = options.ask;
    this.#paused = options.paused;
    this.#codeHash = options.codeHash;
    this.#resume = options.resume;
  }

  /** Whether a tool's calls need consent (describe marks them). */
  needs(found: ExposedTool): boolean {
    return this.#needs(found);
  }

  /**
   * One call of the program: served from the resumed run's record, or made by `make` once allowed. `find` resolves
   * the tool the path names now (a lazy server loaded, an eager one waited for), and consent is decided on that very
   * tool, which `make` then calls. Every outcome is logged for a later pause. Once the run is pausing, no call is
   * made any more: each one ends the run with the same pause (so the answer always carries the resume id).
   */
  async call(
    path: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
    hold: <T>(during: Promise<T>) => Promise<T>,
    find: () => Promise<ExposedTool>,
    make: (found: ExposedTool) => Promise<{ value: unknown } | { error: string }>,
  ): Promise<unknown> {
    const index = this.#next++;
    const args = JSON.stringify(input);
    const kept = this.#resume?.calls[String(index)];
    const diverged = (was: { path: string; args: string }) =>
      new StopRun(
        "approval",
        `On resume the program's call ${index + 1} was ${path}(${preview(args, 200)}), where it was ${was.path}(${preview(was.args, 200)}) before; ` +
          "nothing from there on was run. Run the program again without approve.",
      );
    if (kept) {
      if (kept.path !== path || kept.args !== args) throw diverged(kept);
      this.#log.set(index, kept);
      if (kept.error !== undefined) throw new Error(kept.error);
      return kept.value === undefined ? null : JSON.parse(kept.value);
    }
    const pending = this.#resume?.pending;
    const allowed = pending !== undefined && pending.index === index;
    if (allowed && (pending.path !== path || pending.args !== args)) throw diverged(pending);
    if (allowed && this.#denied) {
      // The user said no to the call the run paused at: the program gets the refusal, as it would from a question,
      // and the trail records their answer (under the tool the path names, when it still names one).
      const refused = await find().catch(() => undefined);
      if (refused) await this.#answered?.(refused, false, Date.now());
      this.#log.set(index, { path, args, error: notAllowed(path) });
      throw new Error(notAllowed(path));
    }
    if (this.#pausing) throw await this.#pausing;
    // Finding the tool can take a while (a lazy load, a connect): it counts as in flight for a pause meanwhile.
    const finding = find();
    this.#inFlight.add(finding);
    let found: ExposedTool;
    try {
      found = await finding;
    } catch (err) {
      if (err instanceof StopRun) throw err;
      const message = err instanceof Error ? err.message : String(err);
      this.#log.set(index, { path, args, error: message });
      throw new Error(message);
    } finally {
      this.#inFlight.delete(finding);
    }
    if (this.#pausing) throw await this.#pausing;
    if (allowed) await this.#answered?.(found, true, Date.now());
    if (!allowed && this.needs(found)) {
      if (this.#ask) {
        const askedAt = Date.now();
        const yes = await hold(ask(this.#ask, path, args, signal));
        await this.#answered?.(found, yes, askedAt);
        if (!yes) throw new Error(notAllowed(path));
        if (this.#pausing) throw await this.#pausing;
      } else {
        throw await (this.#pausing = this.#pause(index, path, args, signal));
      }
    }
    // The run may have ended meanwhile (its deadline, a stop): then nothing more goes upstream.
    if (signal.aborted) throw new Error("The run has ended; this tool call was not made.");
    const work = make(found);
    this.#inFlight.add(work);
    let outcome: { value: unknown } | { error: string };
    try {
      outcome = await work;
    } finally {
      this.#inFlight.delete(work);
    }
    if ("error" in outcome) {
      this.#log.set(index, { path, args, error: outcome.error });
      throw new Error(outcome.error);
    }
    this.#log.set(index, { path, args, value: JSON.stringify(outcome.value) ?? "null" });
    return outcome.value;
  }

  /**
   * Keeps what the run did (after the calls in flight settle) and stops it, saying how to resume. A run that ended
   * meanwhile (its wall limit) keeps nothing: its answer carries no resume id.
   */
  async #pause(index: number, path: string, args: string, signal: AbortSignal): Promise<StopRun> {
    // Let every call already started settle (each logs its outcome first), and any that started meanwhile.
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    const run: PausedRun = { codeHash: this.#codeHash, calls: Object.fromEntries([...this.#log].map(([i, c]) => [String(i), c])), pending: { index, path, args }, at: Date.now() };
    if (pausedBytes(run) > PAUSE_MAX_BYTES) {
      return new StopRun(
        "approval",
        `${path} needs the user's consent, but the calls before it returned more than ${PAUSE_MAX_BYTES} bytes, too much to keep for a resume. Make the calls that need consent in a program of their own.`,
      );
    }
    if (signal.aborted) return new StopRun("approval", `The run ended while it paused before ${path}; nothing was kept. Run the program again.`);
    const id = `pr_${nonce128()}`;
    await this.#paused.put(id, run);
    this.#pausedAt = { id, path, args };
    return new StopRun("approval", pausedMessage(id, path, args, this.#log.size));
  }

  /** Where the run paused for consent, once it has (its record kept under `id`). */
  get paused(): Pause | undefined {
    return this.#pausedAt;
  }
}

/**
 * The paused run `id` names, checked: it exists, is fresh, and is the same program; else the words of the refusal.
 * Nothing is used up (a consent round asks again about the run it names).
 */
export async function waitingRun(paused: PausedRuns, id: string, codeHash: string): Promise<PausedRun | string> {
  const run = await paused.get(id);
  const expired = run !== undefined && Date.now() - run.at > PAUSE_TTL_MS;
  if (expired) await paused.delete(id);
  if (!run || expired) return `No program paused as "${preview(id, 60)}" waits in this session (it expired, was resumed already, or never was); run the program again.`;
  if (run.codeHash !== codeHash) return `"${preview(id, 60)}" paused a different program: resume it with the same code.`;
  return run;
}

/**
 * A paused run to resume, checked as `waitingRun` does; a good one is used up (a resume runs once), a wrong program
 * leaves it waiting. `via`: how the resume came, an `approve` id or a consent round's answer; a run whose user was
 * asked in a round resumes only with the answer, and an `approve` leaves it waiting for it.
 */
export async function resumable(paused: PausedRuns, id: string, codeHash: string, via: "approve" | "round"): Promise<PausedRun | string> {
  const run = await waitingRun(paused, id, codeHash);
  if (typeof run === "string") return run;
  if (run.askedInRound === true && via === "approve") {
    return `"${preview(id, 60)}" waits for the user's answer to the question they were asked about ${run.pending.path}; only that answer resumes it (the host sends it with the round's requestState), not approve.`;
  }
  await paused.delete(id);
  return run;
}

/** Marks a paused run as asked about in a consent round (src/views/code/approval.ts, `askedInRound`). */
export async function markAsked(paused: PausedRuns, id: string): Promise<void> {
  const run = await paused.get(id);
  if (run && run.askedInRound !== true) await paused.put(id, { ...run, askedInRound: true });
}
