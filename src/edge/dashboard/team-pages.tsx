// A team's pages and their actions, written once for both audiences (team-scope.ts): the operator's mount at
// /dashboard/teams/<team> and a team admin's at /t/<team>/dashboard. Routes are relative to that base; the mount's
// resolver has already checked the session and that the team has a config, and put the scope in `c.var.scope`. Every
// change is a POST checked by `c.var.sessionForm()` (own origin, the session's CSRF token) and recorded in the audit
// trail as whoever took it (`actedBy`). A route file of another page registers itself the same way: a function of
// the app, listed in TEAM_ROUTES.
import { Hono } from "hono";
import * as z from "zod";
import { loadTokenCounter } from "../../catalog/tokenizer.ts";
import { loadTeamConfig } from "../../config/load.ts";
import { formatIssues, parseConfig, parseStoredConfig } from "../../config/validate.ts";
import { AuditParams, auditQuery } from "../../team/audit-query.ts";
import { settings } from "../../lib/settings.ts";
import { searchTeamCatalog, teamCatalog } from "../../modern/team-catalog.ts";
import { SearchQuery } from "../../views/schemas.ts";
import { reloadTeamSessions } from "../admin/session-routes.ts";
import { adminAction, store } from "../admin/route-context.ts";
import { TokenCreateBody, TokenIdParam } from "../admin/schemas.ts";
import { AUDIT_FILTER_KEYS, AuditPage, type AuditFilters, type AuditPageProps } from "./audit-page.tsx";
import { message, page, refused, type Status } from "./page-answers.tsx";
import { PoliciesPage, type ViewAs } from "./policies-page.tsx";
import { callerView } from "./policy-view.ts";
import { teamOverview } from "./team-figures.ts";
import { TeamOverviewPage } from "./team-overview-page.tsx";
import { actedBy, type ResolveScope, type TeamPagesApp, type TeamPagesContext, type TeamPagesEnv } from "./team-scope.ts";
import { TokensPage, type TokensPageProps } from "./tokens-page.tsx";
import { ToolsPage } from "./tools-page.tsx";
import { teamUpstreams } from "./upstream-figures.ts";
import { UpstreamsPage } from "./upstreams-page.tsx";

/** `?reloaded=<n>` after a reload: how many live sessions took it. */
const Reloaded = z.coerce.number().int().min(0);

/** A page that only says something, in the scope's frame (its sign-out, its way home). */
const say = (c: TeamPagesContext, status: Status, title: string, text: string) => message(c, status, title, text, c.var.scope.csrf, c.var.scope.home);

const noSuchTeam = (c: TeamPagesContext) => say(c, 404, "No such team", "No team of that name has a config on this proxy.");

/** The team's pages that only read: overview, upstreams, tools, policies, audit (and its NDJSON), members and tokens. */
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

  app.get("/members", (c) => tokensPage(c, 200));

  app.get("/upstreams", async (c) => {
    const upstreams = await teamUpstreams(c.env, c.var.scope.team);
    if (!upstreams) return noSuchTeam(c);
    const reloaded = Reloaded.safeParse(c.req.query("reloaded"));
    return page(c, 200, <UpstreamsPage upstreams={upstreams} scope={c.var.scope} reloaded={reloaded.success ? reloaded.data : undefined} />);
  });

  app.get("/tools", async (c) => {
    const { team } = c.var.scope;
    const loaded = await loadTeamConfig(c.env.TEAMS, team);
    if (loaded === undefined) return noSuchTeam(c);
    if (!loaded.ok) return say(c, 200, `Team ${team}: tools`, "The team's stored config no longer validates: it has no catalog to show.");
    // An empty box is no search (the page as first opened), not a search that finds nothing.
    const asked = c.req.query("q");
    const query = asked === undefined || asked.trim() === "" ? undefined : SearchQuery.safeParse(asked);
    if (query && !query.success) return say(c, 400, "Search too long", "A search is at most 1,000 characters, as discover_tool takes it.");
    const catalog = await teamCatalog(c.env.TEAMS, team, loaded.config, await loadTokenCounter(c.env.ASSETS), settings(c.env).sessionTtlSeconds);
    const hits = query ? searchTeamCatalog(catalog, query.data) : [];
    return page(c, 200, <ToolsPage team={team} catalog={catalog} query={query?.data} hits={hits} scope={c.var.scope} />);
  });

  app.get("/policies", async (c) => {
    const { team } = c.var.scope;
    // One read of the stored config serves the check, the text shown and the catalog viewed.
    const raw = await store(c).getConfig(team);
    if (raw === undefined) return noSuchTeam(c);
    // The admin API's own validation, its problems with the policies kept.
    const checked = parseConfig(raw);
    const issues = checked.ok ? [] : checked.issues.filter((i) => i.path.startsWith("policies"));
    const policies = (raw as { policies?: unknown }).policies;
    const text = (key: string) => (c.req.query(key) ?? "").trim().slice(0, 320) || undefined;
    const viewAs: ViewAs = { label: text("label"), email: text("email"), groups: text("groups") };
    const labels = [...new Set((await store(c).listTokens(team)).flatMap((t) => (t.label ? [t.label] : [])))].sort();
    const stored = parseStoredConfig(raw);
    const view = stored.ok ? await callerView(c.env, team, stored.config, viewAs) : undefined;
    const written = policies === undefined ? undefined : JSON.stringify(policies, null, 2);
    return page(c, 200, <PoliciesPage team={team} written={written} issues={issues} labels={labels} viewAs={viewAs} view={view} scope={c.var.scope} />);
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

/** The members-and-tokens page, with what the request just did. */
async function tokensPage(c: TeamPagesContext, status: Status, done: Omit<TokensPageProps, "team" | "tokens" | "scope"> = {}) {
  const { team } = c.var.scope;
  return page(c, status, <TokensPage team={team} tokens={await store(c).listTokens(team)} scope={c.var.scope} {...done} />);
}

/** The team's actions: a reload of its live sessions, a token minted, a token revoked. */
export function teamActionRoutes(app: TeamPagesApp): void {
  // Minting goes through the admin API's body schema, store and audit (an admin action, as `POST .../tokens` records).
  app.post("/tokens", async (c) => {
    const posted = await c.var.sessionForm();
    if (!posted.ok) return refused(c, posted.refusal, c.var.scope.home);
    const { team } = c.var.scope;
    // The form's empty fields are the body's absent keys.
    const filled = (key: string) => posted.form.get(key)?.trim() || undefined;
    const fields = Object.fromEntries(["label", "view"].flatMap((key) => (filled(key) === undefined ? [] : [[key, filled(key)]])));
    const body = TokenCreateBody.safeParse(fields);
    if (!body.success) {
      const problem = formatIssues(body.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
      return tokensPage(c, 400, { problem: `No token minted: ${problem}` });
    }
    const minted = await store(c).mintToken(team, body.data.label, body.data.view);
    await adminAction(c.env, { action: "token.mint", team, target: minted.id, outcome: "ok", ...actedBy(c.var.scope) }, c.req.raw);
    return tokensPage(c, 201, { minted: { id: minted.id, token: minted.token } });
  });

  app.post("/tokens/:id/revoke", async (c) => {
    const posted = await c.var.sessionForm();
    if (!posted.ok) return refused(c, posted.refusal, c.var.scope.home);
    const { team } = c.var.scope;
    const p = TokenIdParam.safeParse({ team, id: c.req.param("id") });
    if (!p.success) return say(c, 404, "No such token", "That is not a token's id.");
    const revoked = await store(c).revokeToken(team, p.data.id);
    await adminAction(c.env, { action: "token.revoke", team, target: p.data.id, outcome: revoked ? "ok" : "refused", ...actedBy(c.var.scope) }, c.req.raw);
    if (!revoked) return say(c, 404, "No such token", `Team ${team} has no token ${p.data.id}.`);
    return tokensPage(c, 200, { revoked: p.data.id });
  });

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
export const TEAM_ROUTES: ReadonlyArray<(app: TeamPagesApp) => void> = [teamReadRoutes, teamActionRoutes];

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
