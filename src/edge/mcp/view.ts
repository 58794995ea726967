// The MCP route's view step: `?view=` on the MCP URL chooses what the session's tools/list shows (src/config/view.ts).
// An unknown value is a 400 that names the views there are; the session object decides what a valid one means
// for a session already under way.
import type { MiddlewareHandler } from "hono";
import { View, VIEW_PARAM } from "../../config/view.ts";
import { httpError } from "../../lib/responses.ts";
import type { McpEnv, Principal } from "./context.ts";

/** `?view=` → `view` (undefined when the URL has none); an unknown or repeated value is a 400. */
export const view: MiddlewareHandler<McpEnv> = async (c, next) => {
  const given = c.req.queries(VIEW_PARAM);
  if (given === undefined) {
    c.set("view", undefined);
    return next();
  }
  if (given.length > 1) return httpError("invalid_view", `Give ?${VIEW_PARAM}= once, not ${given.length} times.`);
  const parsed = View.safeParse(given[0]);
  if (!parsed.success) return httpError("invalid_view", `Invalid ?${VIEW_PARAM}=: ${parsed.error.issues[0]?.message ?? "unknown view"}.`);
  c.set("view", parsed.data);
  await next();
};

/**
 * The view a new session starts with: the URL's, else the token's setting; undefined leaves it to the team config's
 * `view`, else the default (the session object reads the config). A later request names one only through its URL.
 */
export const startingView = (asked: View | undefined, who: Principal): View | undefined => asked ?? who.view;
