// What every dashboard route answers with: a whole page, a page that only says something (an unknown team, a refused
// form, the dashboard off), and the operator's signed-in state. Shared by the operator's routes (dashboard-routes.tsx),
// the team pages (team-pages.tsx) and a team admin's (team-admin-routes.tsx).
import type { Context } from "hono";
import type { JSX } from "hono/jsx/jsx-runtime";
import { kvKeys } from "../../config/keys.ts";
import { TeamName } from "../../config/schema.ts";
import type { Env } from "../../lib/env.ts";
import { refusalAnswer, type FormRefusal } from "./csrf.ts";
import { MessagePage } from "./layout.tsx";
import { csrfTokenOf, type OperatorSession, type SessionSecrets } from "./operator-session.ts";
import { currentSession, sessionSecrets } from "./session-cookie.ts";

export type DashboardEnv = { Bindings: Env };
export type DashboardContext = Context<DashboardEnv>;
export type Status = 200 | 201 | 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 502 | 503;

/** A whole HTML page. */
export async function page(c: Context, status: Status, node: JSX.Element): Promise<Response> {
  return c.html(`<!doctype html>${await node.toString()}`, status);
}

/** A page that only says something; `home` is the dashboard its links go back to (the operator's by default). */
export const message = (c: Context, status: Status, title: string, text: string, csrf?: string, home?: string) =>
  page(c, status, <MessagePage title={title} message={text} csrf={csrf} home={home} />);

export const dashboardOff = (c: Context) => message(c, 503, "Dashboard off", "The dashboard needs the ADMIN_TOKEN and SESSION_KEY secrets: set both.");

export const refused = (c: Context, refusal: FormRefusal, home?: string, limit?: number) => {
  const answer = refusalAnswer(refusal, limit);
  return message(c, answer.status, "Not done", answer.message, undefined, home);
};

/**
 * What a signed-in operator route needs: the secrets, the session and its CSRF token; else the answer to give instead
 * (the dashboard off), or none when nobody is signed in (each route says what that means for it).
 */
export type SignedIn = { secrets: SessionSecrets; session: OperatorSession; csrf: string };

export async function signedIn<E extends DashboardEnv>(c: Context<E>): Promise<SignedIn | { answer: Response | undefined }> {
  const secrets = sessionSecrets(c.env);
  if (!secrets) return { answer: await dashboardOff(c) };
  const session = await currentSession(c, secrets);
  if (!session) return { answer: undefined };
  return { secrets, session, csrf: await csrfTokenOf(secrets.sessionKey, session) };
}

/** The team a path names, when it has a config (a 404 page otherwise, rendered by the caller). */
export async function configuredTeam<E extends DashboardEnv>(c: Context<E>): Promise<string | undefined> {
  const team = TeamName.safeParse(c.req.param("team"));
  return team.success && (await c.env.TEAMS.get(kvKeys.config(team.data))) !== null ? team.data : undefined;
}

export const noSuchTeam = (c: Context, csrf?: string, home?: string) => message(c, 404, "No such team", "No team of that name has a config on this proxy.", csrf, home);
