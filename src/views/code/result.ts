// What crosses between a program and the tools it calls, and what execute answers: a tool's result as the value a
// program gets (its structured content, else its text, parsed when it is JSON), a tool's failure as the message the
// program's Error carries, and a run's report as the tool result the host reads (the returned JSON and the console
// output; on failure the cause, the program's line and the calls made so far).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { toolError } from "../tool-errors.ts";
import type { RunReport } from "./run-state.ts";

/** Text as the JSON value it spells, or the text itself. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A successful tool result as the program sees it: `structuredContent` when the tool gives one; else the text of a
 * one-text result (an array of them for several), each parsed when it is JSON; a result with other content (images,
 * resources, links) whole, as `{ content }`; nothing at all is null.
 */
export function programValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  if (content.length === 0) return null;
  if (content.every((c) => c.type === "text")) {
    const texts = content.map((c) => parsed((c as { text: string }).text));
    return texts.length === 1 ? texts[0] : texts;
  }
  return { content };
}

/** A failed tool result (the upstream's own or the proxy's) as the message of the Error the program gets. */
export function failureMessage(result: CallToolResult): string {
  const text = (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n")
    .trim();
  return text === "" ? "the tool reported an error without a message" : text;
}

/** The console lines a run printed, as a section of the answer (empty when there are none). */
function consoleSection(report: Pick<RunReport, "logs" | "logsDropped">): string {
  if (report.logs.length === 0 && report.logsDropped === 0) return "";
  const dropped = report.logsDropped > 0 ? [`… ${report.logsDropped} more line${report.logsDropped === 1 ? "" : "s"} past the console limit`] : [];
  return ["\n\nconsole:", ...report.logs, ...dropped].join("\n");
}

/** The calls a failed run made, one line each, so the agent knows what already happened upstream. */
function callsSection(report: Pick<RunReport, "calls">): string {
  if (report.calls.length === 0) return "\n\nNo tool was called.";
  const lines = report.calls.map((c) => `- ${c.path}: ${c.ok ? "ok" : "failed"} (${c.ms} ms)`);
  return [`\n\nTool calls made (${report.calls.length}):`, ...lines].join("\n");
}

/** execute's answer: the returned JSON and the console output, or an isError result naming the cause and the line. */
export function runAnswer(report: RunReport, hint = ""): CallToolResult {
  if (report.ok) {
    return { content: [{ type: "text", text: `${report.resultJson ?? "null"}${consoleSection(report)}` }] };
  }
  const failure = report.failure ?? { cause: "sandbox" as const, message: "the program ended without a result" };
  const where = failure.line === undefined ? "" : ` at line ${failure.line}${failure.column === undefined ? "" : `:${failure.column}`}`;
  // A pause for consent is no failure of the program: its message says what waits and how to go on.
  const head = failure.cause === "approval" ? failure.message : `The program failed (${failure.cause})${where}: ${failure.message}${hint}`;
  const text = `${head}${callsSection(report)}${consoleSection(report)}`;
  return toolError("program_failed", text, undefined, {
    cause: failure.cause,
    ...(failure.line === undefined ? {} : { line: failure.line }),
    ...(failure.column === undefined ? {} : { column: failure.column }),
  });
}
