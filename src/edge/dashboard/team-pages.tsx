// A team's pages and their actions, written once for both audiences (team-scope.ts): the operator's mount at
// /dashboard/teams/<team> and a team admin's at /t/<team>/dashboard. Routes are relative to that base; the mount's
// resolver has already checked the session and that the team has a config, and put the scope in `c.var.scope`. Every
// change is a POST checked by `c.var.sessionForm()` (own origin, the session's CSRF token) and recorded in the audit
// trail as whoever took it (`actedBy`). A route file of another page registers itself the same way: a function of
// the app, listed in TEAM_ROUTES.
import { Hono } from "hono";
import * as z from "zod";
import { formatIssues } from "../../config/validate.ts";
import { AuditParams, auditQuery } from "../../team/audit-query.ts";
import { reloadTeamSessions } from "../admin/session-routes.ts";
import { AUDIT_FILTER_KEYS, AuditPage, type AuditFilters, type AuditPageProps } from "./audit-page.tsx";
import { configEditRoutes } from "./config-edit-routes.tsx";
import { memberRoutes } from "./member-routes.tsx";
import { message, page, refused, type Status } from "./page-answers.tsx";
import { teamOverview } from "./team-figures.ts";
import { TeamOverviewPage } from "./team-overview-page.tsx";
import type { ResolveScope, TeamPagesApp, TeamPagesContext, TeamPagesEnv } from "./team-scope.ts";
import { teamUpstreams } from "./upstream-figures.ts";
import { UpstreamsPage } from "./upstreams-page.tsx";

/** `?reloaded=<n>` after a reload: how many live sessions took it. */
const Reloaded = z.coerce.number().int().min(0);

/** A page that only says something, in the scope's frame (its sign-out, its way home). */
const say = (c: TeamPagesContext, status: Status, title: string, text: string) => message(c, status, title, text, c.var.scope.csrf, c.var.scope.home);

const noSuchTeam = (c: TeamPagesContext) => say(c, 404, "No such team", "No team of that name has a config on this proxy.");

/** The team's pages that only read: overview, upstreams, audit (and its NDJSON). */
export function teamReadRoutes(app: TeamPagesApp): void {
  app.get("/", async (c) => {
    const overview = await teamOverview(c.env, c.var.scope.team);
    if (!overview) return noSuchTeam(c);
    return page(c, 200, <TeamOverviewPage overview={overview} scope={c.var.scope} />);
  });

  app.get("/audit", async (c) => {
    const { team } = c.var.scope;
    const { filters, read } = await auditRead(c, team);
    return page(c, "problems" in read ? 400 : 200, <AuditPage team={team} filters={filters} read={read} scope={c.var.scope} />);
  });

  // The same read as NDJSON, for export: a file to save, one entry per line, the next page's cursor in a header.
  app.get("/audit.ndjson", async (c) => {
    const { team } = c.var.scope;
    const { read } = await auditRead(c, team);
    if ("problems" in read) return say(c, 400, "Not exported", `The filters are not valid: ${read.problems.join("; ")}`);
    const headers: Record<string, string> = {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="${team}-audit.ndjson"`,
    };
    if (read.next) headers["x-next-cursor"] = read.next;
    return new Response(read.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""), { headers });
  });

  app.get("/upstreams", async (c) => {
    const upstreams = await teamUpstreams(c.env, c.var.scope.team);
    if (!upstreams) return noSuchTeam(c);
    const reloaded = Reloaded.safeParse(c.req.query("reloaded"));
    return page(c, 200, <UpstreamsPage upstreams={upstreams} scope={c.var.scope} reloaded={reloaded.success ? reloaded.data : undefined} />);
  });

}

/**
 * The audit read a page's URL asks for, parsed as the admin API parses its query (empty form fields left out), or
 * the problems with it.
 */
async function auditRead(c: TeamPagesContext, team: string): Promise<{ filters: AuditFilters; read: AuditPageProps["read"] }> {
  const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value.trim() !== ""));
  const filters: AuditFilters = Object.fromEntries(AUDIT_FILTER_KEYS.flatMap((key) => (raw[key] === undefined ? [] : [[key, raw[key]]])));
  const query = AuditParams.safeParse({ ...raw, format: undefined });
  if (!query.success) return { filters, read: { problems: formatIssues(query.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) } };
  const read = await c.env.TEAM_INDEX.getByName(team).readAudit(team, auditQuery(query.data));
  return { filters, read: { entries: read.entries, next: read.next } };
}

/** The team's actions here: a reload of its live sessions (the members page's and the config edits are theirs). */
export function teamActionRoutes(app: TeamPagesApp): void {
  // The admin API's reload (the same function), recorded in the audit trail as its admin action.
  app.post("/reload", async (c) => {
    const posted = await c.var.sessionForm();
    if (!posted.ok) return refused(c, posted.refusal, c.var.scope.home);
    const { scope } = c.var;
    const sessions = await reloadTeamSessions(c.env, scope.team, c.req.raw, scope.by);
    return c.redirect(`${scope.base}/upstreams?reloaded=${sessions}`, 303);
  });
}

/** Every team route, in order; another page's routes join this list. */
export const TEAM_ROUTES: ReadonlyArray<(app: TeamPagesApp) => void> = [teamReadRoutes, teamActionRoutes, memberRoutes, configEditRoutes];

/** A mount of the team's pages: the scope resolved once per request (or its answer given), then the routes. */
export function teamPages(resolve: ResolveScope, routes = TEAM_ROUTES): TeamPagesApp {
  const app = new Hono<TeamPagesEnv>();
  app.use("*", async (c, next) => {
    const resolved = await resolve(c);
    if (resolved instanceof Response) return resolved;
    c.set("scope", resolved.scope);
    c.set("sessionForm", resolved.sessionForm);
    await next();
  });
  for (const register of routes) register(app);
  return app;
}
