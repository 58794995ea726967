// The operator's dashboard under /dashboard: the sign-in form (what GET /dashboard answers without a session), sign-in
// and sign-out, the team list, and the stylesheet; each team's pages (team-pages.tsx) mounted at /dashboard/teams/<team>
// for the operator. Every answer carries the page headers (page-headers.ts); every change is a POST checked against
// CSRF (csrf.ts). A team's admins get the same team pages under /t/<team>/dashboard (team-admin-routes.tsx).
import { Hono } from "hono";
import { log } from "../../lib/log.ts";
import { checkAdminToken } from "../admin/auth.ts";
import { store } from "../admin/route-context.ts";
import { ownOriginForm, sessionForm } from "./csrf.ts";
import { configuredTeam, dashboardOff, message, noSuchTeam, page, refused, signedIn, type DashboardEnv } from "./page-answers.tsx";
import { pageHeaders } from "./page-headers.ts";
import { endSession, sessionSecrets, startSession } from "./session-cookie.ts";
import { SignInPage } from "./sign-in-page.tsx";
import { teamRows } from "./team-figures.ts";
import { TeamListPage, teamPath } from "./team-list-page.tsx";
import { teamPages } from "./team-pages.tsx";
import type { ResolveScope } from "./team-scope.ts";

export const dashboard = new Hono<DashboardEnv>();

dashboard.use("*", pageHeaders);

/** The operator's scope on a team's pages: signed in with ADMIN_TOKEN, any team that has a config. */
const operatorScope: ResolveScope = async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? (c.req.method === "GET" ? c.redirect("/dashboard", 303) : message(c, 403, "Not done", "Sign in first: the session has ended."));
  const team = await configuredTeam(c);
  if (team === undefined) return noSuchTeam(c, who.csrf);
  return {
    scope: { team, base: teamPath(team), home: "/dashboard", csrf: who.csrf, viewer: "operator" },
    sessionForm: (limit) => sessionForm(c.env, c.req.raw, who.secrets.sessionKey, who.session, limit),
  };
};

// The stylesheet is a static asset (assets/dashboard/dashboard.css) read through the ASSETS binding: every request
// reaches the Worker first (wrangler.toml), so only this route serves it, with the page headers.
dashboard.get("/dashboard.css", async (c) => {
  const asset = await c.env.ASSETS.fetch(new URL("/dashboard/dashboard.css", c.req.url));
  if (!asset.ok) return message(c, 404, "Not found", "The dashboard's stylesheet is missing from this deployment's assets.");
  return new Response(asset.body, { headers: { "content-type": "text/css; charset=utf-8" } });
});

dashboard.get("/", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? page(c, 200, <SignInPage />);
  return page(c, 200, <TeamListPage rows={await teamRows(c.env, store(c))} csrf={who.csrf} />);
});

dashboard.post("/sign-in", async (c) => {
  const secrets = sessionSecrets(c.env);
  if (!secrets) return dashboardOff(c);
  const posted = await ownOriginForm(c.env, c.req.raw);
  if (!posted.ok) return refused(c, posted.refusal);
  const verdict = await checkAdminToken(c.env, c.req.raw, posted.form.get("token") ?? "", "dashboard");
  if (verdict.ok) {
    await startSession(c, secrets);
    log({ event: "dashboard", action: "sign_in" });
    return c.redirect("/dashboard", 303);
  }
  if (verdict.problem === "throttled") {
    c.header("retry-after", String(verdict.retryAfter));
    return page(c, 429, <SignInPage error="Too many failed sign-ins from this address: wait a minute and try again." />);
  }
  return page(c, 401, <SignInPage error="That is not the admin token." />);
});

dashboard.post("/sign-out", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? message(c, 403, "Not done", "There is no session to sign out of: it has ended already.");
  const posted = await sessionForm(c.env, c.req.raw, who.secrets.sessionKey, who.session);
  if (!posted.ok) return refused(c, posted.refusal);
  endSession(c);
  log({ event: "dashboard", action: "sign_out" });
  return c.redirect("/dashboard", 303);
});

dashboard.route("/teams/:team", teamPages(operatorScope));

dashboard.all("*", (c) => message(c, 404, "Not found", "The dashboard has no such page."));

dashboard.onError((err, c) => {
  log({ event: "unhandled", error: err instanceof Error ? err.name : "unknown" });
  return message(c, 500, "Something failed", "The proxy failed to show this page. Try again; the Worker's logs say more.");
});
