// The admin API under /admin: team configs, tokens, secrets, pins, usage, signed-in users with their grants, and
// accounts at OAuth upstreams, behind the ADMIN_TOKEN Worker secret.
import { Hono, type Context } from "hono";
import type { GrantSummary, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { z } from "zod";
import { mintConnectHandle } from "../auth/connect-link.ts";
import { kvKeys } from "../config/keys.ts";
import { loadTeamConfig } from "../config/load.ts";
import { formatIssues, SINGLE_UPSTREAM } from "../config/validate.ts";
import { sessionObjectName, type CredentialInfo, type Env, type SessionRpc, type UsageDay, type UsageFigures } from "../env.ts";
import { addFigures, emptyFigures } from "../session/usage.ts";
import { readLimitedText } from "../request-body.ts";
import { publicBase } from "../http/origin.ts";
import { authorizationServer } from "../oauth/server.ts";
import { log } from "../log.ts";
import { bindingKv } from "../teams/binding-kv.ts";
import { TeamStore, TeamStoreError } from "../teams/store.ts";
import { urlPolicy } from "../security/policy.ts";
import { adminOpenApi } from "./openapi.ts";
import { adminAuth } from "./auth.ts";
import {
  AccountParam,
  GrantParam,
  PinParam,
  SecretParam,
  SecretPutBody,
  TeamParam,
  TokenCreateBody,
  TokenIdParam,
  UpstreamParam,
  UsageQuery,
  UserParam,
  type AccountInfo,
  type ConnectLink,
  type GrantInfo,
  type UsageReport,
  type UsageTotals,
  type UserDetail,
  type UserRemoved,
} from "./schemas.ts";

type AdminContext = Context<{ Bindings: Env }>;

const ADMIN_BODY_LIMIT = 1024 * 1024;
/** Days the usage route answers when `?days=` is not given. */
const USAGE_DEFAULT_DAYS = 30;

const problem = (c: AdminContext, status: 400 | 404 | 409 | 413 | 415 | 503, error: string, message: string, issues?: Array<{ path: string; message: string }>) =>
  c.json({ error, message, ...(issues ? { issues } : {}) }, status);

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
  const text = await readLimitedText(c.req.raw, ADMIN_BODY_LIMIT);
  if (text === undefined) return problem(c, 413, "too_large", `The body is over ${ADMIN_BODY_LIMIT} bytes.`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
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

admin.use("/teams/*", adminAuth);

admin.put("/teams/:team/config", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const body = await jsonBody(c);
  if (isResponse(body)) return body;
  const before = await c.env.TEAMS.get(kvKeys.config(p.team));
  const result = await store(c).putConfig(p.team, body.value);
  log({ event: "admin", action: "config.put", team: p.team, outcome: result.ok ? "ok" : "refused" });
  if (!result.ok) return problem(c, 400, "invalid_config", "The config was not stored.", result.issues);
  const unforgotten = await forgetStaleUpstreamAccounts(c, p.team, before, body.value);
  await listsChanged(c, p.team);
  return c.json({ ok: true as const, warnings: [...result.warnings, ...unforgotten] });
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
  const before = await c.env.TEAMS.get(kvKeys.config(p.team));
  const deleted = await store(c).deleteConfig(p.team);
  log({ event: "admin", action: "config.delete", team: p.team, outcome: deleted ? "ok" : "refused" });
  if (!deleted) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  // A failure is logged: a 204 has no body to name it in, and the config is gone either way.
  await forgetStaleUpstreamAccounts(c, p.team, before, undefined);
  return c.body(null, 204);
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
 * Tells the team's 2026-era listen streams that its lists may have changed (discover_tool's description in tools/list
 * carries the team's catalog). Only this team's streams hear it: they live in its index object. Best-effort: a
 * failure to tell is logged, and the admin's change stands.
 */
async function listsChanged(c: AdminContext, team: string): Promise<void> {
  try {
    await c.env.TEAM_INDEX.getByName(team).listsChanged({ tools: true, prompts: true, resources: true });
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

/** Figures with what they mean: sent, saved, ratio. */
function totalsOf(sum: UsageFigures): z.infer<typeof UsageTotals> {
  const sent = sum.listed + sum.answers.lookups + sum.answers.searches + sum.answers.loads + sum.answers.executes;
  const ratio = sum.direct === 0 ? null : Math.round((sent / sum.direct) * 10_000) / 10_000;
  return { ...sum, sent, saved: sum.direct - sent, ratio };
}

/** The usage answer: each day's figures, their sum and its meaning, and (when asked) each principal's. */
function usageReport(team: string, days: readonly UsageDay[], principals?: Array<{ principal: string; figures: UsageFigures }>): z.infer<typeof UsageReport> {
  const sum = days.reduce((total, d) => addFigures(total, d.figures), emptyFigures());
  return {
    team,
    days: days.map((d) => ({ day: d.day, ...d.figures })),
    totals: totalsOf(sum),
    ...(principals ? { principals: principals.map((p) => ({ principal: p.principal, totals: totalsOf(p.figures) })) } : {}),
  };
}

admin.get("/teams/:team/usage", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const query = UsageQuery.safeParse(c.req.query());
  if (!query.success) return problem(c, 400, "invalid_query", "The query is not valid.", formatIssues(query.error));
  if ((await c.env.TEAMS.get(kvKeys.config(p.team))) === null) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  const index = c.env.TEAM_INDEX.getByName(p.team);
  const window = query.data.days ?? USAGE_DEFAULT_DAYS;
  const [days, principals] = await Promise.all([index.usage(window), query.data.by === "principal" ? index.usageByPrincipal(window) : undefined]);
  return c.json(usageReport(p.team, days, principals));
});

/*
 * Signed-in users and their grants (issue 16, docs/oauth.md 3.4). The user index is TEAMS' (`team/<team>/user/<id>`);
 * grants are the OAuth library's, in OAUTH_KV, reached only through its helpers. User ids carry their team's name
 * (UserParam refuses another team's), and the library keys grants by user id, so these routes see one team's alone.
 * They work whether OAUTH_HOSTS is on or off: an admin may clean up after turning sign-in off.
 */

/** Grants read per listing page. Each listed grant costs one KV read, each revocation a list and deletes: the bounds
 * below keep one admin request well inside a Worker invocation's KV operations. */
const GRANT_PAGE = 100;
/** Grants one answer lists (and one grant revocation looks through for the grant). */
const MAX_GRANTS_LISTED = 300;
/** Grants one user deletion revokes; the answer says when more remain (call again). */
const MAX_GRANTS_REVOKED = 100;
/** Distinct clients whose names one answer looks up. */
const MAX_CLIENT_LOOKUPS = 20;

/** The library's helpers for this team's grants, or the 503 that says why they cannot be reached. */
function grantsApi(c: AdminContext, team: string): OAuthHelpers | Response {
  if (!c.env.OAUTH_KV) {
    return problem(c, 503, "oauth_unavailable", "Grants live in the OAUTH_KV namespace, and this Worker has no OAUTH_KV binding (see wrangler.toml).");
  }
  try {
    return authorizationServer(publicBase(c.env, c.req.raw), team).getOAuthApi(c.env);
  } catch (err) {
    // The library refuses a plain-http issuer off loopback: a deployment reached over http without PUBLIC_URL.
    const reason = err instanceof Error ? err.message : String(err);
    return problem(c, 503, "oauth_unavailable", `Grants cannot be reached: ${reason}. Set PUBLIC_URL to the Worker's https URL.`);
  }
}

/**
 * A user's grants, page after page up to `max` (or until `found` matches one); `complete` is false when more may
 * remain. Oldest first (the library lists a page in no set order).
 */
async function userGrants(api: OAuthHelpers, userId: string, max: number, found?: (g: GrantSummary) => boolean): Promise<{ grants: GrantSummary[]; complete: boolean }> {
  const grants: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(userId, { limit: Math.min(GRANT_PAGE, max - grants.length), ...(cursor === undefined ? {} : { cursor }) });
    grants.push(...page.items);
    cursor = page.cursor;
    if (found && page.items.some(found)) break;
  } while (cursor !== undefined && grants.length < max);
  grants.sort((a, b) => a.createdAt - b.createdAt);
  return { grants, complete: cursor === undefined };
}

const isoTime = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/**
 * Grants as the admin sees them: what the library's summary holds, minus its metadata (nothing there the user record
 * does not say) and, as ever, no token; the client's registered name when the library has it. A client id that is a
 * URL (a metadata-document client) is not looked up: that would fetch its document from the admin's request.
 */
async function grantInfos(api: OAuthHelpers, grants: readonly GrantSummary[]): Promise<GrantInfo[]> {
  const names = new Map<string, string>();
  const lookups = [...new Set(grants.map((g) => g.clientId))].filter((id) => !/^https?:\/\//i.test(id)).slice(0, MAX_CLIENT_LOOKUPS);
  await Promise.all(
    lookups.map(async (id) => {
      try {
        const name = (await api.lookupClient(id))?.clientName;
        if (name) names.set(id, name);
      } catch {
        // A client that cannot be read is listed by its id alone.
      }
    }),
  );
  return grants.map((g) => {
    const clientName = names.get(g.clientId);
    return {
      id: g.id,
      clientId: g.clientId,
      ...(clientName === undefined ? {} : { clientName }),
      scope: g.scope,
      createdAt: isoTime(g.createdAt),
      ...(g.expiresAt === undefined ? {} : { expiresAt: isoTime(g.expiresAt) }),
    };
  });
}

// The user list is the index alone (TEAMS): it needs no OAUTH_KV.
admin.get("/teams/:team/users", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ users: await store(c).listUsers(p.team) });
});

admin.get("/teams/:team/users/:user", async (c) => {
  const p = params(c, UserParam);
  if (isResponse(p)) return p;
  const api = grantsApi(c, p.team);
  if (isResponse(api)) return api;
  const [user, listed] = await Promise.all([store(c).getUser(p.team, p.user), userGrants(api, p.user, MAX_GRANTS_LISTED)]);
  if (user === undefined && listed.grants.length === 0) return problem(c, 404, "not_found", `Team ${p.team} has no user ${p.user}.`);
  const detail: UserDetail = { id: p.user, ...(user === undefined ? {} : { user }), grants: await grantInfos(api, listed.grants), complete: listed.complete };
  return c.json(detail);
});

admin.delete("/teams/:team/users/:user", async (c) => {
  const p = params(c, UserParam);
  if (isResponse(p)) return p;
  const api = grantsApi(c, p.team);
  if (isResponse(api)) return api;
  const listed = await userGrants(api, p.user, MAX_GRANTS_REVOKED);
  // One at a time: each revocation lists and deletes the grant's tokens, and a Worker's concurrent subrequests are few.
  for (const grant of listed.grants) await api.revokeGrant(grant.id, p.user);
  // The user's own accounts at per_user OAuth upstreams (`cred:*:<user>` in the team index), before the index entry,
  // so a revoked user leaves no upstream token behind, whatever happens next.
  const accountsDeleted = await c.env.TEAM_INDEX.getByName(p.team).deleteCredentials(p.team, { account: p.user });
  if (accountsDeleted > 0) log({ event: "admin", action: "upstream.accounts.delete", team: p.team, target: `*/${p.user}`, outcome: "ok" });
  // The index entry goes last, once no grant is left: until then GET …/users/:user still shows what remains.
  const userDeleted = listed.complete ? await store(c).deleteUser(p.team, p.user) : false;
  const found = listed.grants.length > 0 || userDeleted || accountsDeleted > 0;
  log({ event: "admin", action: "user.delete", team: p.team, target: p.user, outcome: found ? "ok" : "refused" });
  if (!found) return problem(c, 404, "not_found", `Team ${p.team} has no user ${p.user}.`);
  const removed: UserRemoved = {
    id: p.user,
    grantsRevoked: listed.grants.length,
    userDeleted,
    complete: listed.complete,
    ...(accountsDeleted > 0 ? { accountsDeleted } : {}),
  };
  return c.json(removed);
});

admin.delete("/teams/:team/users/:user/grants/:grant", async (c) => {
  const p = params(c, GrantParam);
  if (isResponse(p)) return p;
  const api = grantsApi(c, p.team);
  if (isResponse(api)) return api;
  // revokeGrant deletes whatever keys it is given: the grant must first be one the library lists for this user.
  const listed = await userGrants(api, p.user, MAX_GRANTS_LISTED, (g) => g.id === p.grant);
  const owned = listed.grants.some((g) => g.id === p.grant);
  if (owned) await api.revokeGrant(p.grant, p.user);
  log({ event: "admin", action: "grant.revoke", team: p.team, target: `${p.user}/${p.grant}`, outcome: owned ? "ok" : "refused" });
  return owned ? c.body(null, 204) : problem(c, 404, "not_found", `User ${p.user} of team ${p.team} has no grant ${p.grant}.`);
});

/*
 * Accounts at OAuth upstreams (issue 16, docs/oauth.md 3.3 and 3.4). The credentials live sealed in the team's index
 * object (src/session/credential-vault.ts), which answers only what may be shown of them; these routes list, delete and
 * (for a shared entry) hand an admin the link that connects one. The link itself is served by src/oauth/upstream-connect.ts.
 */

/** The prefix of the team's registrations at upstreams' authorization servers in TEAMS (`kvKeys.upstreamClient`). */
const upstreamClientPrefix = (team: string) => kvKeys.upstreamClient(team, "");

const accountInfo = (c: CredentialInfo): AccountInfo => ({
  server: c.server,
  account: c.account,
  issuer: c.issuer,
  resource: c.resource,
  ...(c.scope === undefined ? {} : { scope: c.scope }),
  ...(c.expiresAt === undefined ? {} : { expiresAt: new Date(c.expiresAt).toISOString() }),
  connectedAt: c.connectedAt,
  refreshable: c.refreshable,
});

/** The team's accounts (one server's, or all) as the admin sees them, by server then account. */
async function listAccounts(c: AdminContext, team: string, server?: string): Promise<AccountInfo[]> {
  const listed = await c.env.TEAM_INDEX.getByName(team).listCredentials(team, server);
  const order = (a: CredentialInfo, b: CredentialInfo) => (a.server === b.server ? (a.account < b.account ? -1 : 1) : a.server < b.server ? -1 : 1);
  return listed.sort(order).map(accountInfo);
}

admin.get("/teams/:team/accounts", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ accounts: await listAccounts(c, p.team) });
});

admin.get("/teams/:team/upstreams/:server/accounts", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  return c.json({ accounts: await listAccounts(c, p.team, p.server) });
});

admin.delete("/teams/:team/upstreams/:server/accounts/:account", async (c) => {
  const p = params(c, AccountParam);
  if (isResponse(p)) return p;
  const deleted = await c.env.TEAM_INDEX.getByName(p.team).deleteCredentials(p.team, { server: p.server, account: p.account });
  log({ event: "admin", action: "upstream.account.delete", team: p.team, target: `${p.server}/${p.account}`, outcome: deleted > 0 ? "ok" : "refused" });
  return deleted > 0 ? c.body(null, 204) : problem(c, 404, "not_found", `Server ${p.server} of team ${p.team} has no account ${p.account}.`);
});

/**
 * A connect link for the team's shared account at an OAuth upstream: `<base>/t/<team>/connect/<server>?h=<handle>`,
 * working for ten minutes, for an admin to open in a browser. Only an entry with `auth.mode: "shared"` has such an
 * account; a per_user entry's members get their own link from the tool result of their first call.
 */
admin.post("/teams/:team/upstreams/:server/connect", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  const loaded = await loadTeamConfig(c.env.TEAMS, p.team);
  if (loaded === undefined) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  const entry = loaded.ok ? loaded.config.upstreams.find((u) => u.name === p.server) : undefined;
  if (entry === undefined) {
    const single = loaded.ok && loaded.config.mode === "single" ? ` (a single-MCP config's server is named ${SINGLE_UPSTREAM})` : "";
    return problem(c, 404, "not_found", `Team ${p.team} has no enabled, valid server ${p.server}${single}.`);
  }
  if (entry.auth === undefined) {
    return problem(c, 409, "not_oauth", `Server ${p.server} of team ${p.team} does not sign in with OAuth: give its entry auth: { "type": "oauth", "mode": "shared" } first.`);
  }
  if (entry.auth.mode !== "shared") {
    return problem(
      c,
      409,
      "per_user",
      `Server ${p.server} of team ${p.team} is per_user: each member connects their own account from the link their first call's tool result gives them; there is no shared account to connect.`,
    );
  }
  if (!c.env.SESSION_KEY) return problem(c, 503, "connect_unavailable", "Connect links are signed with SESSION_KEY, which is not set.");
  if (!c.env.SECRETS_KEY) return problem(c, 503, "secrets_disabled", "Upstream accounts are stored encrypted under SECRETS_KEY, which is not set.");
  const { handle, expiresAt } = await mintConnectHandle(c.env.SESSION_KEY, p.team, p.server, "shared");
  log({ event: "admin", action: "upstream.connect", team: p.team, target: p.server, outcome: "ok" });
  const link: ConnectLink = { url: `${publicBase(c.env, c.req.raw)}/t/${p.team}/connect/${p.server}?h=${handle}`, expiresAt: expiresAt.toISOString() };
  return c.json(link);
});

/**
 * Each upstream of a config that signs in with OAuth, by name (single-MCP mode's one as SINGLE_UPSTREAM), with its URL.
 * Read leniently, as stored: a stored config may no longer validate; a disabled entry still counts (it keeps its accounts).
 */
function oauthUpstreams(raw: unknown): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return found;
  const entries = "mcp" in raw ? (raw as { mcp: unknown }).mcp : { [SINGLE_UPSTREAM]: raw };
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) return found;
  for (const [name, entry] of Object.entries(entries)) {
    const { auth, url } = (typeof entry === "object" && entry !== null ? entry : {}) as { auth?: unknown; url?: unknown };
    if (typeof auth === "object" && auth !== null) found.set(name, url);
  }
  return found;
}

/** The OAuth upstreams of `before` that `after` drops, takes `auth` from, or points at another URL (`after` undefined: all). */
function staleOAuthUpstreams(before: unknown, after: unknown): string[] {
  const now = oauthUpstreams(after);
  return [...oauthUpstreams(before)].filter(([name, url]) => !now.has(name) || now.get(name) !== url).map(([name]) => name);
}

/**
 * Deletes what a config change leaves of the team's upstream OAuth (docs/oauth.md 3.3, Deletion): for each OAuth
 * upstream of the stored config (`before`, its JSON text) that the new one (`after`) drops, takes `auth` from or points
 * at another URL, every account's credentials (the team index) and the proxy's registration at its authorization server
 * (TEAMS). When the config is deleted (`after` undefined), every credential and registration the team still holds goes
 * too, also those of servers no config names any more. Each is an `admin` line. Best-effort, like `listsChanged`: the
 * config change stands, and what could not be deleted is logged and answered as warnings.
 */
async function forgetStaleUpstreamAccounts(c: AdminContext, team: string, before: string | null, after: unknown): Promise<string[]> {
  let old: unknown;
  try {
    old = before === null ? undefined : JSON.parse(before);
  } catch {
    old = undefined;
  }
  const index = c.env.TEAM_INDEX.getByName(team);
  const warnings: string[] = [];
  /** Runs one deletion; `act` answers whether it found anything (the `admin` line says so only then). */
  const forget = async (target: string, act: () => Promise<boolean>) => {
    try {
      if (await act()) log({ event: "admin", action: "upstream.forget", team, target, outcome: "ok" });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      log({ event: "admin", action: "upstream.forget", team, target, outcome: "refused" });
      log({ event: "unhandled", error: `upstream accounts of ${team}/${target} not deleted: ${reason}` });
      warnings.push(
        `the connected accounts of ${target} could not be deleted (${reason}): delete them with npm run team -- oauth disconnect ${team} ${target === "*" ? "<server>" : target} <account>`,
      );
    }
  };
  for (const server of staleOAuthUpstreams(old, after)) {
    await forget(server, async () => {
      await Promise.all([index.deleteCredentials(team, { server }), c.env.TEAMS.delete(kvKeys.upstreamClient(team, server))]);
      return true;
    });
  }
  if (after === undefined) {
    await forget("*", async () => {
      const registrations = await c.env.TEAMS.list({ prefix: upstreamClientPrefix(team) });
      const [credentials] = await Promise.all([index.deleteCredentials(team, {}), ...registrations.keys.map((k) => c.env.TEAMS.delete(k.name))]);
      return credentials > 0 || registrations.keys.length > 0;
    });
  }
  return warnings;
}

admin.all("*", (c) => problem(c, 404, "not_found", "No such admin route; see /admin/openapi.json."));
