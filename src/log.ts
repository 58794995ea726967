// Structured JSON log lines (Workers observability indexes them). Never argument values, headers or secrets.

export type LogEvent =
  | { event: "admin"; action: string; team: string; target?: string; outcome: "ok" | "refused" }
  | { event: "tool_call"; team: string; session: string; upstream: string; tool: string; ms: number; outcome: "ok" | "tool_error" | "failed" }
  | { event: "load_mcp"; team: string; session: string; upstream: string; ms: number; outcome: "ok" | "failed" | "evicted" }
  | { event: "pin_withheld"; team: string; upstream: string; tool: string }
  | { event: "misconfigured"; reason: string }
  | { event: "unhandled"; error: string };

/** One line per event; a misconfiguration or an unhandled error is logged at the error level. */
export function log(entry: LogEvent): void {
  const line = JSON.stringify({ at: new Date().toISOString(), ...entry });
  if (entry.event === "misconfigured" || entry.event === "unhandled") console.error(line);
  else console.log(line);
}
