// One code-mode run's state on the host side, and its contract with the caller: the limits, the ToolCall that makes
// a program's calls, the causes a run can fail with, its report; the state (the call gate and count, the logs)
// and the bridge, the child's only way out (one method, `call`), which holds it in a private field the child cannot
// name. src/views/code/sandbox.ts loads the child, keeps the wall clock and writes the report.
import { RpcTarget } from "cloudflare:workers";
import { LogBudget } from "./runner.ts";

export interface SandboxLimits {
  /** Host-side deadline for the whole run (load included). */
  wallMs: number;
  /** Passed as limits.cpuMs to the loader (enforced on the deployed platform only). */
  cpuMs: number;
  /** Tool calls per run; the (maxCalls+1)th is refused. */
  maxCalls: number;
  /** Console output kept (UTF-8 bytes of the joined lines); the rest dropped and counted. */
  maxLogBytes: number;
  /** Bytes of the JSON text of the program's return value. */
  maxResultBytes: number;
  /** Bytes of the JSON text of one tool call's arguments (the child checks first; the host's check counts). */
  maxArgBytes: number;
  /** The most time the wall clock stands still in one run while calls `hold` it (default MAX_HELD_MS). */
  maxHeldMs?: number;
}

/** A run's wall clock stands still at most this long in all while the user is asked (then it runs again). */
export const MAX_HELD_MS = 10 * 60 * 1000;

/**
 * One tool call made by the program: resolves to the value the program gets back, or rejects with an Error whose
 * message the program sees (as a thrown Error); a `StopRun` ends the whole run instead. `hold` stops the wall clock
 * while what it is given is pending (a person deciding whether to allow the call is not the program's time).
 */
export type ToolCall = (
  namespace: string,
  method: string,
  input: Record<string, unknown>,
  signal: AbortSignal,
  hold: <T>(during: Promise<T>) => Promise<T>,
) => Promise<unknown>;

export type RunFailureCause = "syntax" | "error" | "timeout" | "cpu" | "tool_calls" | "result_size" | "result_type" | "aborted" | "sandbox" | "approval";

/** Thrown by a ToolCall to end the run at once with this cause, whatever the program would do with an Error. */
export class StopRun extends Error {
  readonly stopCause: RunFailureCause;
  constructor(cause: RunFailureCause, message: string) {
    super(message);
    this.stopCause = cause;
  }
}

/** path = `${namespace}.${method}` */
export interface RunCall {
  path: string;
  ms: number;
  ok: boolean;
}

export interface RunReport {
  ok: boolean;
  /** The program's return value as JSON text (ok only); "null" for undefined. */
  resultJson?: string;
  /** `thrown`: the name of the Error the program threw when it is not a plain `Error` (it also heads the message). */
  failure?: { cause: RunFailureCause; message: string; line?: number; column?: number; thrown?: string };
  logs: string[];
  /** Lines of console output dropped past maxLogBytes. */
  logsDropped: number;
  calls: RunCall[];
  ms: number;
}

/** What the bridge answers the child: the tool's value as JSON text, or the message of the Error to throw. */
type BridgeAnswer = { ok: true; json: string } | { ok: false; message: string };

/** Longest message taken from the program or a tool (a program can throw a megabyte-long one). */
export const MAX_MESSAGE_CHARS = 4000;

/** Longest method name passed on (code names are identifiers; anything longer is not a tool). */
const MAX_METHOD_CHARS = 256;

export const clip = (text: string): string => (text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}… (cut)` : text);

/** An error's message only: a host stack must never reach the agent. */
export const messageOf = (err: unknown): string => clip(err instanceof Error ? err.message : String(err));

export const utf8 = new TextEncoder();

/** A ToolCall's StopRun: the run ends at once with its cause. */
export interface StopOutcome {
  kind: "stopped";
  cause: RunFailureCause;
  message: string;
}

/** One run's state on the host: the gate, the calls, the logs. The bridge holds it in a private field. */
export class RunState {
  readonly logs: LogBudget;
  readonly #calls: Array<{ path: string; started: number; ms?: number; ok: boolean }> = [];
  readonly #namespaces: ReadonlySet<string>;
  readonly #controller = new AbortController();
  readonly #tool: ToolCall;
  readonly #maxCalls: number;
  readonly #maxArgBytes: number;
  #count = 0;
  #ended = false;
  /** Called when the program asks for one call too many: that ends the run at once, caught or not. */
  #overLimit: (() => void) | undefined;
  readonly overLimit: Promise<void>;
  /** Called when a tool call stops the run (`StopRun`): it ends at once, with that cause. */
  #stop: ((outcome: StopOutcome) => void) | undefined;
  readonly stopped: Promise<StopOutcome>;
  /** Stops the wall clock while a promise is pending (set by runProgram, which owns the clock). */
  hold: <T>(during: Promise<T>) => Promise<T> = (during) => during;

  constructor(namespaces: readonly string[], tool: ToolCall, limits: Pick<SandboxLimits, "maxCalls" | "maxLogBytes" | "maxArgBytes">) {
    this.#namespaces = new Set(namespaces);
    this.#tool = tool;
    this.#maxCalls = limits.maxCalls;
    this.#maxArgBytes = limits.maxArgBytes;
    this.logs = new LogBudget(limits.maxLogBytes);
    this.overLimit = new Promise((resolve) => (this.#overLimit = resolve));
    this.stopped = new Promise((resolve) => (this.#stop = resolve));
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Whether the program asked for more calls than allowed. */
  get overLimitHit(): boolean {
    return this.#count > this.#maxCalls;
  }

  /** Closes the gate (no call reaches the ToolCall from now on) and aborts the calls in flight. */
  end(): void {
    this.#ended = true;
    this.#controller.abort(new Error("The code-mode run has ended."));
  }

  addLogs(lines: unknown, dropped: unknown): void {
    if (Array.isArray(lines)) for (const line of lines) if (typeof line === "string") this.logs.add(line);
    if (typeof dropped === "number" && Number.isInteger(dropped)) this.logs.addDropped(dropped);
  }

  async call(namespace: unknown, method: unknown, argsJson: unknown, lines: unknown, dropped: unknown): Promise<BridgeAnswer> {
    // A child keeps running after the host gives up on it (docs/code-mode.md 1.2): nothing it asks later happens.
    if (this.#ended) return { ok: false, message: "The run has ended; this tool call was not made." };
    this.addLogs(lines, dropped);
    if (typeof namespace !== "string" || !this.#namespaces.has(namespace) || typeof method !== "string" || method === "" || method.length > MAX_METHOD_CHARS) {
      return { ok: false, message: "Not a tool of this run." };
    }
    const path = `${namespace}.${method}`;
    // Checked before it is parsed: a program could send a huge text several times at once.
    const bytes = typeof argsJson === "string" ? utf8Length(argsJson, this.#maxArgBytes) : 0;
    if (bytes > this.#maxArgBytes) return { ok: false, message: argsLimitMessage(path, this.#maxArgBytes) };
    let input: unknown;
    try {
      input = typeof argsJson === "string" ? JSON.parse(argsJson) : undefined;
    } catch {
      input = undefined;
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { ok: false, message: `${path} takes one object argument.` };
    }
    this.#count++;
    if (this.#count > this.#maxCalls) {
      this.#overLimit?.();
      return { ok: false, message: callLimitMessage(this.#maxCalls) };
    }
    const entry: { path: string; started: number; ms?: number; ok: boolean } = { path, started: Date.now(), ok: false };
    this.#calls.push(entry);
    let value: unknown;
    try {
      value = await this.#tool(namespace, method, input as Record<string, unknown>, this.#controller.signal, this.hold);
    } catch (err) {
      if (err instanceof StopRun) this.#stop?.({ kind: "stopped", cause: err.stopCause, message: messageOf(err) });
      return { ok: false, message: messageOf(err) };
    } finally {
      entry.ms = Date.now() - entry.started;
    }
    try {
      const json = JSON.stringify(value) ?? "null";
      entry.ok = true;
      return { ok: true, json };
    } catch (err) {
      return { ok: false, message: `${path} answered a value that is not JSON (${messageOf(err)}).` };
    }
  }

  /** The calls so far; one still in flight counts until now, as failed. */
  calls(now: number): RunCall[] {
    return this.#calls.map((c) => ({ path: c.path, ms: c.ms ?? now - c.started, ok: c.ms === undefined ? false : c.ok }));
  }
}

/** UTF-8 bytes of `text`, or a number over `max` as soon as it is known to be over it (no copy of a huge text). */
const utf8Length = (text: string, max: number): number => (text.length > max ? text.length : utf8.encode(text).length);

const argsLimitMessage = (path: string, max: number): string =>
  `${path}'s argument is over ${max} bytes of JSON, the most one call may send; it was not made. Send less per call (or split the work into several calls).`;

export const cpuLimitMessage = (cpuMs: number): string =>
  `The program used more than its CPU time limit of ${cpuMs} ms and was stopped (an endless loop, or more work than one run may do: split it into several runs).`;

export const callLimitMessage = (max: number): string =>
  `Tool call limit reached: a run may make at most ${max} tool call${max === 1 ? "" : "s"}. Make fewer calls per run (or split the work into several runs).`;

/**
 * The child's only way out. Any prototype method of an RpcTarget can be called from the sandbox, so this has one,
 * and its state is in a private field the child cannot name.
 */
export class Bridge extends RpcTarget {
  readonly #run: RunState;

  constructor(run: RunState) {
    super();
    this.#run = run;
  }

  call(namespace: unknown, method: unknown, argsJson: unknown, lines: unknown, dropped: unknown): Promise<BridgeAnswer> {
    return this.#run.call(namespace, method, argsJson, lines, dropped);
  }
}

