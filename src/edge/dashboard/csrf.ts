// The dashboard's CSRF defence, for every route that changes something (sign-out, reloads, mints, revokes, config
// edits): the request must come from the proxy's own origin (`Origin`, which browsers send with every POST), and its
// form must carry the signed-in session's CSRF token (a hidden field the session's pages render; the MAC of the
// cookie's nonce: src/edge/dashboard/operator-session.ts). A site that makes a browser post here can send neither: it
// cannot read a page to learn the token, and the browser names the site's origin. The cookie's SameSite=Strict
// already keeps it off such a post; these two checks hold even where that does not (an older browser, a sibling site).
import { publicOrigin } from "../../lib/public-url.ts";
import type { Env } from "../../lib/env.ts";
import { PAGE_FORM_LIMIT, pageForm } from "../oauth/forms.ts";
import { csrfTokenMatches, type OperatorSession } from "./operator-session.ts";

/** The hidden field's name in every form that changes something. */
export const CSRF_FIELD = "csrf";

/** Why a state-changing request was refused (each gets its own sentence on the 403 or 400 page). */
export type FormRefusal = "foreign_origin" | "csrf_token" | "not_a_form" | "too_large";

export type CheckedForm = { ok: true; form: URLSearchParams } | { ok: false; refusal: FormRefusal };

/** Whether `Origin` names the proxy itself: the request URL's origin, or PUBLIC_URL's when set. A missing one does not. */
export function fromOwnOrigin(env: Pick<Env, "PUBLIC_URL">, request: Request): boolean {
  const origin = request.headers.get("origin");
  if (!origin || origin === "null") return false;
  return origin === new URL(request.url).origin || origin === publicOrigin(env);
}

/** The posted form of a page of this origin (no session yet: the sign-in form). */
export async function ownOriginForm(env: Pick<Env, "PUBLIC_URL">, request: Request, limit = PAGE_FORM_LIMIT): Promise<CheckedForm> {
  if (!fromOwnOrigin(env, request)) return { ok: false, refusal: "foreign_origin" };
  const posted = await pageForm(request, limit);
  return posted.ok ? posted : { ok: false, refusal: posted.problem };
}

/** The posted form of a signed-in session's page: own origin, and the session's CSRF token in it (`limit`: PAGE_FORM_LIMIT unless the form carries a text). */
export async function sessionForm(env: Pick<Env, "PUBLIC_URL">, request: Request, sessionKey: string, session: OperatorSession, limit = PAGE_FORM_LIMIT): Promise<CheckedForm> {
  const posted = await ownOriginForm(env, request, limit);
  if (!posted.ok) return posted;
  const given = posted.form.get(CSRF_FIELD) ?? "";
  return (await csrfTokenMatches(sessionKey, session, given)) ? posted : { ok: false, refusal: "csrf_token" };
}

/** The refusal's status and the sentence its page shows. */
export function refusalAnswer(refusal: FormRefusal, limit = PAGE_FORM_LIMIT): { status: 400 | 403 | 413; message: string } {
  switch (refusal) {
    case "foreign_origin":
      return { status: 403, message: "This form was not sent from the dashboard's own pages (its Origin is another site's, or missing)." };
    case "csrf_token":
      return { status: 403, message: "This form's security token is missing or belongs to another session. Reload the page and try again." };
    case "not_a_form":
      return { status: 400, message: "The request was not sent as the dashboard's forms send it." };
    case "too_large":
      return { status: 413, message: `The form is over ${limit} bytes: it was not sent as the dashboard's forms send it.` };
  }
}
