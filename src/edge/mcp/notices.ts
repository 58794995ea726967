// The one message the router answers itself: `notifications/initialized` tells a server the host is ready, and the
// session uses nothing it carries (its SDK server only calls an `oninitialized` the proxy does not set). Answered
// 202 here, after the session id and the rate limit were checked, it costs no round trip to the session object:
// one of the three requests of every session start.
import type { MiddlewareHandler } from "hono";
import type { McpEnv } from "./context.ts";

export const initializedNotice: MiddlewareHandler<McpEnv> = async (c, next) => {
  const message = c.get("message") as { method?: unknown; id?: unknown } | undefined;
  if (message && !Array.isArray(message) && message.method === "notifications/initialized" && message.id === undefined) {
    return c.body(null, 202);
  }
  await next();
};
