// Pure: what code mode loads into a sandbox, and how the sandbox's answers are read. The child Worker has three
// modules: `runner.js`, a constant below (a WorkerEntrypoint with one method, `run`), `prelude.js`, which the runner
// imports before the program (what it relies on, taken before the agent's code runs), and `program.js`, the agent's
// code wrapped so that its lines stay the agent's lines. Nothing here imports `cloudflare:`, so Node unit tests can
// check the modules, the worker code handed to the loader, and how stacks, startup errors and platform failures are
// read; src/code/sandbox.ts does the loading, the bridge and the limits.

import { UNCALLABLE_METHODS } from "../catalog/code-names.ts";

/** The child's compatibility date: the Worker's own (wrangler.toml's `compatibility_date`, pinned by a unit test). */
export const CHILD_COMPATIBILITY_DATE = "2026-11-01";
/**
 * The child's compatibility flags: Node compatibility turned off. From some date between 2026-08-01 and 2026-09-01
 * workerd turns `nodejs_compat` and `nodejs_compat_v2` on by default (seen with workerd 1.20261102.1), which gives the
 * child `process`, `Buffer`, `global` and `node:*` modules even with no flag at all; both have to be turned off
 * for `process` to be gone.
 */
export const CHILD_COMPATIBILITY_FLAGS: readonly string[] = ["no_nodejs_compat", "no_nodejs_compat_v2"];
/** The child's module names; stacks and startup errors name `program.js`, which is how lines are found. */
export const RUNNER_MODULE = "runner.js";
export const PROGRAM_MODULE = "program.js";
export const PRELUDE_MODULE = "prelude.js";


/**
 * The child's first module: ES modules run in the order they are imported, and the runner imports this one before
 * the program, whose module can run code of its own at its top level (a body that closes the wrapper's brace). So
 * what the runner relies on is taken here first, and `caches` is gone before any of the agent's code runs (on
 * Cloudflare, `caches.default` could carry data from one run, or team, to the next).
 */
export const PRELUDE_SOURCE = `export const stringify = JSON.stringify;
export const parse = JSON.parse;
export const encoder = new TextEncoder();
export const later = setTimeout;
export const consoleRef = console;

try {
  delete globalThis.caches;
} catch {}
if (typeof globalThis.caches !== "undefined") {
  try {
    Object.defineProperty(globalThis, "caches", { value: undefined, writable: false, configurable: false });
  } catch {}
}
`;

/**
 * The child's main module. It runs in the sandbox, so it is plain JavaScript, written to trust nothing the program
 * could have changed by the time it runs (JSON, TextEncoder and setTimeout are taken by the prelude, before the
 * program's module runs). `run(bridge, namespaces, limits)`:
 * - replaces console.log/info/warn/error/debug by a capture bounded to `limits.maxLogBytes` (UTF-8 bytes of the
 *   lines joined by "\n"; past it, lines are dropped and counted);
 * - gives the program one object per namespace, each property a method that sends
 *   `bridge.call(namespace, method, argsJson, logLines, logsDropped)` (the log lines captured since the last call
 *   travel with it, so the host has them even if the run ends by its deadline) and turns `{ ok: false, message }`
 *   into an Error thrown where the program awaited the call;
 * - defers each call by one macrotask and drops it if the program has finished by then, so that an unawaited call
 *   in the program's last synchronous stretch is never sent (the host refuses anything later anyway);
 * - runs once: the program can reach its own entrypoint through `exports` of "cloudflare:workers", and a second
 *   `run` (the program re-running itself, with its own console) is refused;
 * - refuses a call whose arguments are over `limits.maxArgBytes` of JSON (the host checks again);
 * - awaits the program, stringifies its value itself and answers
 *   `{ ok: true, resultJson, logs, logsDropped }` or `{ ok: false, cause, name, message, stack, logs, logsDropped }`.
 */
export const RUNNER_SOURCE = `import { WorkerEntrypoint } from "cloudflare:workers";
import { stringify, parse, encoder, later, consoleRef } from "./${PRELUDE_MODULE}";
import program from "./${PROGRAM_MODULE}";

const UNCALLABLE = new Set(${JSON.stringify(UNCALLABLE_METHODS)});

/** UTF-8 length; a string longer than the room left is over it whatever its characters. */
function fits(text, room) {
  return text.length <= room && encoder.encode(text).length <= room;
}

function show(value) {
  if (typeof value === "string") return value;
  try {
    if (value instanceof Error) return String(value.name) + ": " + String(value.message);
    const json = stringify(value);
    if (json !== undefined) return json;
  } catch {}
  try {
    return String(value);
  } catch {
    return "[value that cannot be printed]";
  }
}

class Capture {
  constructor(max) {
    this.room = max;
    this.kept = 0;
    this.full = false;
    this.lines = [];
    this.dropped = 0;
  }
  add(args) {
    const line = args.map(show).join(" ");
    const room = this.kept > 0 ? this.room - 1 : this.room;
    if (!this.full && fits(line, room)) {
      this.room = room - encoder.encode(line).length;
      this.kept++;
      this.lines.push(line);
      return;
    }
    this.full = true;
    this.dropped++;
  }
  take() {
    const out = { lines: this.lines, dropped: this.dropped };
    this.lines = [];
    this.dropped = 0;
    return out;
  }
}

function kindOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return "a " + typeof value;
}

function describe(error) {
  try {
    if (typeof error === "object" && error !== null && typeof error.message === "string") {
      return { name: String(error.name ?? "Error"), message: error.message, stack: typeof error.stack === "string" ? error.stack : "" };
    }
  } catch {}
  const shown = typeof error === "string" ? stringify(error) : show(error);
  return { name: "Error", message: "The program threw a value that is not an Error: " + shown, stack: "" };
}

function result(value, maxBytes) {
  if (value === undefined) return { ok: true, resultJson: "null" };
  const notJson = (why) => ({ ok: false, cause: "result_type", name: "TypeError", message: why, stack: "" });
  const hint = " Return a JSON value (object, array, string, number, boolean or null).";
  if (typeof value === "function" || typeof value === "symbol") return notJson("The program returned " + kindOf(value) + "." + hint);
  let json;
  try {
    json = stringify(value);
  } catch (error) {
    return notJson("The program's return value is not JSON: " + describe(error).message + "." + hint);
  }
  if (typeof json !== "string") return notJson("The program's return value is not JSON." + hint);
  if (!fits(json, maxBytes)) {
    const message =
      "The program's return value is " + encoder.encode(json).length + " bytes of JSON, over the limit of " + maxBytes +
      " bytes: return less (a summary, the first items, or only the fields needed).";
    return { ok: false, cause: "result_size", name: "RangeError", message, stack: "" };
  }
  return { ok: true, resultJson: json };
}

// The program can reach this entrypoint too (exports.default of "cloudflare:workers"): it runs once, for the host.
let entered = false;

export default class Runner extends WorkerEntrypoint {
  async run(bridge, namespaces, limits) {
    if (entered) throw new Error("This sandbox has run its program already.");
    entered = true;
    const capture = new Capture(limits.maxLogBytes);
    for (const level of ["log", "info", "warn", "error", "debug"]) consoleRef[level] = (...args) => capture.add(args);
    let finished = false;

    const method = (namespace, name) => {
      const path = namespace + "." + name;
      const fn = async (...args) => {
        if (args.length > 1) throw new TypeError(path + " takes one object argument; it was given " + args.length + ".");
        const input = args[0] === undefined ? {} : args[0];
        if (typeof input !== "object" || input === null || Array.isArray(input)) {
          throw new TypeError(path + " takes one object argument, not " + kindOf(input) + ".");
        }
        let json;
        try {
          json = stringify(input);
        } catch (error) {
          throw new TypeError(path + ": its argument is not JSON (" + describe(error).message + ").");
        }
        if (!fits(json, limits.maxArgBytes)) {
          throw new RangeError(
            path + "'s argument is over " + limits.maxArgBytes + " bytes of JSON, the most one call may send; it was not made. Send less per call (or split the work into several calls).",
          );
        }
        await new Promise((resolve) => later(resolve, 0));
        // The program has returned: nobody awaits this call, and it must not happen.
        if (finished) return new Promise(() => {});
        const logs = capture.take();
        const answer = await bridge.call(namespace, name, json, logs.lines, logs.dropped);
        if (answer.ok) return parse(answer.json);
        throw new Error(answer.message);
      };
      Object.defineProperty(fn, "name", { value: path });
      return fn;
    };

    const scope = {};
    for (const namespace of namespaces) {
      const methods = new Map();
      scope[namespace] = new Proxy(Object.create(null), {
        get(_target, key) {
          if (typeof key !== "string" || UNCALLABLE.has(key)) return undefined;
          let fn = methods.get(key);
          if (fn === undefined) methods.set(key, (fn = method(namespace, key)));
          return fn;
        },
      });
    }

    let answer;
    try {
      let value = await program(scope);
      if (typeof value === "function") value = await value();
      finished = true;
      answer = result(value, limits.maxResultBytes);
    } catch (error) {
      finished = true;
      answer = { ok: false, cause: "error", ...describe(error) };
    }
    const logs = capture.take();
    return { ...answer, logs: logs.lines, logsDropped: logs.dropped };
  }
}
`;

/** How the agent's code is wrapped: a function or an expression (`arrow`), or the body of one (`body`). */
export type ProgramForm = "arrow" | "body";

/** The program module for one form, and what maps its positions back to the agent's. */
export interface ProgramModule {
  form: ProgramForm;
  source: string;
  /** Characters the wrapper puts before the agent's text on line 1. */
  prefixLength: number;
  /** Lines of the agent's text; the module has one more (the wrapper's close). */
  lines: number;
}

/** A position in the agent's text (1-based), as far as it is known. */
export interface ProgramPosition {
  line?: number;
  column?: number;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FENCE_OPEN = /^\s*```[\w+-]*\s*$/;
const FENCE_CLOSE = /^\s*```\s*$/;

/**
 * The code without a surrounding markdown fence (```js … ```): the fence lines are blanked, not removed, so the
 * agent's line numbers still hold. Fences inside the code are left alone.
 */
export function unfence(code: string): string {
  const lines = code.split("\n");
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first >= 0 && FENCE_OPEN.test(lines[first]!)) {
    lines[first] = "";
    const last = lines.findLastIndex((l) => l.trim() !== "");
    if (last > first && FENCE_CLOSE.test(lines[last]!)) lines[last] = "";
  }
  return lines.join("\n");
}

/** The code with its leading blanks and comments skipped: what it starts with. */
function opening(code: string): string {
  let rest = code;
  for (;;) {
    const next = rest.replace(/^\s+/, "").replace(/^\/\/[^\n]*/, "").replace(/^\/\*[\s\S]*?\*\//, "");
    if (next === rest) return rest;
    rest = next;
  }
}

/** Whether the agent wrote a function (`async () => …`, `(…) => …`, `function …`) rather than a body. */
export function looksLikeFunction(code: string): boolean {
  return /^(async\b|\(|function\b)/.test(opening(code));
}

/**
 * The program module of one form. Arrow form: `export default async ({ns…}) => (` + code + `\n);` (the code is a
 * function, which the runner then calls, or an expression, whose value it awaits; a trailing `;` is dropped, as a
 * `;` cannot close a parenthesis). Body form: `export default ({ns…}) => async () => {` + code + `\n};`. Either way
 * the agent's first line shares the wrapper's line, so every line number is the agent's.
 */
export function programModule(code: string, namespaces: readonly string[], form: ProgramForm): ProgramModule {
  for (const ns of namespaces) {
    // A caller's mistake, not the agent's: the names come from src/catalog/code-names.ts.
    if (!IDENTIFIER.test(ns)) throw new TypeError(`Not a namespace identifier: ${JSON.stringify(ns)}`);
  }
  const text = unfence(code);
  const params = `{${namespaces.join(", ")}}`;
  const prefix = form === "arrow" ? `export default async (${params}) => (` : `export default (${params}) => async () => {`;
  const body = form === "arrow" ? text.replace(/[\s;]+$/, "") : text;
  const suffix = form === "arrow" ? "\n);\n" : "\n};\n";
  return { form, source: prefix + body + suffix, prefixLength: prefix.length, lines: text.split("\n").length };
}

/**
 * The program modules to try, in order, and the form whose syntax error is reported if every one fails to load.
 * A function is tried as one first. A body is tried as a body first, unless it has no `return`: then it is tried as
 * an expression first, so that `await github.list_issues({})` returns the list (a body of statements fails to load
 * as an expression, which costs one more load, about 15 ms). The syntax error reported is that of the form the code
 * reads as: a broken body's own error, not the expression wrapper's.
 */
export function programAttempts(code: string, namespaces: readonly string[]): { attempts: ProgramModule[]; reported: ProgramForm } {
  const arrow = programModule(code, namespaces, "arrow");
  const body = programModule(code, namespaces, "body");
  const text = unfence(code);
  if (looksLikeFunction(text)) return { attempts: [arrow, body], reported: "arrow" };
  if (/\breturn\b/.test(text)) return { attempts: [body, arrow], reported: "body" };
  return { attempts: [arrow, body], reported: "body" };
}

/** What the loader is given: the three modules, no bindings, no network, Node compatibility off (so no `process`). */
export interface ChildWorkerCode {
  compatibilityDate: string;
  compatibilityFlags: string[];
  mainModule: string;
  modules: Record<string, string>;
  globalOutbound: null;
  limits?: { cpuMs: number };
}

/** The worker code for one program module. `cpuMs` is enforced on the deployed platform only (docs/code-mode.md 1.2). */
export function childWorkerCode(program: ProgramModule, cpuMs: number): ChildWorkerCode {
  return {
    compatibilityDate: CHILD_COMPATIBILITY_DATE,
    compatibilityFlags: [...CHILD_COMPATIBILITY_FLAGS],
    mainModule: RUNNER_MODULE,
    modules: { [RUNNER_MODULE]: RUNNER_SOURCE, [PRELUDE_MODULE]: PRELUDE_SOURCE, [PROGRAM_MODULE]: program.source },
    // No `env`: the child has no bindings. `null` blocks fetch() and connect() (docs/code-mode.md 1.2).
    globalOutbound: null,
    ...(cpuMs > 0 && Number.isFinite(cpuMs) ? { limits: { cpuMs: Math.ceil(cpuMs) } } : {}),
  };
}

/**
 * A module position (`program.js` line and column) as a position in the agent's text: the wrapper's prefix taken
 * off line 1's columns, and a position in the wrapper's closing line (an unclosed brace, say) moved to the end of
 * the agent's last line, without a column.
 */
export function agentPosition(program: Pick<ProgramModule, "prefixLength" | "lines">, line: number, column: number): ProgramPosition {
  if (!Number.isInteger(line) || line < 1) return {};
  if (line > program.lines) return { line: program.lines };
  const col = line === 1 ? column - program.prefixLength : column;
  return Number.isInteger(col) && col >= 1 ? { line, column: col } : { line };
}

const FRAME = new RegExp(`\\b${PROGRAM_MODULE.replace(".", "\\.")}:(\\d+):(\\d+)`);

/** The agent's position of the first `program.js:L:C` frame in a stack (none when the program is not on it). */
export function positionInStack(program: Pick<ProgramModule, "prefixLength" | "lines">, stack: string): ProgramPosition {
  const m = FRAME.exec(stack);
  return m ? agentPosition(program, Number(m[1]), Number(m[2])) : {};
}

/** A syntax error of the program, read from the loader's startup failure. */
export interface StartupSyntaxError {
  message: string;
  line: number;
  column?: number;
}

/**
 * The loader's report that the child could not start because `program.js` does not parse, as its message and
 * module position (column 1-based); undefined for any other failure. Seen with workerd 1.20261102.1:
 * `Failed to start Worker: Uncaught SyntaxError: Unexpected token ';' at program.js:2:12`, whose column is
 * 0-based (the `;` was the 13th character), and, for an error at the end of the text,
 * `Failed to start Worker:\nUncaught SyntaxError: Unexpected token ')'\n  at program.js:3`, without a column.
 */
export function startupSyntaxError(message: string): StartupSyntaxError | undefined {
  const m = /Uncaught SyntaxError: ([\s\S]*?)\s+at (?:\S*\/)?program\.js:(\d+)(?::(\d+))?/.exec(message);
  if (!m) return undefined;
  return { message: `SyntaxError: ${m[1]!.trim()}`, line: Number(m[2]), ...(m[3] === undefined ? {} : { column: Number(m[3]) + 1 }) };
}

/**
 * What a failure of the loader or of the RPC into the child means: the platform's CPU limit ("Worker exceeded CPU
 * time limit."); workerd's hang detection, when the program awaits something nothing can settle any more and the
 * child has no timer, I/O or tool call left ("The Workers runtime canceled this request because it detected that
 * your Worker's code had hung and would never generate a response."); anything else is the sandbox's own failure.
 */
export function platformFailureCause(message: string): "cpu" | "hung" | "sandbox" {
  if (/exceeded\s+(the\s+)?CPU|CPU\s+time\s+limit|CPU\s+limit/i.test(message)) return "cpu";
  if (/code had hung|would never generate a response/i.test(message)) return "hung";
  return "sandbox";
}

/** What the runner answers (checked field by field: the child runs the agent's code and is trusted for nothing). */
export type ChildReport =
  | { ok: true; resultJson: string; logs: string[]; logsDropped: number }
  | { ok: false; cause: "error" | "result_type" | "result_size"; name: string; message: string; stack: string; logs: string[]; logsDropped: number };

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** The runner's answer, if it has the runner's shape. */
export function readChildReport(value: unknown): ChildReport | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (!isStringArray(v.logs) || !isCount(v.logsDropped)) return undefined;
  if (v.ok === true) {
    return typeof v.resultJson === "string" ? { ok: true, resultJson: v.resultJson, logs: v.logs, logsDropped: v.logsDropped } : undefined;
  }
  if (v.ok !== false || (v.cause !== "error" && v.cause !== "result_type" && v.cause !== "result_size")) return undefined;
  if (typeof v.name !== "string" || typeof v.message !== "string" || typeof v.stack !== "string") return undefined;
  return { ok: false, cause: v.cause, name: v.name, message: v.message, stack: v.stack, logs: v.logs, logsDropped: v.logsDropped };
}

/**
 * Console lines kept within a byte budget: the UTF-8 bytes of the kept lines joined by "\n" stay within `max`;
 * from the first line that does not fit, every line is dropped and counted (so what is kept is a prefix of the
 * output). The host keeps its own budget over what the child sends, as the child could send anything.
 */
export class LogBudget {
  readonly lines: string[] = [];
  dropped = 0;
  #room: number;
  #full = false;
  static readonly #encoder = new TextEncoder();

  constructor(max: number) {
    this.#room = Math.max(0, max);
  }

  add(line: string): void {
    const room = this.lines.length > 0 ? this.#room - 1 : this.#room;
    if (!this.#full && line.length <= room) {
      const bytes = LogBudget.#encoder.encode(line).length;
      if (bytes <= room) {
        this.#room = room - bytes;
        this.lines.push(line);
        return;
      }
    }
    this.#full = true;
    this.dropped++;
  }

  /** Lines dropped before they reached this budget (the child's own count). */
  addDropped(count: number): void {
    if (count > 0) {
      this.#full = true;
      this.dropped += count;
    }
  }
}
