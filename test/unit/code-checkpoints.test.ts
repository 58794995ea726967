// The code sandbox's checkpoints, in Node with the real acorn: where src/views/code/checkpoints.ts puts them, how
// src/views/code/instrument.ts writes them in (and refuses anything but the finder's kinds), that a checkpointed program
// still means what it meant, that the run's clock (src/views/code/clock.ts, inside the prelude) ends every kind of endless
// program at its CPU limit whatever it catches, and that positions map back to the agent's text. Node's clock moves
// while code runs, as local workerd's does; the real sandbox is tested in test/workers/code-sandbox.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "acorn";
import { afterAll, describe, expect, it } from "vitest";
import { findCheckpoints } from "../../src/views/code/checkpoints.ts";
import { clockNames, type ClockNames } from "../../src/views/code/clock.ts";
import { applyCheckpoints, originalColumn } from "../../src/views/code/instrument.ts";
import { agentPosition, positionInStack, programModule, type ProgramModule } from "../../src/views/code/runner.ts";
import { preludeSource } from "../../src/views/code/child-modules.ts";
import { ENDLESS_PROGRAMS } from "../shared/endless-programs.ts";

const dir = mkdtempSync(join(tmpdir(), "dynmcp-checkpoints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMES: ClockNames = { tick: "T", pause: "Y", resumed: "R", suspend: "S" };

/** The module with its checkpoints written in (fails the test when the finder refuses it). */
function checkpointed(source: string, names: ClockNames = NAMES, prelude = "prelude.mjs") {
  const answer = findCheckpoints(source);
  expect(answer.ok, JSON.stringify(answer)).toBe(true);
  const placed = applyCheckpoints(source, answer, names, prelude);
  expect(placed).toBeDefined();
  return placed!;
}

let files = 0;
/**
 * Runs a body-form program module in Node: the module as the sandbox would load it (checkpointed or not) beside a
 * prelude with the run's clock at `cpuMs`; resolves to its value, or the error it threw, and whether the clock ran out.
 */
async function runInNode(code: string, opts: { cpuMs?: number; checkpoints?: boolean } = {}): Promise<{ value?: unknown; error?: Error; spent: boolean; ms: number }> {
  const folder = join(dir, `run-${files++}`);
  const module = programModule(code, [], "body");
  const source = opts.checkpoints === false ? module.source : checkpointed(module.source, clockNames()).source;
  const { mkdirSync } = await import("node:fs");
  mkdirSync(folder);
  writeFileSync(join(folder, "prelude.mjs"), preludeSource(opts.cpuMs ?? 300).replace(/delete globalThis\.caches;/, ""));
  writeFileSync(join(folder, "program.mjs"), source);
  const prelude = (await import(pathToFileURL(join(folder, "prelude.mjs")).href)) as { clockSpent(): boolean };
  const program = (await import(pathToFileURL(join(folder, "program.mjs")).href)) as { default: (scope: object) => () => Promise<unknown> };
  const started = Date.now();
  try {
    const value = await program.default({})();
    return { value, spent: prelude.clockSpent(), ms: Date.now() - started };
  } catch (error) {
    return { error: error as Error, spent: prelude.clockSpent(), ms: Date.now() - started };
  }
}

const kinds = (source: string) => {
  const answer = findCheckpoints(source);
  return answer.ok ? answer.checkpoints.map((c) => c.kind) : [];
};

describe("where the checkpoints go", () => {
  it("puts one at the top of every loop body and every function body, yielding ones in async code only", () => {
    expect(kinds("while (a) {}")).toEqual(["tick"]);
    expect(kinds("for (;;) x();")).toEqual(["block-tick", "block-end"]);
    expect(kinds("do x(); while (y)")).toEqual(["block-tick", "block-end"]);
    expect(kinds("for (const k in o) {} for (const v of a) {}")).toEqual(["tick", "tick"]);
    expect(kinds("function f() {} const g = function* () {}; class C { m() {} get x() { return 1 } }")).toEqual(["tick", "tick", "tick", "tick"]);
    expect(kinds("const f = () => 1;")).toEqual(["expr-tick", "end"]);
    expect(kinds("async function f() { while (1) {} }")).toEqual(["tick-yield", "tick-yield"]);
    expect(kinds("const f = async () => 1;")).toEqual(["expr-tick-yield", "end"]);
    // A sync function inside an async one cannot await; an async one inside a sync one can.
    expect(kinds("async function f() { function g() { for (;;) {} } }")).toEqual(["tick-yield", "tick", "tick"]);
    expect(kinds("function f() { const g = async () => { for (;;) {} }; }")).toEqual(["tick", "tick-yield", "tick-yield"]);
    // Class static blocks and field initializers cannot await.
    expect(kinds("async function f() { class C { static { for (;;) {} } } }")).toEqual(["tick-yield", "tick"]);
  });

  it("puts the clock's stop and start around every await and its operand", () => {
    expect(kinds("async function f() { await g(); }")).toEqual(["tick-yield", "resumed", "suspend", "end", "end"]);
    const placed = checkpointed("async function f() { return (await g()).x; }");
    expect(placed.source).toContain("return (R(await S(g()))).x;");
  });

  it("answers no checkpoints for a module acorn cannot parse (the platform reports its syntax error)", () => {
    const answer = findCheckpoints("export default () => {\nconst = 1;\n};");
    expect(answer.ok).toBe(false);
  });

  it("keeps every tricky form parsing: ASI, regular expressions, templates, object bodies, constructors, labels", () => {
    const tricky = [
      "const f = () => ({ a: 1 })\nconst g = x => x\n/re/g.test('re')",
      "let i = 0\nwhile (i < 3) i++\nconst s = `a${(() => { for (const c of 'ab') {} return 1 })()}b`",
      "class A { constructor() { this.x = 1 } }\nclass B extends A { constructor() { super(); for (;;) break } static s = () => 2; #p() { return 3 } }",
      "outer: for (let a = 0; a < 2; a++) for (let b = 0; b < 2; b++) { if (b) continue outer; }",
      "if (x) while (y) z(); else do w(); while (v)",
      "const o = { async *gen() { yield 1 }, get g() { return 2 }, [k]() {} }",
      "async function f() { for await (const x of xs) {} label: { await 0 } }",
      "const a = b => c => d => b + c + d; const e = async () => await f() ? 1 : 2;",
      "const t = (a = () => 1, { b } = {}, ...c) => a() + b + c.length;",
    ];
    for (const source of tricky) {
      const placed = checkpointed(source);
      expect(() => parse(placed.source, { ecmaVersion: "latest", sourceType: "module" }), placed.source).not.toThrow();
    }
  });
});

describe("what the session writes in", () => {
  it("writes only the finder's kinds, at offsets in order and within the source; anything else runs the module as it is", () => {
    const source = "for (;;) {}";
    expect(applyCheckpoints(source, { ok: false, reason: "x" }, NAMES, "p.js")).toBeUndefined();
    expect(applyCheckpoints(source, { ok: true, checkpoints: [{ at: 10, kind: "evil(); tick" }] }, NAMES, "p.js")).toBeUndefined();
    expect(applyCheckpoints(source, { ok: true, checkpoints: [{ at: 99, kind: "tick" }] }, NAMES, "p.js")).toBeUndefined();
    expect(applyCheckpoints(source, { ok: true, checkpoints: [{ at: 5, kind: "tick" }, { at: 2, kind: "tick" }] }, NAMES, "p.js")).toBeUndefined();
    expect(applyCheckpoints(source, { ok: true, checkpoints: [{ at: 1.5, kind: "tick" }] }, NAMES, "p.js")).toBeUndefined();
    expect(applyCheckpoints(source, "nonsense", NAMES, "p.js")).toBeUndefined();
    const placed = applyCheckpoints(source, { ok: true, checkpoints: [{ at: 10, kind: "tick" }] }, NAMES, "p.js");
    expect(placed?.source).toBe('import { tick as T, pause as Y, resumed as R, suspend as S } from "./p.js"; for (;;) {T();}');
  });

  it("names the clock's functions afresh for each run, so no program can shadow them", () => {
    const a = clockNames();
    const b = clockNames();
    expect(a.tick).not.toBe(b.tick);
    for (const name of Object.values(a)) expect(name).toMatch(/^\$clock[0-9a-f]{12}[tprs]$/);
  });

  it("maps a column of the checkpointed module back to the module as written, and to the agent's text", () => {
    const code = "const a = 1;\nfor (let i = 0; i < 1; i++) { x(); }\nthrow new Error('here');";
    const module = programModule(code, [], "body");
    const placed = checkpointed(module.source);
    const program: ProgramModule = { ...module, source: placed.source, shifts: placed.shifts };
    // `x()` on line 2: find its column in both texts.
    const writtenLine = module.source.split("\n")[1]!;
    const placedLine = placed.source.split("\n")[1]!;
    const before = writtenLine.indexOf("x()") + 1;
    const after = placedLine.indexOf("x()") + 1;
    expect(after).toBeGreaterThan(before);
    expect(originalColumn(placed.shifts, 2, after)).toBe(before);
    expect(agentPosition(program, 2, after)).toEqual({ line: 2, column: before });
    // Line 1: the clock's import and the wrapper's prefix both come off.
    const firstPlaced = placed.source.split("\n")[0]!;
    expect(agentPosition(program, 1, firstPlaced.indexOf("const a") + 1)).toEqual({ line: 1, column: 1 });
    expect(positionInStack(program, `Error: here\n    at program.js:3:${placed.source.split("\n")[2]!.indexOf("throw") + 1}`)).toEqual({ line: 3, column: 1 });
  });
});

describe("a checkpointed program means what it meant", () => {
  const programs = [
    "let s = 0; for (let i = 0; i < 1000; i++) s += i; return s;",
    "const fib = (n) => n < 2 ? n : fib(n - 1) + fib(n - 2); return fib(15);",
    "const out = []; let i = 0; do out.push(i++); while (i < 5); return out;",
    "const o = { a: 1, b: 2 }; const keys = []; for (const k in o) keys.push(k); return keys.map((k) => ({ [k]: o[k] * 2 }));",
    "async function twice(x) { await null; return 2 * x; } return Promise.all([1, 2, 3].map(async (n) => (await twice(n)) + 1));",
    "class A { constructor(x) { this.x = x } get double() { return this.x * 2 } } class B extends A { constructor() { super(21) } } return new B().double;",
    "function* g() { let i = 0; while (i < 3) yield i++; } return [...g()];",
    "const r = []; outer: for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) { if (b > a) continue outer; r.push(`${a}${b}`) } return r;",
    "try { await Promise.reject(new Error('no')) } catch (e) { return e.message + (await 1) }",
  ];

  it("returns the same value with and without its checkpoints", async () => {
    for (const code of programs) {
      const plain = await runInNode(code, { checkpoints: false });
      const placed = await runInNode(code);
      expect(plain.error, code).toBeUndefined();
      expect(placed.error, code).toBeUndefined();
      expect(placed.value, code).toEqual(plain.value);
      expect(placed.spent).toBe(false);
    }
  });
});

describe("the run's clock ends what never ends, at its CPU limit", () => {
  for (const [name, code] of Object.entries(ENDLESS_PROGRAMS)) {
    it(`stops ${name}`, async () => {
      const r = await runInNode(code, { cpuMs: 150 });
      expect(r.spent, String(r.error)).toBe(true);
      expect(r.error?.message).toContain("CPU time limit of 150 ms");
      // Bounded by the limit, not by anything the test waits for (generous: the machine may be busy).
      expect(r.ms).toBeLessThan(5_000);
    });
  }

  it("does not count the time a program waits", async () => {
    const r = await runInNode("for (let i = 0; i < 4; i++) await new Promise((r) => setTimeout(r, 60)); return 'done';", { cpuMs: 100 });
    expect(r.error).toBeUndefined();
    expect(r.value).toBe("done");
    expect(r.spent).toBe(false);
  });
});
