// Runs one code-mode program in a Dynamic Worker and reports how it went: the child is loaded through the Worker
// Loader binding with no bindings and no network (src/views/code/child-modules.ts has its modules, src/views/code/runner.ts
// wraps the program, src/views/code/instrument.ts writes its checkpoints in), its only way out is the bridge
// (src/views/code/run-state.ts: one method, `call`), and every limit is enforced on the host side, because the child runs
// the agent's code and cannot be trusted to stop, to count or to stay small (docs/code-mode.md 1.2 and 1.5); the
// CPU limit is the platform's, and the run's clock keeps it where the platform does not.
import {
  agentPosition,
  platformFailureCause,
  positionInStack,
  programAttempts,
  readChildReport,
  startupSyntaxError,
  type ChildReport,
  type ProgramModule,
  type ProgramPosition,
} from "./runner.ts";
import { PRELUDE_MODULE, childWorkerCode } from "./child-modules.ts";
import { clockNames } from "./clock.ts";
import { Bridge, MAX_HELD_MS, RunState, callLimitMessage, clip, cpuLimitMessage, messageOf, utf8, type RunFailureCause, type RunReport, type SandboxLimits, type StopOutcome, type ToolCall } from "./run-state.ts";
import { applyCheckpoints, type CheckpointFinder } from "./instrument.ts";
import { WallClock } from "./wall-clock.ts";

/** The runner's entrypoint as the host calls it. */
interface RunnerStub {
  run(bridge: Bridge, namespaces: string[], limits: { maxLogBytes: number; maxResultBytes: number; maxArgBytes: number }): Promise<unknown>;
}

/** How one load of one program module ended. */
type Attempt =
  | { kind: "report"; program: ProgramModule; report: ChildReport }
  | { kind: "syntax"; program: ProgramModule; message: string; position: ProgramPosition }
  /** The sandbox or the platform failed (`cause` read from the platform's words where it came: runner.ts). */
  | { kind: "failed"; cause: "cpu" | "hung" | "sandbox"; message: string };

/** How the whole run ended, before the report is written. */
type Outcome = Attempt | { kind: "timeout" } | { kind: "aborted" } | { kind: "tool_calls" } | StopOutcome;

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

/** Where programs run: the Worker Loader, and the finder of their checkpoints (without one, none are written in). */
export interface Sandbox {
  loader: WorkerLoader;
  checkpoints?: CheckpointFinder;
}

/**
 * The program module with the run's clock called at its checkpoints (src/views/code/instrument.ts), or as it is when the
 * finder cannot parse it (the platform then reports its syntax error) or gave nothing usable.
 */
async function withCheckpoints(program: ProgramModule, finder: CheckpointFinder | undefined): Promise<ProgramModule> {
  if (!finder) return program;
  const placed = applyCheckpoints(program.source, await finder(program.source), clockNames(), PRELUDE_MODULE);
  return placed ? { ...program, source: placed.source, shifts: placed.shifts } : program;
}

/** Loads a program module into a fresh child and runs it; a startup failure is a syntax error, other failures classified as they arrive. */
async function attempt(sandbox: Sandbox, written: ProgramModule, run: RunState, namespaces: readonly string[], limits: SandboxLimits, stubs: unknown[]): Promise<Attempt> {
  const program = await withCheckpoints(written, sandbox.checkpoints);
  try {
    const worker = sandbox.loader.load(childWorkerCode(program.source, limits.cpuMs));
    const entry = worker.getEntrypoint();
    stubs.push(entry, worker);
    if (run.ended) return { kind: "failed", cause: "sandbox", message: "The run ended before the program started." };
    // The first RPC starts the child.
    const answer = await (entry as unknown as RunnerStub).run(new Bridge(run), [...namespaces], {
      maxLogBytes: limits.maxLogBytes,
      maxResultBytes: limits.maxResultBytes,
      maxArgBytes: limits.maxArgBytes,
    });
    const report = readChildReport(answer);
    return report ? { kind: "report", program, report } : { kind: "failed", cause: "sandbox", message: "The sandbox answered something that is not a report." };
  } catch (err) {
    // The platform's failures come as text only: read once, here, and carried on as their cause.
    const message = messageOf(err);
    const syntax = startupSyntaxError(message);
    if (syntax) return { kind: "syntax", program, message: syntax.message, position: agentPosition(program, syntax.line, syntax.column ?? 0) };
    return { kind: "failed", cause: platformFailureCause(message), message };
  }
}

/** Tries each program module in turn while it fails to parse; every form failing, the error of the form the code reads as. */
async function attempts(
  sandbox: Sandbox,
  { attempts: modules, reported }: ReturnType<typeof programAttempts>,
  run: RunState,
  namespaces: readonly string[],
  limits: SandboxLimits,
  stubs: unknown[],
): Promise<Outcome> {
  const tried: Attempt[] = [];
  for (const program of modules) {
    if (run.ended) break;
    const a = await attempt(sandbox, program, run, namespaces, limits, stubs);
    if (a.kind !== "syntax") return a;
    tried.push(a);
  }
  // The error of the form the code reads as is the one that makes sense to the agent.
  return tried.find((a) => a.kind === "syntax" && a.program.form === reported) ?? tried[0] ?? { kind: "failed", cause: "sandbox", message: "Nothing was run." };
}

/**
 * Runs `code` in a fresh Dynamic Worker, with one variable per namespace whose methods go through `call`, within
 * `limits`; optionally cancelled by `signal`. Every failure of the program or the sandbox is in the report; it
 * throws only for a namespace that is not an identifier (the caller's mistake: src/catalog/code-names.ts makes them).
 */
export async function runProgram(
  sandbox: Sandbox,
  code: string,
  namespaces: readonly string[],
  call: ToolCall,
  limits: SandboxLimits,
  signal?: AbortSignal,
): Promise<RunReport> {
  const started = Date.now();
  const run = new RunState(namespaces, call, limits);
  // Written first: a namespace that is no identifier throws before anything is loaded.
  const modules = programAttempts(code, namespaces);
  if (signal?.aborted) {
    run.end();
    return report({ kind: "aborted" }, run, limits, started);
  }
  const stubs: unknown[] = [];
  const work = attempts(sandbox, modules, run, namespaces, limits, stubs);
  const clock = new WallClock(limits.wallMs, limits.maxHeldMs ?? MAX_HELD_MS);
  run.hold = (during) => clock.hold(during);
  let onAbort: (() => void) | undefined;
  const racers: Array<Promise<Outcome>> = [work, run.overLimit.then((): Outcome => ({ kind: "tool_calls" })), run.stopped, clock.expired.then((): Outcome => ({ kind: "timeout" }))];
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
    clock.stop();
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
  const fail = (cause: RunFailureCause, message: string, position: ProgramPosition & { thrown?: string } = {}): RunReport => ({
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
      switch (outcome.cause) {
        case "cpu":
          return fail("cpu", cpuLimitMessage(limits.cpuMs));
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
      if (!r.ok && r.cause === "cpu") return fail("cpu", cpuLimitMessage(limits.cpuMs));
      if (!r.ok) {
        if (r.cause !== "error") return fail(r.cause, clip(r.message));
        // "TypeError: x is not a function" says what went wrong (and the name goes on as data); a plain Error's name says nothing.
        const named = r.name !== "Error";
        const message = named ? clip(`${r.name}: ${r.message}`) : clip(r.message);
        return fail(r.cause, message, { ...positionInStack(outcome.program, r.stack), ...(named ? { thrown: clip(r.name) } : {}) });
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
