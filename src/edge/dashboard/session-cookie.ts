// The operator session's cookie on the wire: `__Host-dynmcp-dashboard`, HttpOnly (no script reads it), Secure and
// `__Host-` (set by this origin alone, over HTTPS or loopback, for the whole path: no sibling subdomain or path can
// plant or shadow it), SameSite=Strict (no other site's link or form brings it along), Path=/, Max-Age eight hours.
// On http://127.0.0.1 and http://localhost under `wrangler dev` Chromium keeps such a cookie, since it counts loopback
// as a secure context (docs/dashboard.md; checked by test/e2e/dashboard-browser.test.ts).
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Env } from "../../lib/env.ts";
import { SESSION_COOKIE, SESSION_TTL_SECONDS, openOperatorSession, sealOperatorSession, type OperatorSession, type SessionSecrets } from "./operator-session.ts";

type DashboardContext = Context<{ Bindings: Env }>;

const ATTRIBUTES = { prefix: "host", path: "/", secure: true, httpOnly: true, sameSite: "Strict" } as const;

/** The secrets the dashboard needs, or undefined when either is unset (the dashboard is then off). */
export function sessionSecrets(env: Pick<Env, "SESSION_KEY" | "ADMIN_TOKEN">): SessionSecrets | undefined {
  return env.SESSION_KEY && env.ADMIN_TOKEN ? { sessionKey: env.SESSION_KEY, adminToken: env.ADMIN_TOKEN } : undefined;
}

/** The session the request's cookie proves, or undefined. */
export const currentSession = <E extends { Bindings: Env }>(c: Context<E>, secrets: SessionSecrets): Promise<OperatorSession | undefined> =>
  openOperatorSession(secrets, getCookie(c, SESSION_COOKIE, "host"));

/** Sets a new session's cookie on the answer. */
export async function startSession(c: DashboardContext, secrets: SessionSecrets): Promise<void> {
  setCookie(c, SESSION_COOKIE, await sealOperatorSession(secrets), { ...ATTRIBUTES, maxAge: SESSION_TTL_SECONDS });
}

/** Tells the browser to forget the session's cookie. */
export function endSession(c: DashboardContext): void {
  deleteCookie(c, SESSION_COOKIE, ATTRIBUTES);
}
