// Runs a code-mode task's program offline, in this process, against its scripted answers, and records the tool calls
// it makes in waves: the calls a program issues before it needs any of their results form one wave, which is the
// model turn those calls would share in the meta and direct views. The waves are those views' scripts, and the calls
// the replay upstreams must receive in every view.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { scriptedResult } from "../../harness/replay-server.ts";
import type { ScriptedResult } from "../../harness/replay-types.ts";
import { codePaths } from "../../src/catalog/code-names.ts";
import type { CodeTask } from "./code-tasks.ts";
import { loadCorpus } from "../../harness/replay-server.ts";

export interface WaveCall {
  server: string;
  tool: string;
  /** `namespace.method` in the code view. */
  path: string;
  args: Record<string, unknown>;
  /** What the program got back (`resultValue`). */
  value: unknown;
}

export interface OfflineRun {
  waves: WaveCall[][];
  result: unknown;
  logs: string[];
}

/**
 * The value a program sees for a tool result, by the code view's rule: the structuredContent if there is one, else
 * the text content parsed as JSON when it parses, else that text. An error result throws its text.
 */
export function resultValue(result: Pick<CallToolResult, "content" | "structuredContent" | "isError"> | ScriptedResult): unknown {
  const items = (result.content ?? []) as Array<{ type: string; text?: unknown }>;
  const text = items.map((c) => (c.type === "text" && typeof c.text === "string" ? c.text : undefined)).find((t) => t !== undefined);
  if (result.isError) throw new Error(text ?? "tool error");
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** JSON with object keys sorted: the same text for equal values, whatever order their keys came in. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** `namespace.method` → server and tool, for every tool of the task's servers (src/catalog/code-names.ts's names). */
export function taskPaths(task: CodeTask): Map<string, { server: string; tool: string }> {
  const servers = task.servers.map((s) => s.name);
  const tools = task.servers.flatMap((s) => loadCorpus(s.file).tools.map((t) => ({ server: s.name, tool: t.name, registryName: `${s.name}/${t.name}` })));
  const paths = new Map<string, { server: string; tool: string }>();
  for (const [path, registryName] of codePaths(servers, tools)) {
    const [server, ...rest] = registryName.split("/");
    paths.set(path, { server: server!, tool: rest.join("/") });
  }
  return paths;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs the program with one namespace object per server; each wave of calls is answered once the program waits on it. */
export async function runOffline(task: CodeTask): Promise<OfflineRun> {
  const paths = taskPaths(task);
  const pending: Array<{ call: WaveCall; settle: () => void }> = [];
  const namespaces: Record<string, Record<string, (args?: Record<string, unknown>) => Promise<unknown>>> = {};
  for (const [path, { server, tool }] of paths) {
    const [namespace, method] = path.split(".") as [string, string];
    const answer = task.servers.find((s) => s.name === server)!.answers[tool];
    (namespaces[namespace] ??= {})[method] = (given = {}) =>
      new Promise((resolve, reject) => {
        // What crosses into the proxy is JSON.
        const args = JSON.parse(JSON.stringify(given)) as Record<string, unknown>;
        const call: WaveCall = { server, tool, path, args, value: undefined };
        pending.push({
          call,
          settle: () => {
            const scripted = answer ?? { content: [{ type: "text", text: JSON.stringify({ tool, arguments: args }) }] };
            try {
              call.value = resultValue(scriptedResult(scripted, args));
              resolve(call.value);
            } catch (err) {
              reject(err as Error);
            }
          },
        });
      });
  }
  const logs: string[] = [];
  const sandboxConsole = { log: (...parts: unknown[]) => logs.push(parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ")) };
  const names = Object.keys(namespaces);
  // The program text is this project's own (bench/lib/code-tasks.ts), run here as the sandbox would run it.
  const start = new Function(...names, "console", `return (${task.program}\n)();`) as (...args: unknown[]) => Promise<unknown>;
  let settled = false;
  let result: unknown;
  let failure: unknown;
  const done = Promise.resolve()
    .then(() => start(...names.map((n) => namespaces[n]), sandboxConsole))
    .then(
      (value) => {
        settled = true;
        result = value;
      },
      (err: unknown) => {
        settled = true;
        failure = err;
      },
    );
  const waves: WaveCall[][] = [];
  for (let guard = 0; guard < 1000; guard++) {
    await tick();
    if (pending.length > 0) {
      const wave = pending.splice(0);
      waves.push(wave.map((w) => w.call));
      for (const w of wave) w.settle();
    } else if (settled) {
      break;
    }
  }
  await done;
  if (failure !== undefined) throw new Error(`${task.id}: the program failed offline: ${failure instanceof Error ? failure.message : String(failure)}`);
  if (!settled) throw new Error(`${task.id}: the program did not finish offline`);
  return { waves, result: JSON.parse(JSON.stringify(result ?? null)) as unknown, logs };
}

/** Strings and numbers of a value that a JSON rendering of it contains as they are (no character JSON escapes). */
export function plainLeaves(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(plainLeaves);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(plainLeaves);
  if (typeof value === "number") return [String(value)];
  if (typeof value === "string" && !/["\\\u0000-\u001f\u007f-\uffff]/.test(value)) return [value];
  return [];
}
