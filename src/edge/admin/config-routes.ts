// The admin API's routes for what a team is configured with: its config (written through config-write.ts, the one path
// the dashboard's edits take too), its identity provider for member sign-in, and its secrets.
import { Hono } from "hono";
import { kvKeys } from "../../config/keys.ts";
import { TeamStoreError } from "../../store/store.ts";
import { writeTeamConfig } from "./config-write.ts";
import { adminAction, isResponse, jsonBody, params, problem, store, type AdminEnv } from "./route-context.ts";
import { SecretParam, SecretPutBody, TeamParam } from "./schemas.ts";
import { forgetStaleUpstreamAccounts } from "./stale-upstream-accounts.ts";

export const configRoutes = new Hono<AdminEnv>();

configRoutes.put("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c);
  if (isResponse(body)) return body;
  const written = await writeTeamConfig(c.env, c.req.raw, p.team, body.value);
  if (!written.ok) return problem(c, 400, "invalid_config", "The config was not stored.", written.problem === "invalid" ? written.issues : []);
  return c.json({ ok: true as const, warnings: written.warnings });
});

configRoutes.put("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c);
  if (isResponse(body)) return body;
  const result = await store(c).putIdp(p.team, body.value);
  await adminAction(c.env, { action: "oauth.put", team: p.team, outcome: result.ok ? "ok" : "refused" }, c.req.raw);
  if (!result.ok) return problem(c, 400, "invalid_idp", "The identity provider was not stored.", result.issues);
  return c.json(result.idp);
});

configRoutes.get("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const idp = await store(c).getIdp(p.team);
  return idp === undefined ? problem(c, 404, "not_found", `Team ${p.team} has no identity provider.`) : c.json(idp);
});

configRoutes.delete("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const deleted = await store(c).deleteIdp(p.team);
  await adminAction(c.env, { action: "oauth.delete", team: p.team, outcome: deleted ? "ok" : "refused" }, c.req.raw);
  return deleted ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no identity provider.`);
});

configRoutes.get("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const config = await store(c).getConfig(p.team);
  return config === undefined ? problem(c, 404, "not_found", `Team ${p.team} has no config.`) : c.json(config as object);
});

configRoutes.delete("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const before = await c.env.TEAMS.get(kvKeys.config(p.team));
  const deleted = await store(c).deleteConfig(p.team);
  await adminAction(c.env, { action: "config.delete", team: p.team, outcome: deleted ? "ok" : "refused" }, c.req.raw);
  if (!deleted) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  // A failure is logged: a 204 has no body to name it in, and the config is gone either way.
  await forgetStaleUpstreamAccounts(c.env, p.team, before, undefined);
  return c.body(null, 204);
});

configRoutes.get("/teams/:team/secrets", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ secrets: await store(c).listSecrets(p.team) });
});

configRoutes.put("/teams/:team/secrets/:name", async (c) => {
  const p = params(c, SecretParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c, SecretPutBody);
  if (isResponse(body)) return body;
  try {
    await store(c).putSecret(p.team, p.name, body.value.value);
  } catch (err) {
    if (err instanceof TeamStoreError) {
      return err.kind === "secrets_disabled" ? problem(c, 503, "secrets_disabled", err.message) : problem(c, 400, err.kind, err.message);
    }
    throw err;
  }
  await adminAction(c.env, { action: "secret.put", team: p.team, target: p.name, outcome: "ok" }, c.req.raw);
  return c.body(null, 204);
});

configRoutes.delete("/teams/:team/secrets/:name", async (c) => {
  const p = params(c, SecretParam);
  if (isResponse(p)) return p;
  const deleted = await store(c).deleteSecret(p.team, p.name);
  await adminAction(c.env, { action: "secret.delete", team: p.team, target: p.name, outcome: deleted ? "ok" : "refused" }, c.req.raw);
  return deleted ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no secret ${p.name}.`);
});
