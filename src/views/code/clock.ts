// Pure: the run's clock, the part of the sandbox's prelude that the program's checkpoints call (where they go:
// src/views/code/checkpoints.ts; how they are written in: src/views/code/instrument.ts). It counts the time the program holds the
// thread, and
// - stops the program at its CPU limit: every checkpoint from then on throws, whatever the program catches, and the
//   run is reported as over its CPU time. On Cloudflare the platform enforces `limits.cpuMs` anyway (and its clock
//   stands still while code runs, so this one rarely moves there); local workerd enforces nothing and runs every
//   isolate on one thread, where an endless loop would freeze every request until it ends;
// - in async code, yields the thread (one macrotask) once SLICE_MS have passed since it last did, so that other
//   requests are answered while a program spins.
// The time the program waits (an `await` of a tool call, a timer, a yield) is not counted: each `await` stops the
// clock before it suspends and starts it when it resumes, unless it resumed at once (IDLE_MIN_MS).

/** How long async code goes without giving the thread up (a macrotask) before a checkpoint yields it. */
export const SLICE_MS = 25;
/**
 * A wait shorter than this is counted as the program's time: an `await` of something already settled resumes at
 * once, in the same turn, and a loop of them holds the thread as surely as a plain loop does.
 */
export const IDLE_MIN_MS = 2;
/** The clock is read at one checkpoint in this many (a loop turn costs a decrement and two tests otherwise). */
export const READ_EVERY = 64;

/** Names of the clock's functions as the program module imports them: unguessable, so no code can shadow them. */
export interface ClockNames {
  tick: string;
  pause: string;
  resumed: string;
  suspend: string;
}

/** Fresh names for one run (a program written before the run cannot name them; any it could learn later are useless). */
export function clockNames(): ClockNames {
  const tag = [...crypto.getRandomValues(new Uint8Array(6))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { tick: `$clock${tag}t`, pause: `$clock${tag}p`, resumed: `$clock${tag}r`, suspend: `$clock${tag}s` };
}

/** The prelude's exports the program module imports, as its first statement (on its first line). */
export const clockImport = (names: ClockNames, prelude: string): string =>
  `import { tick as ${names.tick}, pause as ${names.pause}, resumed as ${names.resumed}, suspend as ${names.suspend} } from "./${prelude}"; `;

/**
 * The clock's source, for the prelude. `cpuMs` is written in (no function sets it: the program can import the
 * prelude itself). Exports: `tick()` (throws once the CPU time is spent; true when async code should yield),
 * `pause()` (a yield: one macrotask), `suspend(value)` and `resumed(value)` (around an `await`), `clockSpent()`
 * (whether the limit was reached, read by the runner when the program is over). Any of them may be called by the
 * program itself: none can give it more time.
 */
export function clockSource(cpuMs: number): string {
  const limit = cpuMs > 0 && Number.isFinite(cpuMs) ? Math.ceil(cpuMs) : "Infinity";
  return `const clockNow = Date.now;
const clockLater = setTimeout;
const CPU_MS = ${limit};
let used = 0;
let start = 0;
let slice = 0;
let idleAt = 0;
let countdown = ${READ_EVERY};
let idle = true;
let started = false;
let spent = false;
function overCpu() {
  return new RangeError("The program used more than its CPU time limit of " + CPU_MS + " ms and was stopped.");
}
function wake() {
  if (!idle) return;
  idle = false;
  const t = clockNow();
  if (!started) {
    started = true;
    start = slice = t;
  } else if (t - idleAt >= ${IDLE_MIN_MS}) {
    used += idleAt - start;
    start = t;
  }
}
export function suspend(value) {
  if (!idle) {
    idle = true;
    idleAt = clockNow();
  }
  return value;
}
export function resumed(value) {
  wake();
  return value;
}
export function tick() {
  if (spent) throw overCpu();
  if (idle) wake();
  if (--countdown > 0) return false;
  countdown = ${READ_EVERY};
  const t = clockNow();
  if (used + (t - start) > CPU_MS) {
    spent = true;
    throw overCpu();
  }
  return t - slice >= ${SLICE_MS};
}
export function pause() {
  suspend();
  return new Promise((resolve) =>
    clockLater(() => {
      slice = clockNow();
      resolve(resumed());
    }, 0),
  );
}
export function clockSpent() {
  return spent;
}
`;
}
