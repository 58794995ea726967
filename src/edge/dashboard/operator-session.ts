// The operator's dashboard session: a cookie that proves its browser signed in with ADMIN_TOKEN, and the CSRF token
// its forms carry. Nothing is stored: the cookie is a handle of the proxy's one signed format (src/auth/signed.ts),
//   __Host-dynmcp-dashboard = <nonce>.dsh1.<payload: expiry>.<mac>
// MACed under SESSION_KEY (the proxy's one MAC key; the handle's tag and its signed first lines keep it apart from
// every other value signed with it) and bound, without carrying it, to a SHA-256 fingerprint of ADMIN_TOKEN: rotating
// ADMIN_TOKEN ends every dashboard session at once, and so does rotating SESSION_KEY. The key is SESSION_KEY rather
// than one taken from ADMIN_TOKEN because an operator chooses ADMIN_TOKEN (it may be short), while SESSION_KEY is the
// deployment's random MAC key: the cookie is as hard to forge as every other signed value, whatever the admin token.
//
// Eight hours, fixed from sign-in (not renewed by use): a working day at the dashboard, and a stolen cookie is worth at
// most that. Signing out clears the browser's cookie; nothing server-side forgets it, so a cookie copied before
// sign-out lives out its hours (rotating ADMIN_TOKEN is the cure, docs/dashboard.md).
//
// The CSRF token is the MAC of the session's nonce under its own first line: bound to the cookie's session, never
// stored, and useless with any other session's cookie (docs/dashboard.md, "CSRF").
import * as z from "zod";
import { expiry, handleFormat, macMatches, macOf, openHandle, sealHandle } from "../../auth/signed.ts";
import { sha256Hex } from "../../lib/bytes.ts";

/** The cookie's name without its `__Host-` prefix (hono's cookie helper adds it and the attributes it demands). */
export const SESSION_COOKIE = "dynmcp-dashboard";
/** Eight hours: see above. */
export const SESSION_TTL_SECONDS = 8 * 3600;

const OPERATOR = handleFormat("dsh1", z.strictObject({ exp: z.int().positive() }));
const SESSION_LINE = "dashboard-operator/v1";
const CSRF_LINE = "dashboard-csrf/v1";

/** The secrets a session is made of: SESSION_KEY signs, ADMIN_TOKEN's fingerprint binds. */
export interface SessionSecrets {
  sessionKey: string;
  adminToken: string;
}

/** An open session: its nonce (what the CSRF token is made from) and when it ends. */
export interface OperatorSession {
  nonce: string;
  expiresAt: Date;
}

const bound = async (secrets: SessionSecrets): Promise<string[]> => [SESSION_LINE, await sha256Hex(`${SESSION_LINE}\n${secrets.adminToken}`)];

/** A new session's cookie value, ending SESSION_TTL_SECONDS from `now`. */
export async function sealOperatorSession(secrets: SessionSecrets, now = Date.now()): Promise<string> {
  const exp = Math.floor(now / 1000) + SESSION_TTL_SECONDS;
  return (await sealHandle(secrets.sessionKey, OPERATOR, await bound(secrets), { exp })).handle;
}

/** The session a cookie value proves, or undefined: none, altered, expired, or signed before either secret changed. */
export async function openOperatorSession(secrets: SessionSecrets, value: string | undefined, now = Date.now()): Promise<OperatorSession | undefined> {
  if (!value) return undefined;
  const opened = await openHandle(secrets.sessionKey, OPERATOR, await bound(secrets), value);
  if (!opened.ok) return undefined;
  const ends = expiry(opened.payload.exp, now);
  return ends.passed ? undefined : { nonce: opened.nonce, expiresAt: ends.at };
}

/** The CSRF token of a session: what its pages put in every form that changes something. */
export const csrfTokenOf = (sessionKey: string, session: OperatorSession): Promise<string> => macOf(sessionKey, CSRF_LINE, session.nonce);

/** Whether a form's CSRF token is the session's own (compared in constant time). */
export const csrfTokenMatches = (sessionKey: string, session: OperatorSession, given: string): Promise<boolean> => macMatches(sessionKey, given, CSRF_LINE, session.nonce);
