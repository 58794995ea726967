// The admin API under /admin: team configs, tokens, secrets, pins and usage, behind the ADMIN_TOKEN Worker secret.
import { Hono, type Context } from "hono";
import type { z } from "zod";
import { kvKeys } from "../config/keys.ts";
import { formatIssues } from "../config/validate.ts";
import { sessionObjectName, type Env, type SessionRpc, type UsageDay } from "../env.ts";
import { addFigures, emptyFigures } from "../session/usage.ts";
import { constantTimeEqual } from "../http/auth.ts";
import { readBody } from "../http/body.ts";
import { log } from "../log.ts";
import { REALM } from "../responses.ts";
import { bindingKv } from "../teams/binding-kv.ts";
import { TeamStore, TeamStoreError } from "../teams/store.ts";
import { urlPolicy } from "../security/policy.ts";
import { adminOpenApi } from "./openapi.ts";
import {
  PinParam,
  SecretParam,
  SecretPutBody,
  TeamParam,
  TokenCreateBody,
  TokenIdParam,
  UpstreamParam,
  UsageQuery,
  type UsageReport,
} from "./schemas.ts";

type AdminContext = Context<{ Bindings: Env }>;

const ADMIN_BODY_LIMIT = 1024 * 1024;
/** Days the usage route answers when `?days=` is not given. */
const USAGE_DEFAULT_DAYS = 30;

const problem = (c: AdminContext, status: 400 | 401 | 404 | 413 | 415 | 503, error: string, message: string, issues?: Array<{ path: string; message: string }>) =>
  c.json({ error, message, ...(issues ? { issues } : {}) }, status, status === 401 ? { "WWW-Authenticate": `Bearer realm="${REALM} admin"` } : undefined);

function store(c: AdminContext): TeamStore {
  return new TeamStore(bindingKv(c.env.TEAMS), { secretsKey: c.env.SECRETS_KEY, urlPolicy: urlPolicy(c.env, new URL(c.req.url)) });
}

/** Path parameters, validated by their schema; a bad one is a 400 that says which. */
function params<S extends z.ZodType>(c: AdminContext, schema: S): z.infer<S> | Response {
  const parsed = schema.safeParse(c.req.param());
  if (parsed.success) return parsed.data;
  return problem(c, 400, "invalid_path", "The path is not valid.", formatIssues(parsed.error));
}

/** The JSON body, size-limited, validated by its schema (or only parsed, for configs). */
async function jsonBody<S extends z.ZodType>(c: AdminContext, schema?: S): Promise<{ value: z.infer<S> } | Response> {
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("application/json")) {
    return problem(c, 415, "unsupported_media_type", "Send the body as application/json.");
  }
  const read = await readBody(c.req.raw, ADMIN_BODY_LIMIT);
  if (!read.ok) return problem(c, 413, "too_large", `The body is over ${ADMIN_BODY_LIMIT} bytes.`);
  let raw: unknown;
  try {
    raw = JSON.parse(read.text);
  } catch {
    return problem(c, 400, "invalid_json", "The body is not valid JSON.");
  }
  if (!schema) return { value: raw as z.infer<S> };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  return problem(c, 400, "invalid_body", "The body does not validate.", formatIssues(parsed.error));
}

const isResponse = (v: unknown): v is Response => v instanceof Response;

export const admin = new Hono<{ Bindings: Env }>();

admin.get("/openapi.json", (c) => c.json(adminOpenApi()));

admin.use("/teams/*", async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) return problem(c, 503, "admin_disabled", "The admin API is disabled: set the ADMIN_TOKEN secret.");
  const given = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  if (!constantTimeEqual(given, expected)) return problem(c, 401, "unauthorized", "A valid admin token is required.");
  await next();
});

admin.put("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c);
  if (isResponse(body)) return body;
  const result = await store(c).putConfig(p.team, body.value);
  log({ event: "admin", action: "config.put", team: p.team, outcome: result.ok ? "ok" : "refused" });
  if (!result.ok) return problem(c, 400, "invalid_config", "The config was not stored.", result.issues);
  await listsChanged(c, p.team);
  return c.json({ ok: true as const, warnings: result.warnings });
});

admin.put("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c);
  if (isResponse(body)) return body;
  const result = await store(c).putIdp(p.team, body.value);
  log({ event: "admin", action: "oauth.put", team: p.team, outcome: result.ok ? "ok" : "refused" });
  if (!result.ok) return problem(c, 400, "invalid_idp", "The identity provider was not stored.", result.issues);
  return c.json(result.idp);
});

admin.get("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const idp = await store(c).getIdp(p.team);
  return idp === undefined ? problem(c, 404, "not_found", `Team ${p.team} has no identity provider.`) : c.json(idp);
});

admin.delete("/teams/:team/oauth", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const deleted = await store(c).deleteIdp(p.team);
  log({ event: "admin", action: "oauth.delete", team: p.team, outcome: deleted ? "ok" : "refused" });
  return deleted ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no identity provider.`);
});

admin.get("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const config = await store(c).getConfig(p.team);
  return config === undefined ? problem(c, 404, "not_found", `Team ${p.team} has no config.`) : c.json(config as object);
});

admin.delete("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const deleted = await store(c).deleteConfig(p.team);
  log({ event: "admin", action: "config.delete", team: p.team, outcome: deleted ? "ok" : "refused" });
  return deleted ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no config.`);
});

admin.post("/teams/:team/tokens", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c, TokenCreateBody);
  if (isResponse(body)) return body;
  const minted = await store(c).mintToken(p.team, body.value.label, body.value.view);
  log({ event: "admin", action: "token.mint", team: p.team, target: minted.id, outcome: "ok" });
  return c.json(minted, 201);
});

admin.get("/teams/:team/tokens", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ tokens: await store(c).listTokens(p.team) });
});

admin.delete("/teams/:team/tokens/:id", async (c) => {
  const p = params(c, TokenIdParam);
  if (isResponse(p)) return p;
  const revoked = await store(c).revokeToken(p.team, p.id);
  log({ event: "admin", action: "token.revoke", team: p.team, target: p.id, outcome: revoked ? "ok" : "refused" });
  return revoked ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no token ${p.id}.`);
});

admin.get("/teams/:team/secrets", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ secrets: await store(c).listSecrets(p.team) });
});

admin.put("/teams/:team/secrets/:name", async (c) => {
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
  log({ event: "admin", action: "secret.put", team: p.team, target: p.name, outcome: "ok" });
  return c.body(null, 204);
});

admin.delete("/teams/:team/secrets/:name", async (c) => {
  const p = params(c, SecretParam);
  if (isResponse(p)) return p;
  const deleted = await store(c).deleteSecret(p.team, p.name);
  log({ event: "admin", action: "secret.delete", team: p.team, target: p.name, outcome: deleted ? "ok" : "refused" });
  return deleted ? c.body(null, 204) : problem(c, 404, "not_found", `Team ${p.team} has no secret ${p.name}.`);
});

admin.get("/teams/:team/pins", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ pins: await store(c).listPins(p.team) });
});

admin.post("/teams/:team/pins/:server/:tool/approve", async (c) => {
  const p = params(c, PinParam);
  if (isResponse(p)) return p;
  const approved = await store(c).approvePin(p.team, p.server, p.tool);
  log({ event: "admin", action: "pin.approve", team: p.team, target: `${p.server}/${p.tool}`, outcome: approved ? "ok" : "refused" });
  return approved ? c.body(null, 204) : problem(c, 404, "not_found", `No change of ${p.server}/${p.tool} is waiting for approval.`);
});

/**
 * Tells the team's 2026-era listen streams that its prompt and resource lists may have changed (their tools/list is
 * fixed: the three meta-tools). Only this team's streams hear it: they live in its index object. Best-effort: a
 * failure to tell is logged, and the admin's change stands.
 */
async function listsChanged(c: AdminContext, team: string): Promise<void> {
  try {
    await c.env.TEAM_INDEX.getByName(team).listsChanged({ prompts: true, resources: true });
  } catch (err) {
    log({ event: "unhandled", error: `listen streams of ${team} not told: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/**
 * Runs `act` in every live session of a team, found through the team's index (Durable Objects cannot be
 * listed); how many took it. A session that fails or has ended does not count.
 */
async function inLiveSessions(c: AdminContext, team: string, act: (session: DurableObjectStub<SessionRpc>) => Promise<boolean>): Promise<number> {
  const ids = await c.env.TEAM_INDEX.getByName(team).list();
  const results = await Promise.all(ids.map((id) => act(c.env.SESSIONS.getByName(sessionObjectName(team, id))).catch(() => false)));
  return results.filter(Boolean).length;
}

admin.post("/teams/:team/sessions/reload", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const sessions = await inLiveSessions(c, p.team, (s) => s.reload());
  await listsChanged(c, p.team);
  log({ event: "admin", action: "sessions.reload", team: p.team, outcome: "ok" });
  return c.json({ sessions });
});

admin.post("/teams/:team/upstreams/:server/reconnect", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  const sessions = await inLiveSessions(c, p.team, (s) => s.reconnect(p.server));
  await listsChanged(c, p.team);
  log({ event: "admin", action: "upstream.reconnect", team: p.team, target: p.server, outcome: "ok" });
  return c.json({ sessions });
});

/** The usage answer: each day's figures, their sum, and what the sum means (sent, saved, ratio). */
function usageReport(team: string, days: readonly UsageDay[]): z.infer<typeof UsageReport> {
  const sum = days.reduce((total, d) => addFigures(total, d.figures), emptyFigures());
  const sent = sum.listed + sum.answers.lookups + sum.answers.searches + sum.answers.loads;
  const ratio = sum.direct === 0 ? null : Math.round((sent / sum.direct) * 10_000) / 10_000;
  return { team, days: days.map((d) => ({ day: d.day, ...d.figures })), totals: { ...sum, sent, saved: sum.direct - sent, ratio } };
}

admin.get("/teams/:team/usage", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const query = UsageQuery.safeParse(c.req.query());
  if (!query.success) return problem(c, 400, "invalid_query", "The query is not valid.", formatIssues(query.error));
  if ((await c.env.TEAMS.get(kvKeys.config(p.team))) === null) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  const days = await c.env.TEAM_INDEX.getByName(p.team).usage(query.data.days ?? USAGE_DEFAULT_DAYS);
  return c.json(usageReport(p.team, days));
});

admin.all("*", (c) => problem(c, 404, "not_found", "No such admin route; see /admin/openapi.json."));
