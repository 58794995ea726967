// Pure: what the sandbox's child Worker is made of. Three modules: `runner.js`, a constant below (a WorkerEntrypoint
// with one method, `run`), `prelude.js`, which the runner imports before the program (what it relies on, taken before
// the agent's code runs, and the run's clock: src/views/code/clock.ts), and `program.js`, the agent's code as
// src/views/code/runner.ts wraps it; and the worker code the loader is given for them. Nothing here imports `cloudflare:`,
// so Node unit tests check the modules and the worker code.
import { UNCALLABLE_METHODS } from "../../catalog/code-names.ts";
import { clockSource } from "./clock.ts";

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
 * Cloudflare, `caches.default` could carry data from one run, or team, to the next). It also holds the run's clock
 * (src/views/code/clock.ts), with the run's CPU limit written in, which the program's checkpoints call.
 */
export function preludeSource(cpuMs: number): string {
  return `export const stringify = JSON.stringify;
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

${clockSource(cpuMs)}`;
}

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
 *   `{ ok: true, resultJson, logs, logsDropped }` or `{ ok: false, cause, name, message, stack, logs, logsDropped }`;
 *   `cause` is `cpu` when the run's clock says its CPU time was spent, whatever the program returned.
 */
export const RUNNER_SOURCE = `import { WorkerEntrypoint } from "cloudflare:workers";
import { stringify, parse, encoder, later, consoleRef, clockSpent } from "./${PRELUDE_MODULE}";
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
    // Past its CPU time the run has failed, whatever the program did with the error its checkpoints threw.
    if (clockSpent()) answer = { ok: false, cause: "cpu", name: "RangeError", message: "CPU time limit", stack: "" };
    const logs = capture.take();
    return { ...answer, logs: logs.lines, logsDropped: logs.dropped };
  }
}
`;

/** What the loader is given: the three modules, no bindings, no network, Node compatibility off (so no `process`). */
export interface ChildWorkerCode {
  compatibilityDate: string;
  compatibilityFlags: string[];
  mainModule: string;
  modules: Record<string, string>;
  globalOutbound: null;
  limits?: { cpuMs: number };
}

/**
 * The worker code for one program module (its source, checkpoints written in). `cpuMs` is passed to the platform, which enforces it when deployed
 * (docs/code-mode.md 1.2), and written into the run's clock, which the program's checkpoints enforce everywhere.
 */
export function childWorkerCode(programSource: string, cpuMs: number): ChildWorkerCode {
  return {
    compatibilityDate: CHILD_COMPATIBILITY_DATE,
    compatibilityFlags: [...CHILD_COMPATIBILITY_FLAGS],
    mainModule: RUNNER_MODULE,
    modules: { [RUNNER_MODULE]: RUNNER_SOURCE, [PRELUDE_MODULE]: preludeSource(cpuMs), [PROGRAM_MODULE]: programSource },
    // No `env`: the child has no bindings. `null` blocks fetch() and connect() (docs/code-mode.md 1.2).
    globalOutbound: null,
    ...(cpuMs > 0 && Number.isFinite(cpuMs) ? { limits: { cpuMs: Math.ceil(cpuMs) } } : {}),
  };
}
