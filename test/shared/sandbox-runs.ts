// What the sandbox executor's tests share (test/workers/code-sandbox*.test.ts): the limits of a test run, a ToolCall
// that records what it got (as the code view's would make the calls), and a run with the checkpoints written in, as
// in sessions.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { runProgram, type Sandbox } from "../../src/views/code/sandbox.ts";
import type { RunReport, SandboxLimits, ToolCall } from "../../src/views/code/run-state.ts";
import { checkpointFinder } from "../../src/views/code/instrument.ts";
import { CHILD_COMPATIBILITY_DATE } from "../../src/views/code/child-modules.ts";

export const LIMITS: SandboxLimits = { wallMs: 1500, cpuMs: 1000, maxCalls: 10, maxLogBytes: 4096, maxResultBytes: 16_384, maxArgBytes: 65_536 };

export interface Received {
  namespace: string;
  method: string;
  input: Record<string, unknown>;
  signal: AbortSignal;
}

/** A ToolCall that records each call and answers with `answer` (an echo of the call unless given). */
export function recorder(answer?: (r: Received) => unknown): { call: ToolCall; received: Received[] } {
  const received: Received[] = [];
  const call: ToolCall = async (namespace, method, input, signal) => {
    const r = { namespace, method, input, signal };
    received.push(r);
    return answer ? answer(r) : { echo: `${namespace}.${method}`, input };
  };
  return { call, received };
}

/** The sandbox as sessions have it: the loader, and the checkpoint finder from the static asset. */
export const sandbox = (): Sandbox => ({ loader: env.LOADER!, checkpoints: checkpointFinder(env.LOADER!, env.ASSETS, CHILD_COMPATIBILITY_DATE) });

export function run(code: string, options: { namespaces?: string[]; call?: ToolCall; limits?: Partial<SandboxLimits>; signal?: AbortSignal } = {}): Promise<RunReport> {
  const { call = recorder().call, namespaces = ["github", "linear"], limits = {}, signal } = options;
  return runProgram(sandbox(), code, namespaces, call, { ...LIMITS, ...limits }, signal);
}

export const result = (report: RunReport): unknown => {
  expect(report.failure).toBeUndefined();
  expect(report.ok).toBe(true);
  return JSON.parse(report.resultJson!);
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
