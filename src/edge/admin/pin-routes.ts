// The admin API's routes for tool pins (the rug-pull defence): the pinned definitions and changes waiting, and approving
// a changed one.
import { Hono } from "hono";
import type { Env } from "../../lib/env.ts";
import type { AuditPrincipal } from "../../views/audit-entry.ts";
import { adminAction, isResponse, params, problem, store, teamStore, type AdminEnv } from "./route-context.ts";
import { PinParam, TeamParam } from "./schemas.ts";

export const pinRoutes = new Hono<AdminEnv>();

/**
 * A changed definition approved (its new hash pinned) and recorded as the admin action `pin.approve`: the admin API's
 * approve, and the dashboard's (`by` a team admin when one approved it). False when no change of that tool was waiting.
 */
export async function approvePinChange(env: Env, request: Request, team: string, server: string, tool: string, by?: AuditPrincipal): Promise<boolean> {
  const approved = await teamStore(env, request).approvePin(team, server, tool);
  await adminAction(env, { action: "pin.approve", team, target: `${server}/${tool}`, outcome: approved ? "ok" : "refused", ...(by ? { by } : {}) }, request);
  return approved;
}

pinRoutes.get("/teams/:team/pins", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ pins: await store(c).listPins(p.team) });
});

pinRoutes.post("/teams/:team/pins/:server/:tool/approve", async (c) => {
  const p = params(c, PinParam);
  if (isResponse(p)) return p;
  const approved = await approvePinChange(c.env, c.req.raw, p.team, p.server, p.tool);
  return approved ? c.body(null, 204) : problem(c, 404, "not_found", `No change of ${p.server}/${p.tool} is waiting for approval.`);
});
