// Writes a program module's checkpoints in (src/views/code/clock.ts is what they call): the finder, a Dynamic Worker of its
// own loaded from a static asset (src/views/code/checkpoints.ts, bundled with acorn by scripts/build-checkpoints.ts), says
// where; this side checks what it answers and writes the text itself, so only the clock's calls can be inserted,
// and keeps where they went, so that a position in the checkpointed module is still the agent's.
import { CHECKPOINT_KINDS, type Checkpoint, type CheckpointAnswer, type CheckpointKind } from "./checkpoint-kinds.ts";
import { clockImport, type ClockNames } from "./clock.ts";
import { log } from "../../lib/log.ts";

/** Characters inserted into one line of the module, before the character at `column` (0-based, original line). */
export interface Shift {
  line: number;
  column: number;
  length: number;
}

/** A module with its checkpoints written in, and what was inserted where (in original lines and columns). */
export interface Checkpointed {
  source: string;
  shifts: Shift[];
}

const KINDS: ReadonlySet<string> = new Set(CHECKPOINT_KINDS);

/** The text of one checkpoint, with the run's names of the clock's functions. */
function render(kind: CheckpointKind, n: ClockNames): string {
  switch (kind) {
    case "tick":
      return `${n.tick}();`;
    case "tick-yield":
      return `${n.tick}()&&await ${n.pause}();`;
    case "block-tick":
      return `{${n.tick}();`;
    case "block-tick-yield":
      return `{${n.tick}()&&await ${n.pause}();`;
    case "block-end":
      return "}";
    case "expr-tick":
      return `(${n.tick}(),`;
    case "expr-tick-yield":
      return `(${n.tick}()&&await ${n.pause}(),`;
    case "end":
      return ")";
    case "resumed":
      return `${n.resumed}(`;
    case "suspend":
      return `${n.suspend}(`;
  }
}

/** Whether the finder's answer has the finder's shape: known kinds, whole offsets within the source, in order. */
function valid(answer: unknown, length: number): answer is { ok: true; checkpoints: Checkpoint[] } {
  if (typeof answer !== "object" || answer === null || (answer as { ok?: unknown }).ok !== true) return false;
  const list = (answer as { checkpoints?: unknown }).checkpoints;
  if (!Array.isArray(list)) return false;
  let previous = 0;
  for (const item of list) {
    const at = (item as { at?: unknown } | null)?.at;
    const kind = (item as { kind?: unknown } | null)?.kind;
    if (typeof at !== "number" || !Number.isInteger(at) || at < previous || at > length || typeof kind !== "string" || !KINDS.has(kind)) return false;
    previous = at;
  }
  return true;
}

/**
 * The module with the clock's import put before its first character (on its first line) and each checkpoint
 * written in; undefined when the answer is not the finder's (then the module runs as it is).
 */
export function applyCheckpoints(source: string, answer: unknown, names: ClockNames, prelude: string): Checkpointed | undefined {
  if (!valid(answer, source.length)) return undefined;
  const head = clockImport(names, prelude);
  const parts = [head];
  const shifts: Shift[] = [{ line: 1, column: 0, length: head.length }];
  let line = 1;
  let lineStart = 0;
  let done = 0;
  for (const { at, kind } of answer.checkpoints) {
    // Lines and columns of the original source, counted as far as this offset.
    for (let i = source.indexOf("\n", done); i !== -1 && i < at; i = source.indexOf("\n", i + 1)) {
      line++;
      lineStart = i + 1;
    }
    parts.push(source.slice(done, at));
    const text = render(kind, names);
    parts.push(text);
    shifts.push({ line, column: at - lineStart, length: text.length });
    done = at;
  }
  parts.push(source.slice(done));
  return { source: parts.join(""), shifts };
}

/**
 * A column of the checkpointed module (1-based, as stacks and startup errors give it) as the column of the module
 * before its checkpoints; a column inside inserted text is the column it was inserted at.
 */
export function originalColumn(shifts: readonly Shift[], line: number, column: number): number {
  let x = column - 1;
  let shift = 0;
  for (const s of shifts) {
    if (s.line !== line) continue;
    const from = s.column + shift;
    if (x < from) break;
    if (x < from + s.length) return s.column + 1;
    shift += s.length;
  }
  return x - shift + 1;
}

/** The finder as the sandbox uses it: a module's source → its answer, or undefined when it could not be asked. */
export type CheckpointFinder = (source: string) => Promise<CheckpointAnswer | undefined>;

/** What the finder needs of the static-assets binding (`env.ASSETS`). */
interface AssetReader {
  fetch(url: string): Promise<Response>;
}

/** What the finder needs of the Worker Loader binding (`env.LOADER`): a worker kept by its id. */
interface FinderLoader {
  get(id: string, code: () => { compatibilityDate: string; mainModule: string; modules: Record<string, string>; globalOutbound: null }): {
    getEntrypoint(): unknown;
  };
}

/** Where the Worker reads the finder's module: assets/sandbox/checkpoints.js through the ASSETS binding. */
const FINDER_URL = "https://assets.invalid/sandbox/checkpoints.js";
/** The module's first line names its build: the loader keeps one finder per build. */
const KEY_LINE = /^\/\/ dynmcp checkpoint finder, build key ([0-9a-f]{64})\n/;

/** The finder module's text, read once per isolate. */
let finderModule: Promise<{ key: string; source: string }> | undefined;

async function readFinder(assets: AssetReader): Promise<{ key: string; source: string }> {
  const response = await assets.fetch(FINDER_URL);
  if (!response.ok) throw new Error(`the ASSETS binding answered ${response.status} for ${new URL(FINDER_URL).pathname}: run scripts/setup.mjs`);
  const source = await response.text();
  const key = KEY_LINE.exec(source)?.[1];
  if (!key) throw new Error("assets/sandbox/checkpoints.js has no build key: run scripts/setup.mjs");
  return { key, source };
}

/**
 * The finder in its own Dynamic Worker (no bindings, no network), loaded once per isolate and build. A finder that
 * cannot be loaded or answers nothing usable gives undefined: the program then runs without checkpoints (on
 * Cloudflare the CPU limit still holds).
 */
export function checkpointFinder(loader: FinderLoader, assets: AssetReader, compatibilityDate: string): CheckpointFinder {
  return async (source) => {
    try {
      finderModule ??= readFinder(assets).catch((err: unknown) => {
        finderModule = undefined;
        throw err;
      });
      const finder = await finderModule;
      const worker = loader.get(`dynmcp-checkpoints-${finder.key}`, () => ({
        compatibilityDate,
        mainModule: "checkpoints.js",
        modules: { "checkpoints.js": finder.source },
        globalOutbound: null,
      }));
      const entry = worker.getEntrypoint() as unknown as { find(source: string): Promise<unknown> };
      return (await entry.find(source)) as CheckpointAnswer;
    } catch (err) {
      // The finder's own failure (never the program's text): the run goes on without checkpoints.
      log({ event: "misconfigured", reason: `code mode's checkpoint finder failed: ${err instanceof Error ? err.message : String(err)}` });
      return undefined;
    }
  };
}
