// The proxy's own tool failures as results the model can read and act on (protocol failures stay JSON-RPC errors):
// each an `isError` result whose kind travels in `_meta` (src/lib/errors.ts, `ERROR_META_KEY`); and a view's arguments
// checked against its tool's zod input, a mismatch answered as one of them.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { ERROR_META_KEY, ProxyError, toToolResult, type ErrorMeta, type ToolErrorKind } from "../lib/errors.ts";
import { argumentErrors } from "./schemas.ts";

/** A tool failure of the proxy's own, with what else its `_meta` says (a connect link, a program's cause and line). */
export function toolError(kind: ToolErrorKind, text: string, upstream?: string, extra: Pick<ErrorMeta, "connectUrl" | "cause" | "line" | "column"> = {}): CallToolResult {
  const result = toToolResult(new ProxyError(kind, text, upstream));
  Object.assign(result._meta[ERROR_META_KEY], extra);
  return result;
}

export const isResult = (v: unknown): v is CallToolResult =>
  typeof v === "object" && v !== null && "isError" in v && "content" in v;

/** A tool's arguments as its zod input reads them, or the `invalid_arguments` result that says what is wrong. */
export function parseArgs<S extends z.ZodType>(schema: S, raw: unknown, tool: string): z.infer<S> | CallToolResult {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  return toolError("invalid_arguments", `Invalid arguments for ${tool}: ${argumentErrors(parsed.error)}`);
}
