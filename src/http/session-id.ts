// Session ids that carry a signature over team and token: a foreign id is refused before any object wakes. The MCP
// route's session steps: the signing key must be configured, and the request's session id must be the caller's.
import type { MiddlewareHandler } from "hono";
import { log } from "../log.ts";
import { httpError, sessionNotFound } from "../responses.ts";
import { mac128, macMatches, nonce128 } from "../auth/mac.ts";
import type { McpEnv, Principal } from "./context.ts";

const SESSION_HEADER = "mcp-session-id";

const signedText = (who: Principal, nonce: string): string => `${who.team}\n${who.tokenId}\n${nonce}`;

/** `<nonce>.<signature>`: 128 random bits, then 128 bits of HMAC over team, token id and nonce. */
export async function mintSessionId(secret: string, who: Principal): Promise<string> {
  const nonce = nonce128();
  return `${nonce}.${await mac128(secret, signedText(who, nonce))}`;
}

/** Ids this isolate already verified for a team and token (a hot session is checked by HMAC once). */
const verified = new Set<string>();
const MAX_VERIFIED = 10_000;
const SESSION_ID = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

/** True only for an id minted for this very team and token. */
export async function sessionIdBelongsTo(secret: string, who: Principal, sessionId: string): Promise<boolean> {
  const key = `${secret}\n${who.team}\n${who.tokenId}\n${sessionId}`;
  if (verified.has(key)) return true;
  const m = SESSION_ID.exec(sessionId);
  if (!m) return false;
  const ok = await macMatches(secret, signedText(who, m[1]!), m[2]!);
  if (ok) {
    if (verified.size >= MAX_VERIFIED) verified.clear();
    verified.add(key);
  }
  return ok;
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
