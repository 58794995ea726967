// Code mode's sandbox executor (src/code/sandbox.ts) against the real Worker Loader binding: programs in each form,
// tool calls through the bridge, console capture, errors with the agent's line numbers, what the sandbox cannot
// reach, and every limit. The ToolCall is a plain function that records what it got, as the code view's would.
// Programs run with their checkpoints written in, as in sessions: an endless loop ends at the run's CPU limit.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runProgram, type Sandbox } from "../../src/code/sandbox.ts";
import type { RunReport, SandboxLimits, ToolCall } from "../../src/code/run-state.ts";
import { checkpointFinder } from "../../src/code/instrument.ts";
import { CHILD_COMPATIBILITY_DATE } from "../../src/code/child-modules.ts";
import { ENDLESS_PROGRAMS } from "../shared/endless-programs.ts";

const LIMITS: SandboxLimits = { wallMs: 1500, cpuMs: 1000, maxCalls: 10, maxLogBytes: 4096, maxResultBytes: 16_384, maxArgBytes: 65_536 };

interface Received {
  namespace: string;
  method: string;
  input: Record<string, unknown>;
  signal: AbortSignal;
}

/** A ToolCall that records each call and answers with `answer` (an echo of the call unless given). */
function recorder(answer?: (r: Received) => unknown): { call: ToolCall; received: Received[] } {
  const received: Received[] = [];
  const call: ToolCall = async (namespace, method, input, signal) => {
    const r = { namespace, method, input, signal };
    received.push(r);
    return answer ? answer(r) : { echo: `${namespace}.${method}`, input };
  };
  return { call, received };
}

/** The sandbox as sessions have it: the loader, and the checkpoint finder from the static asset. */
const sandbox = (): Sandbox => ({ loader: env.LOADER!, checkpoints: checkpointFinder(env.LOADER!, env.ASSETS, CHILD_COMPATIBILITY_DATE) });

function run(code: string, options: { namespaces?: string[]; call?: ToolCall; limits?: Partial<SandboxLimits>; signal?: AbortSignal } = {}): Promise<RunReport> {
  const { call = recorder().call, namespaces = ["github", "linear"], limits = {}, signal } = options;
  return runProgram(sandbox(), code, namespaces, call, { ...LIMITS, ...limits }, signal);
}

const result = (report: RunReport): unknown => {
  expect(report.failure).toBeUndefined();
  expect(report.ok).toBe(true);
  return JSON.parse(report.resultJson!);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("program forms", () => {
  it("runs an async arrow function and returns its value", async () => {
    const report = await run("async () => {\n  const n = 40;\n  return { n: n + 2 };\n}");
    expect(result(report)).toEqual({ n: 42 });
    expect(report.calls).toEqual([]);
    expect(report.logs).toEqual([]);
    expect(report.ms).toBeGreaterThanOrEqual(0);
  });

  it("runs a bare body with return", async () => {
    expect(result(await run("const a = [1, 2, 3];\nreturn a.map((x) => x * 2);"))).toEqual([2, 4, 6]);
  });

  it("returns the value of a bare expression, awaited", async () => {
    const { call, received } = recorder();
    expect(result(await run("await github.get_me({})", { call }))).toEqual({ echo: "github.get_me", input: {} });
    expect(received).toHaveLength(1);
  });

  it("returns the value of an arrow form whose expression is a call (not a function)", async () => {
    expect(result(await run("github.get_me({ who: 1 })"))).toEqual({ echo: "github.get_me", input: { who: 1 } });
  });

  it("accepts a trailing semicolon after an arrow function, and a leading comment", async () => {
    expect(result(await run("// sums\nasync () => {\n  return 1 + 1;\n};"))).toBe(2);
  });

  it("runs code in a markdown fence, and keeps the agent's line numbers", async () => {
    expect(result(await run("```js\nasync () => {\n  return 'fenced';\n}\n```"))).toBe("fenced");
    const report = await run("```javascript\nconst x = 1;\nthrow new Error('on line 3');\n```");
    expect(report.failure).toMatchObject({ cause: "error", message: "on line 3", line: 3 });
  });

  it("answers null for a program that returns nothing", async () => {
    const report = await run("async () => {\n  await github.noop({});\n}");
    expect(report.ok).toBe(true);
    expect(report.resultJson).toBe("null");
  });
});

describe("tool calls", () => {
  it("calls two namespaces in order, with arguments as JSON, and combines the results", async () => {
    const { call, received } = recorder(({ namespace, method, input }) =>
      namespace === "github" ? { issues: [{ id: 1, title: "a" }, { id: 2, title: "b" }], asked: method } : { created: input.title },
    );
    const code = [
      "async () => {",
      "  const list = await github.list_issues({ state: 'open', since: new Date(0), skip: undefined });",
      "  const made = await linear.create_issue({ title: `${list.issues.length} issues` });",
      "  return { first: list.issues[0].title, made, asked: list.asked };",
      "}",
    ].join("\n");
    const report = await run(code, { call });
    expect(result(report)).toEqual({ first: "a", made: { created: "2 issues" }, asked: "list_issues" });
    expect(received.map((r) => [r.namespace, r.method, r.input])).toEqual([
      // JSON on the way: a Date is its ISO text, an undefined field is gone.
      ["github", "list_issues", { state: "open", since: "1970-01-01T00:00:00.000Z" }],
      ["linear", "create_issue", { title: "2 issues" }],
    ]);
    expect(report.calls.map((c) => [c.path, c.ok])).toEqual([
      ["github.list_issues", true],
      ["linear.create_issue", true],
    ]);
    expect(report.calls.every((c) => c.ms >= 0)).toBe(true);
  });

  it("sends {} for a method called with no argument or undefined", async () => {
    const { call, received } = recorder(() => undefined);
    const report = await run("async () => [await github.a(), await github.b(undefined)]", { call });
    expect(result(report)).toEqual([null, null]);
    expect(received.map((r) => r.input)).toEqual([{}, {}]);
  });

  it("throws in the program for an argument that is not one object", async () => {
    const { call, received } = recorder();
    for (const [arg, kind] of [["'issue 1'", "a string"], ["[1, 2]", "an array"], ["null", "null"], ["{}, {}", "2"]] as const) {
      const report = await run(`async () => {\n  return await github.get_issue(${arg});\n}`, { call });
      expect(report.failure?.cause).toBe("error");
      expect(report.failure?.message).toContain("github.get_issue takes one object argument");
      expect(report.failure?.message).toContain(kind);
      expect(report.failure?.line).toBe(2);
    }
    expect(received).toEqual([]);
  });

  it("throws in the program for an argument that is not JSON", async () => {
    const report = await run("async () => {\n  await github.x({ n: 1n });\n}");
    expect(report.failure).toMatchObject({ cause: "error", line: 2 });
    expect(report.failure?.message).toContain("github.x: its argument is not JSON");
  });

  it("lets the program catch a tool's rejection", async () => {
    const { call } = recorder(() => {
      throw new Error("rate limited, try later");
    });
    const report = await run("async () => {\n  try {\n    await github.x({});\n  } catch (e) {\n    return 'caught: ' + e.message;\n  }\n}", { call });
    expect(result(report)).toBe("caught: rate limited, try later");
    expect(report.calls).toEqual([expect.objectContaining({ path: "github.x", ok: false })]);
  });

  it("ends the run with an uncaught tool rejection's message, at the program's line", async () => {
    const { call } = recorder(() => {
      throw new Error("404: no such repository");
    });
    const report = await run("async () => {\n  const a = 1;\n  const r = await github.get_repo({ name: 'x' });\n  return r;\n}", { call });
    expect(report.ok).toBe(false);
    expect(report.failure).toMatchObject({ cause: "error", message: "404: no such repository", line: 3 });
  });

  it("keeps the program's line for a rejection awaited through Promise.all", async () => {
    const { call } = recorder(({ method }) => {
      if (method === "bad") throw new Error("bad one");
      return 1;
    });
    const report = await run("async () => {\n\n  return await Promise.all([github.ok({}), github.bad({})]);\n}", { call });
    expect(report.failure).toMatchObject({ cause: "error", message: "bad one", line: 3 });
  });

  it("answers a ReferenceError for an unknown namespace", async () => {
    const report = await run("async () => {\n  return await gitlab.list({});\n}");
    expect(report.failure).toMatchObject({ cause: "error", message: "ReferenceError: gitlab is not defined", line: 2, thrown: "ReferenceError" });
  });

  it("never turns `await namespace`, printing or converting a namespace into tool calls", async () => {
    const { call, received } = recorder();
    const code = "async () => {\n  const ns = await github;\n  console.log(github);\n  return [typeof ns.then, typeof github.toJSON, String(Object.keys(github))];\n}";
    const report = await run(code, { call });
    expect(result(report)).toEqual(["undefined", "undefined", ""]);
    expect(report.logs).toEqual(["{}"]);
    expect(received).toEqual([]);
  });
});

describe("console", () => {
  it("captures console.log/info/warn/error/debug, strings as is and other values as JSON", async () => {
    const code = [
      "async () => {",
      "  console.log('plain', 1, { a: [1, 'x'] }, null);",
      "  console.info('info');",
      "  console.warn('warn', undefined);",
      "  console.error(new TypeError('bad'));",
      "  console.debug(10n);",
      "}",
    ].join("\n");
    const report = await run(code);
    expect(report.logs).toEqual(['plain 1 {"a":[1,"x"]} null', "info", "warn undefined", "TypeError: bad", "10"]);
    expect(report.logsDropped).toBe(0);
  });

  it("keeps lines up to maxLogBytes (UTF-8, joined by newlines) and counts the rest", async () => {
    // "é" is two bytes: "line é 0" is 9 bytes, so four lines take 4 × 9 + 3 = 39 bytes, and a fifth does not fit in 45.
    const report = await run("async () => {\n  for (let i = 0; i < 10; i++) console.log('line é ' + i);\n  return 'done';\n}", {
      limits: { maxLogBytes: 45 },
    });
    expect(result(report)).toBe("done");
    expect(report.logs).toEqual(["line é 0", "line é 1", "line é 2", "line é 3"]);
    expect(report.logsDropped).toBe(6);
  });

  it("bounds a huge line without keeping it", async () => {
    const report = await run("async () => {\n  console.log('x'.repeat(1e6));\n  console.log('after');\n}", { limits: { maxLogBytes: 100 } });
    expect(report.logs).toEqual([]);
    expect(report.logsDropped).toBe(2);
  });
});

describe("errors and line numbers", () => {
  it("reports a thrown Error with the agent's line and column", async () => {
    const report = await run("async () => {\n  const x = 1;\n  throw new Error('boom ' + x);\n}");
    expect(report.ok).toBe(false);
    expect(report.failure).toEqual({ cause: "error", message: "boom 1", line: 3, column: 9 });
  });

  it("reports a runtime error on line 1 with a column relative to the agent's text", async () => {
    // V8 places the error at the identifier here (for `return undefinedThing.x` it would place it at `return`).
    const report = await run("return 1 + undefinedThing.x;");
    expect(report.failure).toEqual({ cause: "error", message: "ReferenceError: undefinedThing is not defined", line: 1, column: 12, thrown: "ReferenceError" });
  });

  it("reports a syntax error with its line and column (arrow form)", async () => {
    const report = await run("async () => {\n  const x = ;\n  return x;\n}");
    expect(report.failure).toEqual({ cause: "syntax", message: "SyntaxError: Unexpected token ';'", line: 2, column: 13 });
  });

  it("reports a body's own syntax error, not the expression form's", async () => {
    const report = await run("const a = 1;\nconst b = ;\nreturn a;");
    expect(report.failure).toEqual({ cause: "syntax", message: "SyntaxError: Unexpected token ';'", line: 2, column: 11 });
    const noReturn = await run("const a = 1;\nconst b = ;");
    expect(noReturn.failure).toEqual({ cause: "syntax", message: "SyntaxError: Unexpected token ';'", line: 2, column: 11 });
  });

  it("reports a syntax error on line 1 with a column relative to the agent's text", async () => {
    const report = await run("const x = ;");
    expect(report.failure).toEqual({ cause: "syntax", message: "SyntaxError: Unexpected token ';'", line: 1, column: 11 });
  });

  it("reports an unclosed function at the agent's last line", async () => {
    const report = await run("async () => {\n  return 1;");
    expect(report.failure).toMatchObject({ cause: "syntax", line: 2 });
    expect(report.failure?.message).toMatch(/^SyntaxError: /);
  });

  it("reports a thrown non-Error value", async () => {
    const report = await run("async () => {\n  throw 'nope';\n}");
    expect(report.failure).toEqual({ cause: "error", message: 'The program threw a value that is not an Error: "nope"' });
  });

  it("refuses eval and new Function", async () => {
    const report = await run("async () => {\n  return eval('1 + 1');\n}");
    expect(report.failure).toMatchObject({ cause: "error", line: 2 });
    expect(report.failure?.message).toContain("Code generation from strings disallowed");
  });
});

describe("what the sandbox cannot reach", () => {
  it("refuses fetch() (the error comes back to the program)", async () => {
    const report = await run("async () => {\n  try {\n    await fetch('http://127.0.0.1:1/');\n    return 'reached';\n  } catch (e) {\n    return e.message;\n  }\n}");
    expect(result(report)).toMatch(/^This worker is not permitted to access the internet via global functions like fetch\(\)/);
  });

  it("refuses connect() from cloudflare:sockets", async () => {
    const code = [
      "async () => {",
      "  const { connect } = await import('cloudflare:sockets');",
      "  try {",
      "    const socket = connect('127.0.0.1:1');",
      "    await socket.opened;",
      "    return 'connected';",
      "  } catch (e) {",
      "    return e.message;",
      "  }",
      "}",
    ].join("\n");
    expect(result(await run(code))).toMatch(/not permitted to access the internet/);
  });

  it("has no bindings, no process, no Node modules", async () => {
    const code = [
      "async () => {",
      "  const workers = await import('cloudflare:workers');",
      "  let fs;",
      "  try { await import('node:fs'); fs = 'loaded'; } catch (e) { fs = e.message; }",
      "  return {",
      "    process: typeof process, env: typeof env, Buffer: typeof Buffer, global: typeof global,",
      "    bindings: Object.keys(workers.env ?? {}),",
      "    nodejs: Object.entries(Cloudflare.compatibilityFlags).filter(([k, v]) => v && k.startsWith('nodejs_compat')),",
      "    fs,",
      "    globals: Object.getOwnPropertyNames(globalThis),",
      "  };",
      "}",
    ].join("\n");
    const seen = result(await run(code)) as Record<string, unknown> & { globals: string[] };
    expect(seen).toMatchObject({ process: "undefined", env: "undefined", Buffer: "undefined", global: "undefined", bindings: [], nodejs: [] });
    expect(seen.fs).toContain("No such module");
    for (const name of ["process", "Buffer", "env", "LOADER", "TEAMS", "SESSIONS", "SESSION_KEY"]) expect(seen.globals).not.toContain(name);
  });

  it("refuses to run the program a second time through the child's own entrypoint", async () => {
    // A counter stops the recursion even if the refusal were missing: an unbounded loop would hang the pool.
    const code = [
      "async () => {",
      "  globalThis.depth = (globalThis.depth ?? 0) + 1;",
      "  if (globalThis.depth > 1) return 're-entered';",
      "  const { exports } = await import('cloudflare:workers');",
      "  try {",
      "    return await exports.default.run(null, ['github'], { maxLogBytes: 100, maxResultBytes: 100 });",
      "  } catch (e) {",
      "    return e.message;",
      "  }",
      "}",
    ].join("\n");
    expect(result(await run(code))).toBe("This sandbox has run its program already.");
  });

  it("has no cache API: a shared cache would carry data from one run to the next", async () => {
    const code = "async () => {\n  try {\n    await caches.default.put('https://a.example/', new Response('x'));\n    return 'stored';\n  } catch (e) {\n    return [typeof caches, typeof globalThis.caches, e.name];\n  }\n}";
    expect(result(await run(code))).toEqual(["undefined", "undefined", "ReferenceError"]);
  });

  it("has no cache API at the program module's top level either (a body that closes the wrapper's brace)", async () => {
    // Module code after the wrapper runs when program.js is evaluated: after the prelude, before the runner's body.
    const code = "return [early, typeof globalThis.caches];\n}; const early = typeof globalThis.caches; {";
    expect(result(await run(code))).toEqual(["undefined", "undefined"]);
  });
});

describe("the wall limit", () => {
  it("stands still while a call holds it (a person deciding), and runs again once the hold ends", async () => {
    const call: ToolCall = async (_ns, _method, _input, _signal, hold) => hold(sleep(700).then(() => "allowed"));
    const report = await run("async () => await github.merge({})", { call, limits: { wallMs: 400 } });
    expect(result(report)).toBe("allowed");
  });

  it("stands still for at most maxHeldMs in all: past it the clock runs while the question is still open", async () => {
    const call: ToolCall = async (_ns, _method, _input, _signal, hold) => hold(sleep(3_000).then(() => "allowed"));
    const started = Date.now();
    const report = await run("async () => await github.merge({})", { call, limits: { wallMs: 300, maxHeldMs: 200 } });
    expect(report.failure?.cause).toBe("timeout");
    // About 300 ms of clock plus 200 ms held; well short of the 3 s the question stays open.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("ends a program that is still waiting at wallMs, with the logs and calls so far", async () => {
    const code = "async () => {\n  console.log('started');\n  await github.ping({});\n  console.log('waiting');\n  await new Promise((r) => setTimeout(r, 60000));\n}";
    const report = await run(code, { limits: { wallMs: 400 } });
    expect(report.ok).toBe(false);
    expect(report.failure).toEqual({ cause: "timeout", message: "The program did not finish within the wall-time limit of 400 ms and was stopped." });
    expect(report.ms).toBeGreaterThanOrEqual(390);
    expect(report.ms).toBeLessThan(1400);
    // The lines logged before the last call came with it; the ones after it are lost with the child.
    expect(report.logs).toEqual(["started"]);
    expect(report.calls).toEqual([expect.objectContaining({ path: "github.ping", ok: true })]);
  });

  it("ends at once a program awaiting a promise that nothing can settle (workerd's hang detection)", async () => {
    const report = await run("async () => {\n  console.log('started');\n  await github.ping({});\n  await new Promise(() => {});\n}", {
      limits: { wallMs: 1500 },
    });
    expect(report.failure?.cause).toBe("timeout");
    expect(report.failure?.message).toContain("could never finish");
    expect(report.ms).toBeLessThan(1000);
    expect(report.logs).toEqual(["started"]);
  });

  it("aborts a tool call that never settles, through its signal", async () => {
    const signals: AbortSignal[] = [];
    const call: ToolCall = (_ns, _m, _input, signal) => {
      signals.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted upstream"))));
    };
    const report = await run("async () => await github.hang({})", { call, limits: { wallMs: 300 } });
    expect(report.failure?.cause).toBe("timeout");
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(report.calls).toEqual([expect.objectContaining({ path: "github.hang", ok: false })]);
    // The wall clock includes the load (and placing the checkpoints): the call starts a little after it.
    expect(report.calls[0]!.ms).toBeGreaterThanOrEqual(150);
  });

  it("never lets a call made after the deadline reach the ToolCall", async () => {
    const { call, received } = recorder();
    const code = "async () => {\n  for (let i = 0; i < 40; i++) {\n    await new Promise((r) => setTimeout(r, 40));\n    await github.tick({ i });\n  }\n}";
    const report = await run(code, { call, limits: { wallMs: 300 } });
    expect(report.failure?.cause).toBe("timeout");
    const atReport = received.length;
    expect(atReport).toBeGreaterThan(0);
    expect(atReport).toBeLessThan(40);
    expect(report.calls).toHaveLength(atReport);
    await sleep(500);
    expect(received).toHaveLength(atReport);
  });

  it("never lets an unawaited call reach the ToolCall once the program has returned", async () => {
    const { call, received } = recorder();
    const code = "async () => {\n  github.right_now({});\n  setTimeout(() => github.later({}), 50);\n  return 'returned';\n}";
    const report = await run(code, { call });
    expect(result(report)).toBe("returned");
    await sleep(300);
    expect(received).toEqual([]);
    expect(report.calls).toEqual([]);
  });

});

describe("the CPU limit, kept by the program's checkpoints (local workerd enforces none)", () => {
  for (const [name, code] of Object.entries(ENDLESS_PROGRAMS)) {
    it(`ends ${name} as over its CPU time, and the sandbox runs the next program`, async () => {
      const report = await run(code, { limits: { cpuMs: 300, wallMs: 20_000 } });
      expect(report.ok).toBe(false);
      expect(report.failure?.cause).toBe("cpu");
      expect(report.failure?.message).toMatch(/^The program used more than its CPU time limit of 300 ms and was stopped/);
      expect(result(await run("return 1 + 1;"))).toBe(2);
    });
  }

  it("stays the cause whatever the program returns after catching the clock's error", async () => {
    const report = await run("try { for (;;) {} } catch (e) { return 'caught: ' + e.message; }", { limits: { cpuMs: 200 } });
    expect(report.failure?.cause).toBe("cpu");
  });

  it("yields the thread while async code spins: a run started meanwhile finishes first", async () => {
    const spinning = run("while (true) {}", { limits: { cpuMs: 1500, wallMs: 20_000 } });
    const order: string[] = [];
    void spinning.then(() => order.push("spinning"));
    await sleep(50);
    const quick = await run("const a = await github.get({ n: 1 });\nreturn a.input.n;");
    order.push("quick");
    expect(result(quick)).toBe(1);
    expect((await spinning).failure?.cause).toBe("cpu");
    expect(order).toEqual(["quick", "spinning"]);
  });

  it("does not count the time a program waits for its tools", async () => {
    const { call } = recorder(async (r) => {
      await sleep(60);
      return r.input;
    });
    const report = await run("let n = 0;\nfor (let i = 0; i < 5; i++) n += (await github.slow({ i })).i;\nreturn n;", { call, limits: { cpuMs: 100, wallMs: 5_000 } });
    expect(result(report)).toBe(10);
  });

  it("keeps the agent's line and column with the checkpoints written in", async () => {
    const report = await run("for (let i = 0; i < 2; i++) { const x = i; }\n  null.boom;");
    expect(report.failure?.cause).toBe("error");
    expect(report.failure).toMatchObject({ line: 2, column: 8 });
  });
});

describe("the other limits", () => {
  it("refuses the call past maxCalls, and ends the run as tool_calls even if the program catches it", async () => {
    const { call, received } = recorder(() => "ok");
    const code = [
      "async () => {",
      "  const seen = [];",
      "  for (let i = 0; i < 5; i++) {",
      "    try { seen.push(await github.call({ i })); } catch (e) { seen.push(e.message); }",
      "  }",
      "  return seen;",
      "}",
    ].join("\n");
    const report = await run(code, { call, limits: { maxCalls: 3 } });
    expect(report.ok).toBe(false);
    expect(report.resultJson).toBeUndefined();
    expect(report.failure?.cause).toBe("tool_calls");
    expect(report.failure?.message).toContain("at most 3 tool calls");
    expect(received.map((r) => r.input)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(report.calls).toHaveLength(3);
  });

  it("refuses a call whose arguments are over maxArgBytes of JSON: the program gets the error, the ToolCall nothing", async () => {
    const { call, received } = recorder();
    const code = "async () => {\n  try {\n    await github.create({ body: 'x'.repeat(200) });\n  } catch (e) {\n    return [e.name, e.message];\n  }\n}";
    const [name, message] = result(await run(code, { call, limits: { maxArgBytes: 100 } })) as [string, string];
    expect(name).toBe("RangeError");
    expect(message).toBe("github.create's argument is over 100 bytes of JSON, the most one call may send; it was not made. Send less per call (or split the work into several calls).");
    expect(received).toEqual([]);
    expect(result(await run("await github.create({ body: 'x'.repeat(80) })", { call, limits: { maxArgBytes: 100 } }))).toMatchObject({ echo: "github.create" });
    expect(received).toHaveLength(1);
  });

  it("allows exactly maxCalls calls", async () => {
    const report = await run("async () => {\n  for (let i = 0; i < 3; i++) await github.call({ i });\n  return 'three';\n}", { limits: { maxCalls: 3 } });
    expect(result(report)).toBe("three");
  });

  it("refuses a result over maxResultBytes", async () => {
    const report = await run("async () => 'x'.repeat(200)", { limits: { maxResultBytes: 100 } });
    expect(report.ok).toBe(false);
    expect(report.failure?.cause).toBe("result_size");
    expect(report.failure?.message).toContain("202 bytes of JSON, over the limit of 100 bytes");
    expect(result(await run("async () => 'x'.repeat(98)", { limits: { maxResultBytes: 100 } }))).toBe("x".repeat(98));
  });

  it("refuses a result that is not JSON: a function, a BigInt, a cycle", async () => {
    for (const [code, words] of [
      ["return () => 1;", "returned a function"],
      ["return 10n;", "serialize a BigInt"],
      ["const a = {};\na.self = a;\nreturn a;", "circular structure"],
      ["return Symbol('s');", "returned a symbol"],
    ] as const) {
      const report = await run(code);
      expect(report.failure?.cause).toBe("result_type");
      expect(report.failure?.message).toContain(words);
      expect(report.failure?.message).toContain("Return a JSON value");
    }
  });

  it("ends as aborted when the caller's signal fires, and aborts the calls in flight", async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const call: ToolCall = (_ns, _m, _input, signal) => {
      signals.push(signal);
      setTimeout(() => controller.abort(), 50);
      return new Promise(() => {});
    };
    const report = await run("async () => await github.slow({})", { call, signal: controller.signal, limits: { wallMs: 1500 } });
    expect(report.failure).toEqual({ cause: "aborted", message: "The run was cancelled before the program finished." });
    expect(report.ms).toBeLessThan(1000);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("does not start a run whose signal has already fired", async () => {
    const { call, received } = recorder();
    const report = await run("async () => await github.x({})", { call, signal: AbortSignal.abort() });
    expect(report.failure?.cause).toBe("aborted");
    await sleep(100);
    expect(received).toEqual([]);
  });
});

describe("runs in parallel", () => {
  it("keeps each run's calls and logs apart", async () => {
    const a = recorder(({ input }) => ({ from: "a", ...input }));
    const b = recorder(({ input }) => ({ from: "b", ...input }));
    const program = (tag: string) =>
      `async () => {\n  const out = [];\n  for (let i = 0; i < 4; i++) {\n    console.log('${tag}' + i);\n    out.push(await ns.step({ i, tag: '${tag}' }));\n    await new Promise((r) => setTimeout(r, 5));\n  }\n  return out;\n}`;
    const [ra, rb] = await Promise.all([
      run(program("A"), { namespaces: ["ns"], call: a.call }),
      run(program("B"), { namespaces: ["ns"], call: b.call }),
    ]);
    expect(result(ra)).toEqual([0, 1, 2, 3].map((i) => ({ from: "a", i, tag: "A" })));
    expect(result(rb)).toEqual([0, 1, 2, 3].map((i) => ({ from: "b", i, tag: "B" })));
    expect(ra.logs).toEqual(["A0", "A1", "A2", "A3"]);
    expect(rb.logs).toEqual(["B0", "B1", "B2", "B3"]);
    expect(a.received.every((r) => r.input.tag === "A")).toBe(true);
    expect(b.received.every((r) => r.input.tag === "B")).toBe(true);
    expect(ra.calls).toHaveLength(4);
    expect(rb.calls).toHaveLength(4);
  });
});
