// Session ids that carry a signature over team and token: a foreign id is refused before any object wakes. The MCP
// route's session steps: the signing key must be configured, and the request's session id must be the caller's.
import type { MiddlewareHandler } from "hono";
import * as z from "zod";
import { log } from "../../lib/log.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { httpError, sessionNotFound } from "../../lib/responses.ts";
import { handleFormat, openHandle, sealHandle } from "../../auth/signed.ts";
import { oldSessionId } from "../../auth/legacy-handles.ts";
import type { McpEnv, Principal } from "./context.ts";

const SESSION_HEADER = "mcp-session-id";

/** A session id carries nothing but its nonce; it is bound to the team and the token (src/auth/signed.ts). */
const SESSION_ID = handleFormat("s2", z.undefined());
/** What a signed value is bound to: the team and the token (or grant); the rest of a principal may change. */
type Bound = Pick<Principal, "team" | "tokenId">;
const bound = (who: Bound) => [who.team, who.tokenId];

/** `<nonce>.s2.<mac>`: 128 random bits, then the MAC over team, token id and the id before it. */
export async function mintSessionId(secret: string, who: Bound): Promise<string> {
  return (await sealHandle(secret, SESSION_ID, bound(who), undefined)).handle;
}

/** Ids this isolate already verified for a team and token (a hot session is checked by HMAC once). */
const verified = new BoundedCache<string, true>({ max: 10_000 });

/** True only for an id minted for this very team and token (an id of the form before `s2` too: they live a day). */
export async function sessionIdBelongsTo(secret: string, who: Bound, sessionId: string): Promise<boolean> {
  const key = `${secret}\n${who.team}\n${who.tokenId}\n${sessionId}`;
  if (verified.has(key)) return true;
  const opened = (await oldSessionId(secret, SESSION_ID, who.team, who.tokenId, sessionId)) ?? (await openHandle(secret, SESSION_ID, bound(who), sessionId));
  if (opened.ok) verified.set(key, true);
  return opened.ok;
}

/** The proxy cannot sign session ids without SESSION_KEY: 503 (and an error log line) until its operator sets it. */
export const sessionKey: MiddlewareHandler<McpEnv> = async (c, next) => {
  const secret = c.env.SESSION_KEY;
  if (!secret) {
    log({ event: "misconfigured", reason: "SESSION_KEY is not set" });
    return httpError("not_configured", "The proxy is not configured: its operator must set the SESSION_KEY secret.");
  }
  c.set("sessionKey", secret);
  await next();
};

const isInitialize = (message: unknown): boolean =>
  typeof message === "object" && message !== null && !Array.isArray(message) &&
  (message as { method?: unknown }).method === "initialize";

/**
 * An Mcp-Session-Id must be one minted for this team and token (else 404, no object woken); without one, only
 * `initialize` may come, and gets a new id. Both become `sessionId` and `initialize`.
 */
export const session: MiddlewareHandler<McpEnv> = async (c, next) => {
  const principal = c.get("principal");
  const secret = c.get("sessionKey");
  const sessionId = c.req.raw.headers.get(SESSION_HEADER);
  if (sessionId) {
    if (!(await sessionIdBelongsTo(secret, principal, sessionId))) {
      return sessionNotFound();
    }
    c.set("sessionId", sessionId);
    c.set("initialize", false);
  } else {
    if (!isInitialize(c.get("message"))) {
      return httpError("session_id_required", "Bad Request: Mcp-Session-Id header is required (only initialize may come without one).");
    }
    c.set("sessionId", await mintSessionId(secret, principal));
    c.set("initialize", true);
  }
  await next();
};
