// The admin API's routes for a team's tokens: minted (shown once), listed (never a token), revoked.
import { Hono } from "hono";
import { adminAction, isResponse, jsonBody, params, problem, store, type AdminEnv } from "./route-context.ts";
import { TeamParam, TokenCreateBody, TokenIdParam } from "./schemas.ts";

export const tokenRoutes = new Hono<AdminEnv>();

tokenRoutes.post("/teams/:team/tokens", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c, TokenCreateBody);
  if (isResponse(body)) return body;
  const minted = await store(c).mintToken(p.team, body.value.label, body.value.view);
  await adminAction(c.env, { action: "token.mint", team: p.team, target: minted.id, outcome: "ok" }, c.req.raw);
  return c.json(minted, 201);
});

tokenRoutes.get("/teams/:team/tokens", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ tokens: await store(c).listTokens(p.team) });
});

tokenRoutes.delete("/teams/:team/tokens/:id", async (c) => {
  const p = params(c, TokenIdParam);
  if (isResponse(p)) return p;
  const revoked = await store(c).revokeToken(p.team, p.id);
  await adminAction(c.env, { action: "token.revoke", team: p.team, target: p.id, outcome: revoked ? "ok" : "refused" }, c.req.raw);
  return revoked ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no token ${p.id}.`);
});
