// The per-token request limit: one limiter key per team token; the limits are the binding's (wrangler.toml).
import type { MiddlewareHandler } from "hono";
import { httpError } from "../responses.ts";
import type { McpEnv } from "./context.ts";

export const rateLimit: MiddlewareHandler<McpEnv> = async (c, next) => {
  const limiter = c.env.TOKEN_LIMITER;
  if (limiter) {
    const who = c.get("principal");
    const { success } = await limiter.limit({ key: `${who.team}/${who.tokenId}` });
    if (!success) {
      return httpError("rate_limited", "Too many requests for this token: slow down and retry after the time given in Retry-After.", {
        "Retry-After": "60",
      });
    }
  }
  await next();
};
