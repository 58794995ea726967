// A team's dashboard for its own admins, /t/<team>/dashboard (docs/dashboard.md, "Team admins"):
//   GET  /t/<team>/dashboard            without a session: a button to sign in at the team's identity provider
//   POST /t/<team>/dashboard/sign-in    (own origin) off to the provider, state `d.<handle>` (src/auth/flow-state.ts)
//   GET  /t/<team>/oauth/callback       the provider's answer (handed on by src/edge/oauth/authorize.ts): the flow
//                                       checked, the claims, the team's admission rule, the user index, then
//                                       `dashboard_admins`: the session cookie and a page that goes on to the overview,
//                                       or a 403 page for a member who is not an admin
//   POST /t/<team>/dashboard/sign-out   (own origin, CSRF)
//   /t/<team>/dashboard/…               the team's pages (team-pages.tsx), checked at every request (team-admin-scope.ts)
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { mintFlowState, isFlowState, DASHBOARD_STATE_PREFIX } from "../../auth/flow-state.ts";
import { admitMember, memberClaims, userIdFor } from "../../auth/user.ts";
import { TeamName } from "../../config/schema.ts";
import { log } from "../../lib/log.ts";
import { publicBase } from "../../lib/public-url.ts";
import { settings } from "../../lib/settings.ts";
import { addressLimitAnswer, clientAddress, countAddressEvent, overAddressLimit } from "../common/address-limit.ts";
import { teamExists } from "../common/team-view.ts";
import { clearFlowCookie, flowCookie, fromFlowBrowser } from "../oauth/member-cookie.ts";
import { SignInError, finishSignIn, newSignIn, signInUrl, teamProvider, teamStore } from "../oauth/sign-in.ts";
import { ownOriginForm, sessionForm } from "./csrf.ts";
import { configuredTeam, message, noSuchTeam, page, refused, type DashboardEnv, type Status } from "./page-answers.tsx";
import { FORM_TARGET_HEADER, pageHeaders } from "./page-headers.ts";
import { TeamAdminSignInPage, TeamAdminSignedInPage } from "./team-admin-pages.tsx";
import { listedAdmin, teamAdminBase, teamAdminScope } from "./team-admin-scope.ts";
import { currentTeamAdmin, endTeamAdminSession, startTeamAdminSession } from "./team-admin-session.ts";
import { teamPages } from "./team-pages.tsx";

const BASE = "/t/:team/dashboard";
const FLOW_TTL_MS = 10 * 60_000;

export const teamAdminDashboard = new Hono<DashboardEnv>();

/** Starting a sign-in stores a flow in the team's index: it counts against the address's budget, as the OAuth routes'. */
const addressLimit: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  const address = clientAddress(c.req.raw);
  const waitSeconds = overAddressLimit("oauth", address) ?? (await countAddressEvent(c.env, "oauth", address, "dashboard"));
  if (waitSeconds) return addressLimitAnswer(waitSeconds, "sign-in requests");
  await next();
};

// `${BASE}/*` covers the base itself too (registered once: twice would undo a page's own form-action).
teamAdminDashboard.use(`${BASE}/*`, pageHeaders);
teamAdminDashboard.use(`${BASE}/sign-in`, addressLimit);
teamAdminDashboard.use("/t/:team/oauth/callback", pageHeaders);

/** What GET /t/<team>/dashboard answers without a session: the button, named after the team's provider. */
async function signInPage<E extends DashboardEnv>(c: Context<E>, team: string): Promise<Response> {
  const idp = await teamStore(c.env).getIdp(team);
  const base = teamAdminBase(team);
  if (!idp) return message(c, 200, `Team ${team}`, `Sign-in is not set up for team ${team}: the operator configures its identity provider (npm run team -- oauth set).`, undefined, base);
  const issuer = new URL(idp.issuer);
  // The button's POST is answered with a redirect to the provider: the page's form-action must allow it.
  c.header(FORM_TARGET_HEADER, issuer.origin);
  return page(c, 200, <TeamAdminSignInPage team={team} base={base} provider={issuer.host} />);
}

teamAdminDashboard.post(`${BASE}/sign-in`, async (c) => {
  const team = await configuredTeam(c);
  if (team === undefined) return noSuchTeam(c);
  const base = teamAdminBase(team);
  const key = c.env.SESSION_KEY;
  if (!key) return message(c, 503, "Dashboard off", "A team's dashboard needs the SESSION_KEY secret: the operator sets it.", undefined, base);
  const posted = await ownOriginForm(c.env, c.req.raw);
  if (!posted.ok) return refused(c, posted.refusal, base);
  const provider = await teamProvider(c.env, teamStore(c.env), team, publicBase(c.env, c.req.raw));
  if ("reason" in provider) return message(c, 400, "Cannot sign you in", `${provider.reason}.`, undefined, base);
  const state = await mintFlowState(key, "dashboard-sign-in", team, DASHBOARD_STATE_PREFIX);
  const saved = newSignIn();
  await c.env.TEAM_INDEX.getByName(team).beginDashboardSignIn(team, state, { ...saved, expiresAt: Date.now() + FLOW_TTL_MS });
  let location: string;
  try {
    location = await signInUrl(provider, state, saved);
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    log({ event: "sign_in", team, outcome: "failed", reason: `dashboard sign-in: ${err.message}` });
    return message(c, 502, "Cannot sign you in", `The team's identity provider cannot be used: ${err.message}.`, undefined, base);
  }
  c.header("set-cookie", await flowCookie(key, state), { append: true });
  return c.redirect(location, 302);
});

/**
 * The provider's answer to a dashboard sign-in (its state starts `d.`): the flow checked (this browser, once, in
 * time), the claims and the team's admission rule, the user index, then `dashboard_admins`.
 */
teamAdminDashboard.get("/t/:team/oauth/callback", async (c) => {
  const named = TeamName.safeParse(c.req.param("team"));
  const key = c.env.SESSION_KEY;
  if (!named.success || !key) return message(c, 404, "Not found", "There is no such sign-in.");
  const team = named.data;
  const base = teamAdminBase(team);
  const url = new URL(c.req.url);
  const state = url.searchParams.get("state") ?? "";
  c.header("set-cookie", await clearFlowCookie(key, state), { append: true });
  const stop = (status: Status, text: string, outcome: "refused" | "failed", user?: string) => {
    log({ event: "sign_in", team, outcome, ...(user === undefined ? {} : { user }), reason: `dashboard sign-in: ${text}` });
    return message(c, status, "Cannot sign you in", text, undefined, base);
  };
  // The team's index is woken only for a state this proxy minted for this team, which still exists.
  const minted = (await isFlowState(key, "dashboard-sign-in", team, state)) && (await teamExists(c.env.TEAMS, team, settings(c.env).tokenCacheSeconds));
  const saved = minted ? await c.env.TEAM_INDEX.getByName(team).takeDashboardSignIn(team, state) : undefined;
  if (!saved) return stop(400, "This sign-in has expired or was already used. Sign in again from the team's dashboard.", "refused");
  if (!(await fromFlowBrowser(key, c.req.header("cookie"), state))) return stop(400, "This sign-in was started in another browser. Sign in again in the browser you use.", "refused");
  if (url.searchParams.has("error")) return stop(400, "The sign-in at the team's identity provider was cancelled or refused.", "refused");
  const store = teamStore(c.env);
  const provider = await teamProvider(c.env, store, team, publicBase(c.env, c.req.raw));
  if ("reason" in provider) return stop(400, `${provider.reason}.`, "failed");
  let claims;
  try {
    ({ claims } = await finishSignIn(provider, url, saved));
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    return stop(502, `Signing in at the team's identity provider failed: ${err.message}.`, "failed");
  }
  const user = await userIdFor(team, claims.iss, claims.sub);
  const member = memberClaims(provider.idp, claims);
  const admission = admitMember(provider.idp, member);
  if (!admission.ok) return stop(403, `${admission.reason}.`, "refused", user);
  await store.recordUser(team, user, { sub: claims.sub, issuer: claims.iss, ...(member.email === undefined ? {} : { email: member.email }), emailVerified: member.emailVerified, groups: member.groups });
  if (!listedAdmin(await store.getConfig(team), user, member)) {
    return stop(403, `You are a member of team ${team}, but not one of its dashboard admins: the team's config (dashboard_admins) does not name this account.`, "refused", user);
  }
  await startTeamAdminSession(c, key, team, user);
  log({ event: "dashboard", action: "sign_in", team, user });
  return page(c, 200, <TeamAdminSignedInPage team={team} base={base} />);
});

teamAdminDashboard.post(`${BASE}/sign-out`, async (c) => {
  const team = await configuredTeam(c);
  const key = c.env.SESSION_KEY;
  if (team === undefined || !key) return noSuchTeam(c);
  const base = teamAdminBase(team);
  const session = await currentTeamAdmin(c, key, team);
  if (!session) return message(c, 403, "Not done", "There is no session to sign out of: it has ended already.", undefined, base);
  const posted = await sessionForm(c.env, c.req.raw, key, session);
  if (!posted.ok) return refused(c, posted.refusal, base);
  endTeamAdminSession(c, team);
  log({ event: "dashboard", action: "sign_out", team, user: session.user });
  return c.redirect(base, 303);
});

teamAdminDashboard.route(BASE, teamPages(teamAdminScope(signInPage)));

teamAdminDashboard.all(`${BASE}/*`, (c) => message(c, 404, "Not found", "The dashboard has no such page."));

teamAdminDashboard.onError((err, c) => {
  log({ event: "unhandled", error: err instanceof Error ? err.name : "unknown" });
  return message(c, 500, "Something failed", "The proxy failed to show this page. Try again; the Worker's logs say more.");
});
