// Who may use the admin API: the bearer of the ADMIN_TOKEN Worker secret, compared in constant time; without the
// secret the API is off. Failed attempts are limited per client address, in the same budget as the MCP endpoint's
// (src/edge/common/address-limit.ts): an address over it is answered 429 before its token is compared. Each refusal is
// logged with the address, never with any of the token's text. The operator's dashboard signs in through the same
// check (`checkAdminToken`), so both count against one budget.
import type { Context, Next } from "hono";
import { constantTimeEqual } from "../../auth/signed.ts";
import type { Env } from "../../lib/env.ts";
import { addressLimitAnswer, clientAddress, countAddressEvent, overAddressLimit } from "../common/address-limit.ts";
import { log } from "../../lib/log.ts";
import { REALM } from "../../lib/responses.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;
export const FAILED_AUTHENTICATIONS = "failed authentications";

/** A presented admin token's verdict: accepted, the API off (no ADMIN_TOKEN), the address over its budget, or refused. */
export type AdminTokenVerdict = { ok: true } | { ok: false; problem: "disabled" } | { ok: false; problem: "throttled"; retryAfter: number } | { ok: false; problem: "refused" };

/**
 * Checks `given` against ADMIN_TOKEN in constant time, after the address's failed-authentication budget: a refusal is
 * logged (with `route`, never the token) and counted against the address.
 */
export async function checkAdminToken(env: Env, request: Request, given: string, route: string): Promise<AdminTokenVerdict> {
  const expected = env.ADMIN_TOKEN;
  if (!expected) return { ok: false, problem: "disabled" };
  const address = clientAddress(request);
  const waitSeconds = overAddressLimit("failed_auth", address);
  if (waitSeconds) return { ok: false, problem: "throttled", retryAfter: waitSeconds };
  if (constantTimeEqual(given, expected)) return { ok: true };
  log({ event: "admin_auth", outcome: "refused", reason: given ? "wrong token" : "no token", address, route });
  const refused = await countAddressEvent(env, "failed_auth", address, route);
  return refused ? { ok: false, problem: "throttled", retryAfter: refused } : { ok: false, problem: "refused" };
}

export async function adminAuth(c: Context<{ Bindings: Env }>, next: Next): Promise<Response | void> {
  const given = BEARER.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  const verdict = await checkAdminToken(c.env, c.req.raw, given, "admin");
  if (verdict.ok) return next();
  if (verdict.problem === "disabled") return c.json({ error: "admin_disabled", message: "The admin API is disabled: set the ADMIN_TOKEN secret." }, 503);
  if (verdict.problem === "throttled") return addressLimitAnswer(verdict.retryAfter, FAILED_AUTHENTICATIONS);
  return c.json({ error: "unauthorized", message: "A valid admin token is required." }, 401, { "WWW-Authenticate": `Bearer realm="${REALM} admin"` });
}
