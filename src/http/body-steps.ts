// The MCP route's body steps (POST only): the size limit, counted on the streamed bytes, then the JSON.
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { httpError } from "../responses.ts";
import { settings } from "../settings.ts";
import type { McpEnv } from "./context.ts";

/**
 * Hono's `bodyLimit`, one per MAX_BODY_BYTES limit (built once per isolate), answering with our 413. Like
 * `readBody` (body.ts, which the admin API keeps) it trusts a Content-Length (HTTP framing delivers exactly that
 * many bytes) and counts the streamed bytes of a body without one, stopping at the limit. It differs from
 * `readBody` only for a request whose Content-Length contradicts its body (a length with no body at all, or one
 * that is not a number), which the runtime's HTTP parser does not let in from the network.
 */
const limiters = new Map<number, MiddlewareHandler>();

function limiterFor(limit: number): MiddlewareHandler {
  let limiter = limiters.get(limit);
  if (!limiter) {
    const message = `Request body too large (the limit is ${limit} bytes).`;
    limiter = bodyLimit({ maxSize: limit, onError: () => httpError("body_too_large", message) });
    limiters.set(limit, limiter);
  }
  return limiter;
}

/** At most MAX_BODY_BYTES (default 4 MiB), counted on the streamed bytes: else 413. */
export const sizeLimit: MiddlewareHandler<McpEnv> = (c, next) => limiterFor(settings(c.env).maxBodyBytes)(c, next);

/**
 * The body must be JSON: it becomes `body` (the text, forwarded as it came) and `message` (parsed); else -32700.
 * Ours, not Hono's `validator("json")`: that one throws an HTTPException on bad JSON (which app.ts's error handler
 * would answer with a 500, not the JSON-RPC parse error) and keeps only the parsed value, while the session object
 * gets the body byte for byte.
 */
export const jsonMessage: MiddlewareHandler<McpEnv> = async (c, next) => {
  const body = await c.req.text();
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return httpError("parse_error", "Parse error: the body is not valid JSON.");
  }
  c.set("body", body);
  c.set("message", message);
  await next();
};
