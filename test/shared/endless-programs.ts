// Programs an agent could write by mistake that never end on their own, as code-mode bodies: each kind of plain
// loop, an awaiting loop, endless recursions, a loop in a plain function (which cannot yield the thread), and a loop
// that catches the clock's error and loops on. The unit, pool and wrangler dev tests of the run's clock share them.
export const ENDLESS_PROGRAMS = {
  "while (true) {}": "while (true) {}",
  "for (;;) {}": "for (;;) {}",
  "do {} while (1)": "do {} while (1)",
  "while (true) await 0": "while (true) await 0",
  "an endless async recursion": "async function again(n) { await null; return again(n + 1); }\nreturn again(0);",
  "an endless recursion through microtasks": "const f = () => Promise.resolve().then(f);\nawait f();",
  "a loop in a plain function": "function spin() { for (;;) {} }\nspin();",
  "a loop that catches the clock's error and loops on": "for (;;) { try { for (;;) {} } catch {} }",
} as const;

export type EndlessProgram = keyof typeof ENDLESS_PROGRAMS;

/** The ones whose loop is in async code: their checkpoints yield the thread, so other requests are answered meanwhile. */
export const YIELDING: readonly EndlessProgram[] = ["while (true) {}", "for (;;) {}", "do {} while (1)", "while (true) await 0", "an endless async recursion"];
