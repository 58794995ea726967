// The admin API's routes that reach a team's live sessions (through its index object: Durable Objects cannot be
// listed): every session to take the current config, or to reconnect one upstream.
import { Hono } from "hono";
import { sessionObjectName, type SessionRpc } from "../../lib/env.ts";
import { adminAction, isResponse, listsChanged, params, type AdminContext, type AdminEnv } from "./route-context.ts";
import { TeamParam, UpstreamParam } from "./schemas.ts";

export const sessionRoutes = new Hono<AdminEnv>();

/**
 * Runs `act` in every live session of a team, found through the team's index (Durable Objects cannot be
 * listed); how many took it. A session that fails or has ended does not count.
 */
async function inLiveSessions(c: AdminContext, team: string, act: (session: DurableObjectStub<SessionRpc>) => Promise<boolean>): Promise<number> {
  const ids = await c.env.TEAM_INDEX.getByName(team).list();
  const results = await Promise.all(ids.map((id) => act(c.env.SESSIONS.getByName(sessionObjectName(team, id))).catch(() => false)));
  return results.filter(Boolean).length;
}

sessionRoutes.post("/teams/:team/sessions/reload", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const sessions = await inLiveSessions(c, p.team, (s) => s.reload());
  await listsChanged(c, p.team);
  await adminAction(c.env, { action: "sessions.reload", team: p.team, outcome: "ok" }, c.req.raw);
  return c.json({ sessions });
});

sessionRoutes.post("/teams/:team/upstreams/:server/reconnect", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  const sessions = await inLiveSessions(c, p.team, (s) => s.reconnect(p.server));
  await listsChanged(c, p.team);
  await adminAction(c.env, { action: "upstream.reconnect", team: p.team, target: p.server, outcome: "ok" }, c.req.raw);
  return c.json({ sessions });
});
