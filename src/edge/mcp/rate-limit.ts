// The per-caller request limit: one limiter key per team token, or per signed-in member (all their grants and hosts
// share one: a member cannot multiply the limit by registering more clients); the limits are the binding's
// (wrangler.toml).
//
// The binding's verdict is asked for as soon as the caller is known and waited for only just before the request
// goes to the session object, so the router's other checks (protocol, body, session id) run meanwhile instead of
// after it. The answers stay what they were when the verdict came first: an over-limit request is answered 429
// and never reaches the object, whichever later step would have answered it otherwise (docs/security.md).
//
// Before the caller is known, `failedAuthLimit` holds the per-client-address limit on failed authentications
// (address-limit.ts): it guards the team and token steps, which read KV for whatever token is sent.
import type { Context, MiddlewareHandler } from "hono";
import { httpError } from "../../lib/responses.ts";
import type { McpEnv } from "./context.ts";
import { clientAddress, countAddressEvent, overAddressLimit } from "../common/address-limit.ts";

/**
 * Answers `response` instead of what the later steps answered. Assigning `c.res` merges the headers of the answer it
 * replaces into the new one (how a step adds headers to a later step's answer), so the old answer is cleared first:
 * Hono's own way to replace a response after `next()` (its middleware guide, "Modify the Response After Next"). A 429
 * must carry nothing of the answer it overrules.
 */
function answerInstead(c: Context<McpEnv>, response: Response): void {
  c.res = undefined;
  c.res = response;
}

const tooManyRequests = (): Response =>
  httpError("rate_limited", "Too many requests for this token: slow down and retry after the time given in Retry-After.", {
    "Retry-After": "60",
  });

/**
 * Asks the binding about this request → `rateLimit` (the verdict, not waited for). A step after this one that
 * answers before `withinRateLimit` has waited for it (a 4xx, the error handler's 500) is overruled here by the
 * 429 when the token is over its limit.
 */
export const rateLimit: MiddlewareHandler<McpEnv> = async (c, next) => {
  const limiter = c.env.TOKEN_LIMITER;
  if (!limiter) return next();
  const who = c.get("principal");
  const key = who.user ? `${who.team}/u/${who.user.id}` : `${who.team}/${who.tokenId}`;
  const verdict = limiter.limit({ key }).then(({ success }) => success);
  // Whoever waits for it sees a failure; this only keeps one nobody came to wait for from being "unhandled".
  verdict.catch(() => {});
  c.set("rateLimit", verdict);
  await next();
  const unread = c.get("rateLimit");
  if (unread && !(await unread)) {
    answerInstead(c, tooManyRequests());
    c.error = undefined;
  }
};

/** The verdict, taken once (a failure of the binding reaches the error handler from here only): the 429, or nothing. */
export async function overRateLimit(c: Context<McpEnv>): Promise<Response | undefined> {
  const verdict = c.get("rateLimit");
  c.set("rateLimit", undefined);
  return verdict && !(await verdict) ? tooManyRequests() : undefined;
}

/** The verdict, waited for just before the session object is called: 429 with Retry-After over the limit. */
export const withinRateLimit: MiddlewareHandler<McpEnv> = async (c, next) => {
  const over = await overRateLimit(c);
  if (over) return over;
  await next();
};

const tooManyFailures = (retryAfter: number): Response =>
  httpError("rate_limited", "Too many failed authentications from this address: retry after the time given in Retry-After.", {
    "Retry-After": String(retryAfter),
  });

/**
 * An address over its budget of failed authentications is answered 429 before its token is looked at (no read).
 * A request the team or token step refuses counts against that budget when it carried a credential: one without
 * any is how an OAuth client starts (its discovery of RFC 9728 metadata) and costs no read. The event that the
 * binding finds over the budget is answered 429 instead of 401.
 */
export const failedAuthLimit: MiddlewareHandler<McpEnv> = async (c, next) => {
  const address = clientAddress(c.req.raw);
  const waitSeconds = overAddressLimit("failed_auth", address);
  if (waitSeconds) return tooManyFailures(waitSeconds);
  await next();
  // Only the team and token steps answer without a principal (origin, before this step, answers on its own).
  if (c.get("principal") || !c.req.raw.headers.has("authorization")) return;
  const refused = await countAddressEvent(c.env, "failed_auth", address, "mcp");
  if (refused) answerInstead(c, tooManyFailures(refused));
};
