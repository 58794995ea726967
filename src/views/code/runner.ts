// Pure: how the agent's code becomes the sandbox's program module, and how the sandbox's answers are read: the
// module keeps the agent's lines (src/views/code/child-modules.ts has the child's other modules), module positions map
// back to the agent's text, and the loader's startup errors, its platform failures and the runner's report are
// read. Nothing here imports `cloudflare:`, so Node unit tests check all of it; src/views/code/sandbox.ts does the
// loading, the bridge and the limits.
import { PROGRAM_MODULE } from "./child-modules.ts";
import { originalColumn, type Shift } from "./instrument.ts";

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
  /** What src/views/code/instrument.ts wrote in (the clock's import and checkpoints); none for a module as written. */
  shifts?: readonly Shift[];
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

/**
 * A module position (`program.js` line and column) as a position in the agent's text: the wrapper's prefix taken
 * off line 1's columns, and a position in the wrapper's closing line (an unclosed brace, say) moved to the end of
 * the agent's last line, without a column.
 */
export function agentPosition(program: Pick<ProgramModule, "prefixLength" | "lines" | "shifts">, line: number, column: number): ProgramPosition {
  if (!Number.isInteger(line) || line < 1) return {};
  if (line > program.lines) return { line: program.lines };
  const written = program.shifts ? originalColumn(program.shifts, line, column) : column;
  const col = line === 1 ? written - program.prefixLength : written;
  return Number.isInteger(col) && col >= 1 ? { line, column: col } : { line };
}

const FRAME = new RegExp(`\\b${PROGRAM_MODULE.replace(".", "\\.")}:(\\d+):(\\d+)`);

/** The agent's position of the first `program.js:L:C` frame in a stack (none when the program is not on it). */
export function positionInStack(program: Pick<ProgramModule, "prefixLength" | "lines" | "shifts">, stack: string): ProgramPosition {
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
  | { ok: false; cause: "error" | "result_type" | "result_size" | "cpu"; name: string; message: string; stack: string; logs: string[]; logsDropped: number };

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
  if (v.ok !== false || (v.cause !== "error" && v.cause !== "result_type" && v.cause !== "result_size" && v.cause !== "cpu")) return undefined;
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
