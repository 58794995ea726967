// A team admin's session at /t/<team>/dashboard: after a sign-in at the team's identity provider, a handle of the
// project's one MAC module (src/auth/signed.ts) `<nonce>.tad1.<payload: user id, expiry>.<mac>` under SESSION_KEY,
// bound to its team (a cookie of team a opens nothing of team b, even copied under b's cookie name), eight hours from
// sign-in, not renewed by use. It proves only who signed in: whether they are still an admin is checked at every
// request against the team's `dashboard_admins` and the user index (team-admin-scope.ts).
//
// On the wire: `__Host-dynmcp-team-admin-<team>`, HttpOnly, Secure, SameSite=Strict, Path=/ (as the operator's:
// session-cookie.ts; `__Host-` demands the whole path), one per team, so an admin of two teams keeps both. Its CSRF
// token is the operator session's kind (operator-session.ts `csrfTokenOf`: the MAC of the session's nonce).
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import * as z from "zod";
import { expiry, handleFormat, openHandle, sealHandle } from "../../auth/signed.ts";
import { USER_ID } from "../../auth/user.ts";
import { SESSION_TTL_SECONDS, type OperatorSession } from "./operator-session.ts";

const TEAM_ADMIN = handleFormat("tad1", z.strictObject({ user: z.string().regex(USER_ID), exp: z.int().positive() }));
const SESSION_LINE = "dashboard-team-admin/v1";
const ATTRIBUTES = { prefix: "host", path: "/", secure: true, httpOnly: true, sameSite: "Strict" } as const;

/** The cookie's name without its `__Host-` prefix (hono's cookie helper adds it). */
export const teamAdminCookieName = (team: string): string => `dynmcp-team-admin-${team}`;

/** An open team admin session: the operator session's fields (its CSRF token is made alike) and the user id. */
export interface TeamAdminSession extends OperatorSession {
  user: string;
}

/** A new session's cookie value for `user` of `team`, ending SESSION_TTL_SECONDS from `now`. */
export async function sealTeamAdminSession(sessionKey: string, team: string, user: string, now = Date.now()): Promise<string> {
  const exp = Math.floor(now / 1000) + SESSION_TTL_SECONDS;
  return (await sealHandle(sessionKey, TEAM_ADMIN, [SESSION_LINE, team], { user, exp })).handle;
}

/** The session a cookie value proves for `team`, or undefined: none, altered, expired, another team's. */
export async function openTeamAdminSession(sessionKey: string, team: string, value: string | undefined, now = Date.now()): Promise<TeamAdminSession | undefined> {
  if (!value) return undefined;
  const opened = await openHandle(sessionKey, TEAM_ADMIN, [SESSION_LINE, team], value);
  if (!opened.ok || !opened.payload.user.startsWith(`${team}.`)) return undefined;
  const ends = expiry(opened.payload.exp, now);
  return ends.passed ? undefined : { nonce: opened.nonce, expiresAt: ends.at, user: opened.payload.user };
}

/** The team admin session the request's cookie proves for `team`, or undefined. */
export const currentTeamAdmin = (c: Context, sessionKey: string, team: string): Promise<TeamAdminSession | undefined> =>
  openTeamAdminSession(sessionKey, team, getCookie(c, teamAdminCookieName(team), "host"));

/** Sets a new session's cookie on the answer. */
export async function startTeamAdminSession(c: Context, sessionKey: string, team: string, user: string): Promise<void> {
  setCookie(c, teamAdminCookieName(team), await sealTeamAdminSession(sessionKey, team, user), { ...ATTRIBUTES, maxAge: SESSION_TTL_SECONDS });
}

/** Tells the browser to forget the team's session cookie. */
export function endTeamAdminSession(c: Context, team: string): void {
  deleteCookie(c, teamAdminCookieName(team), ATTRIBUTES);
}
