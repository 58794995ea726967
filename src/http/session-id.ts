// Session ids that carry a signature over team and token: a foreign id is refused before any object wakes. The MCP
// route's session steps: the signing key must be configured, and the request's session id must be the caller's.
import type { MiddlewareHandler } from "hono";
import { base64url } from "../bytes.ts";
import { log } from "../log.ts";
import { httpError, sessionNotFound } from "../responses.ts";
import { constantTimeEqual } from "./auth.ts";
import type { McpEnv, Principal } from "./context.ts";

const SESSION_HEADER = "mcp-session-id";
const encoder = new TextEncoder();

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function signature(secret: string, who: Principal, nonce: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`${who.team}\n${who.tokenId}\n${nonce}`));
  return base64url(new Uint8Array(mac, 0, 16));
}

/** `<nonce>.<signature>`: 128 random bits, then 128 bits of HMAC over team, token id and nonce. */
export async function mintSessionId(secret: string, who: Principal): Promise<string> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  return `${nonce}.${await signature(secret, who, nonce)}`;
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
  const ok = constantTimeEqual(m[2]!, await signature(secret, who, m[1]!));
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
