// Code mode's sandbox modules (src/views/code/child-modules.ts) and how the sandbox's answers are read (src/views/code/runner.ts), in Node: the program
// module keeps the agent's lines in both forms, the forms are tried in the right order, module positions map back
// to the agent's text, the loader's startup and platform failures are classified, the worker code the loader gets
// has no bindings, no network, no Node compatibility and the Worker's compatibility date, and log budgets count
// UTF-8 bytes. What the child does at run time is tested against the real loader in test/workers/code-sandbox.test.ts.
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  LogBudget,
  agentPosition,
  looksLikeFunction,
  platformFailureCause,
  positionInStack,
  programAttempts,
  programModule,
  readChildReport,
  startupSyntaxError,
  unfence,
} from "../../src/views/code/runner.ts";
import {
  CHILD_COMPATIBILITY_DATE,
  PRELUDE_MODULE,
  PROGRAM_MODULE,
  RUNNER_MODULE,
  RUNNER_SOURCE,
  childWorkerCode,
  preludeSource,
} from "../../src/views/code/child-modules.ts";
import { UNCALLABLE_METHODS, methodNames } from "../../src/catalog/code-names.ts";

/** TypeScript's syntax errors for a JavaScript module (its parser standing in for V8's). */
function syntaxErrors(source: string): string[] {
  const out = ts.transpileModule(source, {
    fileName: "module.js",
    reportDiagnostics: true,
    compilerOptions: { allowJs: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

const NS = ["github", "linear"];

describe("unfence", () => {
  it("blanks a surrounding fence's lines and keeps every other line where it was", () => {
    expect(unfence("```js\nconst a = 1;\nreturn a;\n```")).toBe("\nconst a = 1;\nreturn a;\n");
    expect(unfence("\n  ```javascript  \nreturn 1;\n```\n\n")).toBe("\n\nreturn 1;\n\n\n");
    expect(unfence("```\nreturn 1;")).toBe("\nreturn 1;");
  });

  it("leaves code without a fence, and fences inside the code, alone", () => {
    expect(unfence("return 1;")).toBe("return 1;");
    const inner = "const md = `\n```\n`;\nreturn md;";
    expect(unfence(inner)).toBe(inner);
  });
});

describe("programModule", () => {
  const code = "async () => {\n  const r = await github.list({});\n  return r;\n};  ";

  it("puts the arrow form's prefix on the agent's first line and keeps every line number", () => {
    const m = programModule(code, NS, "arrow");
    const lines = m.source.split("\n");
    expect(lines[0]).toBe("export default async ({github, linear}) => (async () => {");
    expect(m.prefixLength).toBe("export default async ({github, linear}) => (".length);
    expect(lines.slice(1, 3)).toEqual(code.split("\n").slice(1, 3));
    // The trailing `;` (which cannot close a parenthesis) is gone; the wrapper closes on its own line.
    expect(lines.slice(3)).toEqual(["}", ");", ""]);
    expect(m.lines).toBe(4);
    expect(syntaxErrors(m.source)).toEqual([]);
  });

  it("puts the body form's prefix on the agent's first line and keeps the text as is", () => {
    const body = "const r = await github.list({});\nreturn r.items;";
    const m = programModule(body, NS, "body");
    expect(m.source).toBe("export default ({github, linear}) => async () => {const r = await github.list({});\nreturn r.items;\n};\n");
    expect(m.prefixLength).toBe("export default ({github, linear}) => async () => {".length);
    expect(m.lines).toBe(2);
    expect(syntaxErrors(m.source)).toEqual([]);
  });

  it("fails to parse a body in the arrow form, which is how the body form is chosen", () => {
    expect(syntaxErrors(programModule("const a = 1;\nreturn a;", NS, "arrow").source)).not.toEqual([]);
    expect(syntaxErrors(programModule("await github.list({})", NS, "arrow").source)).toEqual([]);
  });

  it("keeps a fenced program's lines", () => {
    const m = programModule("```js\nreturn 1;\n```", NS, "body");
    expect(m.source.split("\n")[1]).toBe("return 1;");
    expect(m.lines).toBe(3);
  });

  it("takes no namespace at all, and refuses a name that is not an identifier", () => {
    expect(programModule("return 1;", [], "body").source.startsWith("export default ({}) => async () => {")).toBe(true);
    expect(() => programModule("return 1;", ["my-server"], "body")).toThrow(/Not a namespace identifier/);
    expect(() => programModule("return 1;", ["a}) => 1; export const x = ({b"], "arrow")).toThrow(TypeError);
  });
});

describe("which form is tried first", () => {
  const order = (code: string) => {
    const { attempts, reported } = programAttempts(code, NS);
    return { tried: attempts.map((a) => a.form), reported };
  };

  it("tries a function as a function first", () => {
    for (const code of ["async () => { return 1; }", "(async () => 1)", "function () { return 1; }", "// note\n/* more */\n  async () => 2"]) {
      expect(order(code)).toEqual({ tried: ["arrow", "body"], reported: "arrow" });
      expect(looksLikeFunction(code)).toBe(true);
    }
  });

  it("tries a body with return as a body first", () => {
    expect(order("const a = await github.x({});\nreturn a;")).toEqual({ tried: ["body", "arrow"], reported: "body" });
    expect(looksLikeFunction("const f = async () => 1;\nreturn f();")).toBe(false);
  });

  it("tries a body without return as an expression first, but reports its syntax error as a body's", () => {
    expect(order("await github.list_issues({})")).toEqual({ tried: ["arrow", "body"], reported: "body" });
    expect(order("const a = 1;\nconsole.log(a);")).toEqual({ tried: ["arrow", "body"], reported: "body" });
  });

  it("decides on the unfenced text", () => {
    expect(order("```js\nasync () => 1\n```")).toEqual({ tried: ["arrow", "body"], reported: "arrow" });
  });
});

describe("positions in the agent's text", () => {
  const program = { prefixLength: 40, lines: 5 };

  it("takes the wrapper's prefix off line 1's columns only", () => {
    expect(agentPosition(program, 1, 45)).toEqual({ line: 1, column: 5 });
    expect(agentPosition(program, 3, 7)).toEqual({ line: 3, column: 7 });
  });

  it("drops a column inside the wrapper, and moves the wrapper's closing line to the agent's last line", () => {
    expect(agentPosition(program, 1, 12)).toEqual({ line: 1 });
    expect(agentPosition(program, 6, 1)).toEqual({ line: 5 });
    expect(agentPosition(program, 0, 1)).toEqual({});
    expect(agentPosition(program, 2, 0)).toEqual({ line: 2 });
  });

  it("reads the first program.js frame of a stack", () => {
    const stack = "Error: boom\n    at fn (runner.js:120:15)\n    at async default (program.js:3:9)\n    at async program.js:7:1\n    at async Runner.run (runner.js:150:20)";
    expect(positionInStack(program, stack)).toEqual({ line: 3, column: 9 });
    expect(positionInStack(program, "TypeError: x\n    at program.js:1:52")).toEqual({ line: 1, column: 12 });
    expect(positionInStack(program, "Error: x\n    at runner.js:1:1")).toEqual({});
    expect(positionInStack(program, "")).toEqual({});
  });
});

describe("startup failures", () => {
  it("reads a syntax error of program.js, with its 0-based column made 1-based", () => {
    expect(startupSyntaxError("Failed to start Worker: Uncaught SyntaxError: Unexpected token ';' at program.js:2:12")).toEqual({
      message: "SyntaxError: Unexpected token ';'",
      line: 2,
      column: 13,
    });
  });

  it("reads one without a column, across lines", () => {
    expect(startupSyntaxError("Failed to start Worker:\nUncaught SyntaxError: Unexpected token ')'\n  at program.js:3")).toEqual({
      message: "SyntaxError: Unexpected token ')'",
      line: 3,
    });
  });

  it("reads nothing else as a syntax error of the program", () => {
    expect(startupSyntaxError("Failed to start Worker: Uncaught SyntaxError: Unexpected token at runner.js:4:1")).toBeUndefined();
    expect(startupSyntaxError("Failed to start Worker: Uncaught ReferenceError: x is not defined at program.js:1:1")).toBeUndefined();
    expect(startupSyntaxError("Network connection lost.")).toBeUndefined();
  });

  it("classifies the platform's CPU limit, workerd's hang detection, and anything else", () => {
    expect(platformFailureCause("Worker exceeded CPU time limit.")).toBe("cpu");
    expect(platformFailureCause("Error: Exceeded CPU limit")).toBe("cpu");
    expect(
      platformFailureCause(
        "The Workers runtime canceled this request because it detected that your Worker's code had hung and would never generate a response. Refer to: https://developers.cloudflare.com/workers/observability/errors/",
      ),
    ).toBe("hung");
    expect(platformFailureCause("Worker exceeded memory limit.")).toBe("sandbox");
    expect(platformFailureCause("Network connection lost.")).toBe("sandbox");
  });
});

describe("the worker code given to the loader", () => {
  const code = childWorkerCode(programModule("return 1;", NS, "body").source, 1000);

  it("has the three modules, the runner as main module", () => {
    expect(code.mainModule).toBe(RUNNER_MODULE);
    expect(Object.keys(code.modules).sort()).toEqual([PRELUDE_MODULE, PROGRAM_MODULE, RUNNER_MODULE].sort());
    expect(code.modules[RUNNER_MODULE]).toBe(RUNNER_SOURCE);
    expect(code.modules[PRELUDE_MODULE]).toBe(preludeSource(1000));
    // The run's CPU limit is written into its clock: no function could set it (the program can import the prelude).
    expect(code.modules[PRELUDE_MODULE]).toContain("const CPU_MS = 1000;");
    expect(code.modules[PROGRAM_MODULE]).toBe(programModule("return 1;", NS, "body").source);
  });

  it("has no bindings and no network, and passes the CPU limit", () => {
    expect("env" in code).toBe(false);
    expect(code.globalOutbound).toBeNull();
    expect(code.limits).toEqual({ cpuMs: 1000 });
    expect(childWorkerCode(programModule("return 1;", NS, "body").source, 0).limits).toBeUndefined();
  });

  it("turns Node compatibility off (the compatibility date turns it on by default)", () => {
    expect(code.compatibilityFlags).toEqual(["no_nodejs_compat", "no_nodejs_compat_v2"]);
    expect(code.compatibilityFlags.some((f) => f === "nodejs_compat" || f === "nodejs_compat_v2")).toBe(false);
  });

  it("has the Worker's compatibility date (wrangler.toml's)", () => {
    const toml = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");
    const dates = [...toml.matchAll(/^\s*compatibility_date\s*=\s*"([^"]+)"/gm)].map((m) => m[1]);
    expect(dates).toEqual([CHILD_COMPATIBILITY_DATE]);
    expect(code.compatibilityDate).toBe(CHILD_COMPATIBILITY_DATE);
  });
});

describe("the runner module", () => {
  it("parses, imports the prelude before the program module, and is a WorkerEntrypoint with one method", () => {
    expect(syntaxErrors(RUNNER_SOURCE)).toEqual([]);
    expect(syntaxErrors(preludeSource(1000))).toEqual([]);
    // ES modules run in the order they are imported: the prelude's captures come before any of the agent's code.
    const imports = [...RUNNER_SOURCE.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports).toEqual(["cloudflare:workers", `./${PRELUDE_MODULE}`, `./${PROGRAM_MODULE}`]);
    expect(preludeSource(1000)).not.toMatch(/^import /m);
    expect(RUNNER_SOURCE).toContain("export default class Runner extends WorkerEntrypoint {");
    const file = ts.createSourceFile("runner.js", RUNNER_SOURCE, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
    const runner = file.statements.filter(ts.isClassDeclaration).find((c) => c.name?.text === "Runner")!;
    expect(runner.members.map((m) => m.name?.getText(file))).toEqual(["run"]);
  });

  it("never treats then, toJSON or Object.prototype's names as tools", () => {
    expect(UNCALLABLE_METHODS).toEqual(expect.arrayContaining(["then", "toJSON", "toString", "valueOf", "constructor"]));
    expect(RUNNER_SOURCE).toContain(JSON.stringify(UNCALLABLE_METHODS));
    // A tool by one of those names keeps a method the program can call.
    expect([...methodNames([{ tool: "then", registryName: "s/then" }, { tool: "get", registryName: "s/get" }]).keys()].sort()).toEqual(["get", "then_"]);
  });
});

describe("readChildReport", () => {
  it("takes the runner's two shapes", () => {
    expect(readChildReport({ ok: true, resultJson: "1", logs: ["a"], logsDropped: 0 })).toEqual({ ok: true, resultJson: "1", logs: ["a"], logsDropped: 0 });
    const failed = { ok: false, cause: "error", name: "TypeError", message: "x", stack: "", logs: [], logsDropped: 2 };
    expect(readChildReport(failed)).toEqual(failed);
  });

  it("refuses anything else", () => {
    for (const bad of [
      null,
      "report",
      { ok: true, resultJson: 1, logs: [], logsDropped: 0 },
      { ok: true, resultJson: "1", logs: [1], logsDropped: 0 },
      { ok: true, resultJson: "1", logs: [], logsDropped: -1 },
      { ok: false, cause: "timeout", name: "E", message: "m", stack: "", logs: [], logsDropped: 0 },
      { ok: false, cause: "error", name: "E", logs: [], logsDropped: 0 },
    ]) {
      expect(readChildReport(bad)).toBeUndefined();
    }
  });
});

describe("LogBudget", () => {
  it("keeps lines while their UTF-8 bytes joined by newlines fit, then drops every later line", () => {
    const budget = new LogBudget(10);
    budget.add("ab"); // 2
    budget.add("é€"); // 1 + 5 = 8 in all
    budget.add("xy"); // 8 + 3 = 11: over
    budget.add("z"); // would fit (10), but output is kept as a prefix
    expect(budget.lines).toEqual(["ab", "é€"]);
    expect(budget.dropped).toBe(2);
  });

  it("fills exactly to the limit", () => {
    const budget = new LogBudget(5);
    budget.add("ab");
    budget.add("cd");
    expect(budget.lines).toEqual(["ab", "cd"]);
    expect(budget.dropped).toBe(0);
  });

  it("counts lines the child dropped, and keeps nothing after them", () => {
    const budget = new LogBudget(100);
    budget.add("first");
    budget.addDropped(3);
    budget.add("later");
    expect(budget.lines).toEqual(["first"]);
    expect(budget.dropped).toBe(4);
  });

  it("keeps no byte with a zero budget (one empty line costs none)", () => {
    const budget = new LogBudget(0);
    budget.add("");
    budget.add("x");
    expect(budget.lines).toEqual([""]);
    expect(budget.dropped).toBe(1);
  });
});
