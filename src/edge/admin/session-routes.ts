// The admin API's routes that reach a team's live sessions (through its index object: Durable Objects cannot be
// listed): every session to take the current config, or to reconnect one upstream.
import { Hono } from "hono";
import { sessionObjectName, type Env, type SessionRpc } from "../../lib/env.ts";
import { adminAction, isResponse, listsChanged, params, type AdminEnv } from "./route-context.ts";
import { TeamParam, UpstreamParam } from "./schemas.ts";
import type { AuditPrincipal } from "../../views/audit-entry.ts";

export const sessionRoutes = new Hono<AdminEnv>();

/**
 * Runs `act` in every live session of a team, found through the team's index (Durable Objects cannot be
 * listed); how many took it. A session that fails or has ended does not count.
 */
async function inLiveSessions(env: Env, team: string, act: (session: DurableObjectStub<SessionRpc>) => Promise<boolean>): Promise<number> {
  const ids = await env.TEAM_INDEX.getByName(team).list();
  const results = await Promise.all(ids.map((id) => act(env.SESSIONS.getByName(sessionObjectName(team, id))).catch(() => false)));
  return results.filter(Boolean).length;
}

/**
 * Every live session of the team to take the current config at its next request, its 2026 listen streams told, and
 * the admin action in the audit trail (`by` a team admin, else the admin API): the admin API's reload, and the
 * dashboard's. How many sessions took it.
 */
export async function reloadTeamSessions(env: Env, team: string, request: Request, by?: AuditPrincipal): Promise<number> {
  const sessions = await inLiveSessions(env, team, (s) => s.reload());
  await listsChanged(env, team);
  await adminAction(env, { action: "sessions.reload", team, outcome: "ok", ...(by ? { by } : {}) }, request);
  return sessions;
}

sessionRoutes.post("/teams/:team/sessions/reload", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ sessions: await reloadTeamSessions(c.env, p.team, c.req.raw) });
});

sessionRoutes.post("/teams/:team/upstreams/:server/reconnect", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  const sessions = await inLiveSessions(c.env, p.team, (s) => s.reconnect(p.server));
  await listsChanged(c.env, p.team);
  await adminAction(c.env, { action: "upstream.reconnect", team: p.team, target: p.server, outcome: "ok" }, c.req.raw);
  return c.json({ sessions });
});
