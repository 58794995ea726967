// The admin API's routes for tool pins (the rug-pull defence): the pinned definitions and changes waiting, and approving
// a changed one.
import { Hono } from "hono";
import { adminAction, isResponse, params, problem, store, type AdminEnv } from "./route-context.ts";
import { PinParam, TeamParam } from "./schemas.ts";

export const pinRoutes = new Hono<AdminEnv>();

pinRoutes.get("/teams/:team/pins", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ pins: await store(c).listPins(p.team) });
});

pinRoutes.post("/teams/:team/pins/:server/:tool/approve", async (c) => {
  const p = params(c, PinParam);
  if (isResponse(p)) return p;
  const approved = await store(c).approvePin(p.team, p.server, p.tool);
  await adminAction(c.env, { action: "pin.approve", team: p.team, target: `${p.server}/${p.tool}`, outcome: approved ? "ok" : "refused" }, c.req.raw);
  return approved ? c.body(null, 204) : problem(c, 404, "not_found", `No change of ${p.server}/${p.tool} is waiting for approval.`);
});
