// The admin API's routes for a team's signed-in members and their grants (docs/oauth.md 3.4): listed, shown (never a
// token), a grant or a whole member revoked (their accounts at OAuth upstreams with them). The user index is TEAMS'
// (`team/<team>/user/<id>`); grants are the OAuth library's, in OAUTH_KV, reached only through its helpers. User ids
// carry their team's name (UserParam refuses another team's), and the library keys grants by user id, so these routes
// see one team's alone. They work whether OAUTH_HOSTS is on or off: an admin may clean up after turning sign-in off.
// The work itself is member-grants.ts's, which the dashboard's members page shares.
import { Hono } from "hono";
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { grantsApi, memberDetail, removeMember, revokeMemberGrant } from "./member-grants.ts";
import { isResponse, params, problem, store, type AdminContext, type AdminEnv } from "./route-context.ts";
import { GrantParam, TeamParam, UserParam } from "./schemas.ts";

export const userRoutes = new Hono<AdminEnv>();

/** The library's helpers for this team's grants, or the 503 that says why they cannot be reached. */
function grantsOrProblem(c: AdminContext, team: string): OAuthHelpers | Response {
  const reached = grantsApi(c.env, c.req.raw, team);
  return reached.ok ? reached.api : problem(c, 503, "oauth_unavailable", reached.reason);
}

// The user list is the index alone (TEAMS): it needs no OAUTH_KV.
userRoutes.get("/teams/:team/users", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ users: await store(c).listUsers(p.team) });
});

userRoutes.get("/teams/:team/users/:user", async (c) => {
  const p = params(c, UserParam);
  if (isResponse(p)) return p;
  const api = grantsOrProblem(c, p.team);
  if (isResponse(api)) return api;
  const detail = await memberDetail(api, store(c), p.team, p.user);
  return detail ? c.json(detail) : problem(c, 404, "not_found", `Team ${p.team} has no user ${p.user}.`);
});

userRoutes.delete("/teams/:team/users/:user", async (c) => {
  const p = params(c, UserParam);
  if (isResponse(p)) return p;
  const api = grantsOrProblem(c, p.team);
  if (isResponse(api)) return api;
  const removed = await removeMember(c.env, api, store(c), p.team, p.user, c.req.raw);
  return removed ? c.json(removed) : problem(c, 404, "not_found", `Team ${p.team} has no user ${p.user}.`);
});

userRoutes.delete("/teams/:team/users/:user/grants/:grant", async (c) => {
  const p = params(c, GrantParam);
  if (isResponse(p)) return p;
  const api = grantsOrProblem(c, p.team);
  if (isResponse(api)) return api;
  const owned = await revokeMemberGrant(c.env, api, p.team, p.user, p.grant, c.req.raw);
  return owned ? c.body(null, 204) : problem(c, 404, "not_found", `User ${p.user} of team ${p.team} has no grant ${p.grant}.`);
});
