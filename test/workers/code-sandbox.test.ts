// Code mode's sandbox executor (src/views/code/sandbox.ts) against the real Worker Loader binding: programs in each form,
// tool calls through the bridge, console capture, errors with the agent's line numbers, and what the sandbox cannot
// reach (its limits: code-sandbox-limits.test.ts). The ToolCall is a plain function that records what it got, as
// the code view's would. Programs run with their checkpoints written in, as in sessions.
import { describe, expect, it } from "vitest";
import { run, recorder, result } from "../shared/sandbox-runs.ts";

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

});

describe("tool calls that fail, and what is no call", () => {
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
