// Runs one code-mode program in a Dynamic Worker and reports how it went: the child is loaded through the Worker
// Loader binding with no bindings and no network (src/code/runner.ts writes its modules), its only way out is the
// bridge below (one method, `call`), and every limit is enforced here, on the host side, because the child runs the
// agent's code and cannot be trusted to stop, to count or to stay small (docs/code-mode.md 1.2 and 1.5).
import { RpcTarget } from "cloudflare:workers";
import {
  LogBudget,
  agentPosition,
  childWorkerCode,
  platformFailureCause,
  positionInStack,
  programAttempts,
  readChildReport,
  startupSyntaxError,
  type ChildReport,
  type ProgramModule,
  type ProgramPosition,
} from "./runner.ts";

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
  failure?: { cause: RunFailureCause; message: string; line?: number; column?: number };
  logs: string[];
  /** Lines of console output dropped past maxLogBytes. */
  logsDropped: number;
  calls: RunCall[];
  ms: number;
}

/** What the bridge answers the child: the tool's value as JSON text, or the message of the Error to throw. */
type BridgeAnswer = { ok: true; json: string } | { ok: false; message: string };

/** Longest message taken from the program or a tool (a program can throw a megabyte-long one). */
const MAX_MESSAGE_CHARS = 4000;

/** Longest method name passed on (code names are identifiers; anything longer is not a tool). */
const MAX_METHOD_CHARS = 256;

const clip = (text: string): string => (text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}… (cut)` : text);

/** An error's message only: a host stack must never reach the agent. */
const messageOf = (err: unknown): string => clip(err instanceof Error ? err.message : String(err));

const utf8 = new TextEncoder();

/** One run's state on the host: the gate, the calls, the logs. The bridge holds it in a private field. */
class RunState {
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
  #stop: ((outcome: Outcome) => void) | undefined;
  readonly stopped: Promise<Outcome>;
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

const callLimitMessage = (max: number): string =>
  `Tool call limit reached: a run may make at most ${max} tool call${max === 1 ? "" : "s"}. Make fewer calls per run (or split the work into several runs).`;

/**
 * The child's only way out. Any prototype method of an RpcTarget can be called from the sandbox, so this has one,
 * and its state is in a private field the child cannot name.
 */
class Bridge extends RpcTarget {
  readonly #run: RunState;

  constructor(run: RunState) {
    super();
    this.#run = run;
  }

  call(namespace: unknown, method: unknown, argsJson: unknown, lines: unknown, dropped: unknown): Promise<BridgeAnswer> {
    return this.#run.call(namespace, method, argsJson, lines, dropped);
  }
}

/** The runner's entrypoint as the host calls it. */
interface RunnerStub {
  run(bridge: Bridge, namespaces: string[], limits: { maxLogBytes: number; maxResultBytes: number; maxArgBytes: number }): Promise<unknown>;
}

/** How one load of one program module ended. */
type Attempt =
  | { kind: "report"; program: ProgramModule; report: ChildReport }
  | { kind: "syntax"; program: ProgramModule; message: string; position: ProgramPosition }
  | { kind: "failed"; message: string };

/** How the whole run ended, before the report is written. */
type Outcome = Attempt | { kind: "timeout" } | { kind: "aborted" } | { kind: "tool_calls" } | { kind: "stopped"; cause: RunFailureCause; message: string };

/** `Symbol.dispose` (workerd has it; the ES2023 lib this project compiles against does not name it). */
const DISPOSE = (Symbol as { dispose?: symbol }).dispose;

/** Releases an RPC stub, so that workerd does not hold the child for it (and the test pool shuts down cleanly). */
const dispose = (stub: unknown): void => {
  try {
    const release = DISPOSE && (typeof stub === "object" || typeof stub === "function") && stub !== null ? (stub as Record<symbol, unknown>)[DISPOSE] : undefined;
    if (typeof release === "function") release.call(stub);
  } catch {
    // Already gone: nothing to release.
  }
};

/**
 * Runs `code` in a fresh Dynamic Worker, with one variable per namespace whose methods go through `call`, within
 * `limits`; optionally cancelled by `signal`. Every failure of the program or the sandbox is in the report; it
 * throws only for a namespace that is not an identifier (the caller's mistake: src/catalog/code-names.ts makes them).
 */
export async function runProgram(
  loader: WorkerLoader,
  code: string,
  namespaces: readonly string[],
  call: ToolCall,
  limits: SandboxLimits,
  signal?: AbortSignal,
): Promise<RunReport> {
  const started = Date.now();
  const run = new RunState(namespaces, call, limits);
  const { attempts, reported } = programAttempts(code, namespaces);
  const stubs: unknown[] = [];
  if (signal?.aborted) {
    run.end();
    return report({ kind: "aborted" }, run, limits, started);
  }

  /** Loads one program module and runs it; the first RPC starts the child, and a startup failure is a syntax error. */
  const attempt = async (program: ProgramModule): Promise<Attempt> => {
    try {
      const worker = loader.load(childWorkerCode(program, limits.cpuMs));
      const entry = worker.getEntrypoint();
      stubs.push(entry, worker);
      if (run.ended) return { kind: "failed", message: "The run ended before the program started." };
      const answer = await (entry as unknown as RunnerStub).run(new Bridge(run), [...namespaces], {
        maxLogBytes: limits.maxLogBytes,
        maxResultBytes: limits.maxResultBytes,
        maxArgBytes: limits.maxArgBytes,
      });
      const report = readChildReport(answer);
      return report ? { kind: "report", program, report } : { kind: "failed", message: "The sandbox answered something that is not a report." };
    } catch (err) {
      const message = messageOf(err);
      const syntax = startupSyntaxError(message);
      if (syntax) return { kind: "syntax", program, message: syntax.message, position: agentPosition(program, syntax.line, syntax.column ?? 0) };
      return { kind: "failed", message };
    }
  };

  const work = (async (): Promise<Outcome> => {
    const tried: Attempt[] = [];
    for (const program of attempts) {
      if (run.ended) break;
      const a = await attempt(program);
      if (a.kind !== "syntax") return a;
      tried.push(a);
    }
    // Every form failed to parse: the error of the form the code reads as is the one that makes sense to the agent.
    return tried.find((a) => a.kind === "syntax" && a.program.form === reported) ?? tried[0] ?? { kind: "failed", message: "Nothing was run." };
  })();

  // The wall clock: it runs from the load to the answer, except while a call holds it (a person deciding), and
  // then for at most maxHeldMs in all: other calls of the program may go on meanwhile, and they are the program's time.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let left = Math.max(0, limits.wallMs);
  let since = Date.now();
  let holds = 0;
  let heldLeft = Math.max(0, limits.maxHeldMs ?? MAX_HELD_MS);
  let heldSince = 0;
  let heldTimer: ReturnType<typeof setTimeout> | undefined;
  let expire: (outcome: Outcome) => void = () => {};
  const deadline = new Promise<Outcome>((resolve) => (expire = resolve));
  const arm = () => {
    since = Date.now();
    timer = setTimeout(() => expire({ kind: "timeout" }), left);
  };
  arm();
  run.hold = async <T>(during: Promise<T>): Promise<T> => {
    if (holds++ === 0 && timer !== undefined && heldLeft > 0) {
      clearTimeout(timer);
      timer = undefined;
      left = Math.max(0, left - (Date.now() - since));
      heldSince = Date.now();
      // The clock starts again when the hold budget is spent, whether or not the question is answered by then.
      heldTimer = setTimeout(() => {
        heldTimer = undefined;
        heldLeft = 0;
        if (!run.ended) arm();
      }, heldLeft);
    }
    try {
      return await during;
    } finally {
      if (--holds === 0 && heldTimer !== undefined) {
        clearTimeout(heldTimer);
        heldTimer = undefined;
        heldLeft = Math.max(0, heldLeft - (Date.now() - heldSince));
        if (!run.ended) arm();
      }
    }
  };
  let onAbort: (() => void) | undefined;
  const racers: Array<Promise<Outcome>> = [work, run.overLimit.then((): Outcome => ({ kind: "tool_calls" })), run.stopped, deadline];
  if (signal) {
    racers.push(
      new Promise((resolve) => {
        onAbort = () => resolve({ kind: "aborted" });
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    );
  }

  let outcome: Outcome;
  try {
    outcome = await Promise.race(racers);
  } finally {
    run.end();
    if (timer !== undefined) clearTimeout(timer);
    if (heldTimer !== undefined) clearTimeout(heldTimer);
    if (signal && onAbort) signal.removeEventListener("abort", onAbort);
    // Released now and again once the last load settles: a load can still be under way when the deadline falls.
    for (const stub of stubs) dispose(stub);
    void work.then(() => stubs.forEach(dispose)).catch(() => {});
  }
  return report(outcome, run, limits, started);
}

function report(outcome: Outcome, run: RunState, limits: SandboxLimits, started: number): RunReport {
  if (outcome.kind === "report") run.addLogs(outcome.report.logs, outcome.report.logsDropped);
  // Past the call limit the run has failed, whatever the program did with the refusal.
  if (run.overLimitHit && outcome.kind !== "timeout" && outcome.kind !== "aborted" && outcome.kind !== "stopped") outcome = { kind: "tool_calls" };
  const now = Date.now();
  const base = { logs: [...run.logs.lines], logsDropped: run.logs.dropped, calls: run.calls(now), ms: now - started };
  const fail = (cause: RunFailureCause, message: string, position: ProgramPosition = {}): RunReport => ({
    ok: false,
    failure: { cause, message, ...position },
    ...base,
  });
  switch (outcome.kind) {
    case "timeout":
      return fail("timeout", `The program did not finish within the wall-time limit of ${limits.wallMs} ms and was stopped.`);
    case "aborted":
      return fail("aborted", "The run was cancelled before the program finished.");
    case "tool_calls":
      return fail("tool_calls", callLimitMessage(limits.maxCalls));
    case "stopped":
      return fail(outcome.cause, outcome.message);
    case "syntax":
      return fail("syntax", outcome.message, outcome.position);
    case "failed":
      switch (platformFailureCause(outcome.message)) {
        case "cpu":
          return fail("cpu", `The program used more than its CPU time limit of ${limits.cpuMs} ms and was stopped.`);
        case "hung":
          // It would have run into the wall limit: a timeout, found early.
          return fail(
            "timeout",
            "The program could never finish: it was waiting for something nothing would ever settle (a promise that no code resolves), and was stopped.",
          );
        case "sandbox":
          return fail("sandbox", `The sandbox failed: ${outcome.message}`);
      }
    case "report": {
      const r = outcome.report;
      if (!r.ok) {
        // "TypeError: x is not a function" says what went wrong; a plain Error's name says nothing.
        const message = r.cause === "error" && r.name !== "Error" ? clip(`${r.name}: ${r.message}`) : clip(r.message);
        return fail(r.cause, message, r.cause === "error" ? positionInStack(outcome.program, r.stack) : {});
      }
      // The child's own checks ran next to the agent's code; these are the ones that count.
      const bytes = utf8.encode(r.resultJson).length;
      if (bytes > limits.maxResultBytes) {
        return fail("result_size", `The program's return value is ${bytes} bytes of JSON, over the limit of ${limits.maxResultBytes} bytes.`);
      }
      try {
        JSON.parse(r.resultJson);
      } catch {
        return fail("result_type", "The program's return value is not JSON.");
      }
      return { ok: true, resultJson: r.resultJson, ...base };
    }
  }
}
