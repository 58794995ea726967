// The MCP route's body steps (POST only): the body read within its size limit, then parsed as JSON.
import type { MiddlewareHandler } from "hono";
import { httpError } from "../../lib/responses.ts";
import { settings } from "../../lib/settings.ts";
import { readLimitedText } from "../../lib/request-body.ts";
import type { McpEnv } from "./context.ts";

/**
 * The body, at most MAX_BODY_BYTES (default 4 MiB) counted on the streamed bytes whatever Content-Length says or
 * omits (src/lib/request-body.ts), becomes `body` (the text, forwarded as it came); else 413, and the rest is not read.
 */
export const sizeLimit: MiddlewareHandler<McpEnv> = async (c, next) => {
  const limit = settings(c.env).maxBodyBytes;
  const body = await readLimitedText(c.req.raw, limit);
  if (body === undefined) return httpError("body_too_large", `Request body too large (the limit is ${limit} bytes).`);
  c.set("body", body);
  await next();
};

/**
 * The body must be JSON: it becomes `message` (parsed); else -32700. Ours, not Hono's `validator("json")`: that one
 * throws an HTTPException on bad JSON (which app.ts's error handler would answer with a 500, not the JSON-RPC parse
 * error) and keeps only the parsed value, while the session object gets the body byte for byte.
 */
export const jsonMessage: MiddlewareHandler<McpEnv> = async (c, next) => {
  let message: unknown;
  try {
    message = JSON.parse(c.var.body ?? "");
  } catch {
    return httpError("parse_error", "Parse error: the body is not valid JSON.");
  }
  c.set("message", message);
  await next();
};
