// The operator's dashboard under /dashboard: the sign-in form (what GET /dashboard answers without a session), sign-in
// and sign-out, the team list and each team's overview, audit and upstreams, the stylesheet; mounted here, the members
// and tokens (member-routes.tsx) and the tools and policies pages with their config edits (config-edit-routes.tsx).
// Every answer carries the page headers (page-headers.ts); every change is a POST checked against CSRF (csrf.ts).
import { Hono } from "hono";
import * as z from "zod";
import { TeamName } from "../../config/schema.ts";
import { formatIssues } from "../../config/validate.ts";
import { AuditParams, auditQuery } from "../../team/audit-query.ts";
import { reloadTeamSessions } from "../admin/session-routes.ts";
import { log } from "../../lib/log.ts";
import { checkAdminToken } from "../admin/auth.ts";
import { store } from "../admin/route-context.ts";
import { AUDIT_FILTER_KEYS, AuditPage, type AuditFilters, type AuditPageProps } from "./audit-page.tsx";
import { configEdits } from "./config-edit-routes.tsx";
import { ownOriginForm, sessionForm } from "./csrf.ts";
import { memberRoutes } from "./member-routes.tsx";
import { configuredTeam, dashboardOff, message, noSuchTeam, page, refused, signedIn, type DashboardContext, type DashboardEnv } from "./page-answers.tsx";
import { pageHeaders } from "./page-headers.ts";
import { endSession, sessionSecrets, startSession } from "./session-cookie.ts";
import { SignInPage } from "./sign-in-page.tsx";
import { teamOverview, teamRows } from "./team-figures.ts";
import { TeamListPage } from "./team-list-page.tsx";
import { TeamOverviewPage } from "./team-overview-page.tsx";
import { teamPath } from "./team-list-page.tsx";
import { teamUpstreams } from "./upstream-figures.ts";
import { UpstreamsPage } from "./upstreams-page.tsx";

/** `?reloaded=<n>` after a reload: how many live sessions took it. */
const Reloaded = z.coerce.number().int().min(0);

export const dashboard = new Hono<DashboardEnv>();

dashboard.use("*", pageHeaders);
dashboard.route("/", memberRoutes);

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

dashboard.get("/teams/:team", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? c.redirect("/dashboard", 303);
  const team = TeamName.safeParse(c.req.param("team"));
  const overview = team.success ? await teamOverview(c.env, team.data) : undefined;
  if (!overview) return message(c, 404, "No such team", "No team of that name has a config on this proxy.", who.csrf);
  return page(c, 200, <TeamOverviewPage overview={overview} csrf={who.csrf} />);
});

/**
 * The audit read a page's URL asks for, parsed as the admin API parses its query (empty form fields left out), or
 * the problems with it.
 */
async function auditRead(c: DashboardContext, team: string): Promise<{ filters: AuditFilters; read: AuditPageProps["read"] }> {
  const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value.trim() !== ""));
  const filters: AuditFilters = Object.fromEntries(AUDIT_FILTER_KEYS.flatMap((key) => (raw[key] === undefined ? [] : [[key, raw[key]]])));
  const query = AuditParams.safeParse({ ...raw, format: undefined });
  if (!query.success) return { filters, read: { problems: formatIssues(query.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) } };
  const read = await c.env.TEAM_INDEX.getByName(team).readAudit(team, auditQuery(query.data));
  return { filters, read: { entries: read.entries, next: read.next } };
}

dashboard.get("/teams/:team/audit", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? c.redirect("/dashboard", 303);
  const team = TeamName.safeParse(c.req.param("team"));
  if (!team.success) return message(c, 404, "No such team", "That is not a team's name.", who.csrf);
  const { filters, read } = await auditRead(c, team.data);
  return page(c, "problems" in read ? 400 : 200, <AuditPage team={team.data} filters={filters} read={read} csrf={who.csrf} />);
});

// The same read as NDJSON, for export: a file to save, one entry per line, the next page's cursor in a header.
dashboard.get("/teams/:team/audit.ndjson", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? c.redirect("/dashboard", 303);
  const team = TeamName.safeParse(c.req.param("team"));
  if (!team.success) return message(c, 404, "No such team", "That is not a team's name.", who.csrf);
  const { read } = await auditRead(c, team.data);
  if ("problems" in read) return message(c, 400, "Not exported", `The filters are not valid: ${read.problems.join("; ")}`, who.csrf);
  const headers: Record<string, string> = {
    "content-type": "application/x-ndjson; charset=utf-8",
    "content-disposition": `attachment; filename="${team.data}-audit.ndjson"`,
  };
  if (read.next) headers["x-next-cursor"] = read.next;
  return new Response(read.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""), { headers });
});

dashboard.get("/teams/:team/upstreams", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? c.redirect("/dashboard", 303);
  const team = await configuredTeam(c);
  const upstreams = team === undefined ? undefined : await teamUpstreams(c.env, team);
  if (!upstreams) return noSuchTeam(c, who.csrf);
  const reloaded = Reloaded.safeParse(c.req.query("reloaded"));
  return page(c, 200, <UpstreamsPage upstreams={upstreams} csrf={who.csrf} reloaded={reloaded.success ? reloaded.data : undefined} />);
});

// The admin API's reload (the same function), recorded in the audit trail as its admin action.
dashboard.post("/teams/:team/reload", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? message(c, 403, "Not done", "There is no session: sign in again, then reload.");
  const posted = await sessionForm(c.env, c.req.raw, who.secrets.sessionKey, who.session);
  if (!posted.ok) return refused(c, posted.refusal);
  const team = await configuredTeam(c);
  if (team === undefined) return noSuchTeam(c, who.csrf);
  const sessions = await reloadTeamSessions(c.env, team, c.req.raw);
  return c.redirect(`${teamPath(team)}/upstreams?reloaded=${sessions}`, 303);
});

// The tools and policies pages, and the config edits they post (promote, pin, approve, policies).
dashboard.route("/", configEdits);

dashboard.all("*", (c) => message(c, 404, "Not found", "The dashboard has no such page."));

dashboard.onError((err, c) => {
  log({ event: "unhandled", error: err instanceof Error ? err.name : "unknown" });
  return message(c, 500, "Something failed", "The proxy failed to show this page. Try again; the Worker's logs say more.");
});
