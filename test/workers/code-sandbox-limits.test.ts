// Code mode's sandbox executor (src/views/code/sandbox.ts) against the real Worker Loader binding: every limit of a run
// (wall time, CPU kept by the program's checkpoints, calls, argument and result sizes, cancellation) and runs in
// parallel. The ToolCall is a plain function that records what it got, as the code view's would.
import { describe, expect, it } from "vitest";
import { run, recorder, result, sleep } from "../shared/sandbox-runs.ts";
import type { ToolCall } from "../../src/views/code/run-state.ts";
import { ENDLESS_PROGRAMS } from "../shared/endless-programs.ts";

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

describe("the call limits", () => {
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

});

describe("the result's limits, and cancellation", () => {
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
