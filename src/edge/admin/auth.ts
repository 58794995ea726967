// Who may use the admin API: the bearer of the ADMIN_TOKEN Worker secret, compared in constant time; without the
// secret the API is off. Failed attempts are limited per client address, in the same budget as the MCP endpoint's
// (src/edge/common/address-limit.ts): an address over it is answered 429 before its token is compared. Each refusal is
// logged with the address, never with any of the token's text.
import type { Context, Next } from "hono";
import { constantTimeEqual } from "../../auth/signed.ts";
import type { Env } from "../../lib/env.ts";
import { addressLimitAnswer, clientAddress, countAddressEvent, overAddressLimit } from "../common/address-limit.ts";
import { log } from "../../lib/log.ts";
import { REALM } from "../../lib/responses.ts";

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const FAILURES = "failed authentications";

export async function adminAuth(c: Context<{ Bindings: Env }>, next: Next): Promise<Response | void> {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) return c.json({ error: "admin_disabled", message: "The admin API is disabled: set the ADMIN_TOKEN secret." }, 503);
  const address = clientAddress(c.req.raw);
  const waitSeconds = overAddressLimit("failed_auth", address);
  if (waitSeconds) return addressLimitAnswer(waitSeconds, FAILURES);
  const given = BEARER.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  if (constantTimeEqual(given, expected)) return next();
  log({ event: "admin_auth", outcome: "refused", reason: given ? "wrong token" : "no token", address });
  const refused = await countAddressEvent(c.env, "failed_auth", address, "admin");
  if (refused) return addressLimitAnswer(refused, FAILURES);
  return c.json({ error: "unauthorized", message: "A valid admin token is required." }, 401, { "WWW-Authenticate": `Bearer realm="${REALM} admin"` });
}
