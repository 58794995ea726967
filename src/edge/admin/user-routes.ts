// The admin API's routes for a team's signed-in members and their grants (docs/oauth.md 3.4): listed, shown (never a
// token), a grant or a whole member revoked (their accounts at OAuth upstreams with them). The user index is TEAMS'
// (`team/<team>/user/<id>`); grants are the OAuth library's, in OAUTH_KV, reached only through its helpers. User ids
// carry their team's name (UserParam refuses another team's), and the library keys grants by user id, so these routes
// see one team's alone. They work whether OAUTH_HOSTS is on or off: an admin may clean up after turning sign-in off.
import { Hono } from "hono";
import type { GrantSummary, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { authorizationServer } from "../oauth/server.ts";
import { publicBase } from "../../lib/public-url.ts";
import { adminAction, isResponse, params, problem, store, type AdminContext, type AdminEnv } from "./route-context.ts";
import { GrantParam, TeamParam, UserParam, type GrantInfo, type UserDetail, type UserRemoved } from "./schemas.ts";

export const userRoutes = new Hono<AdminEnv>();

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
userRoutes.get("/teams/:team/users", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ users: await store(c).listUsers(p.team) });
});

userRoutes.get("/teams/:team/users/:user", async (c) => {
  const p = params(c, UserParam);
  if (isResponse(p)) return p;
  const api = grantsApi(c, p.team);
  if (isResponse(api)) return api;
  const [user, listed] = await Promise.all([store(c).getUser(p.team, p.user), userGrants(api, p.user, MAX_GRANTS_LISTED)]);
  if (user === undefined && listed.grants.length === 0) return problem(c, 404, "not_found", `Team ${p.team} has no user ${p.user}.`);
  const detail: UserDetail = { id: p.user, ...(user === undefined ? {} : { user }), grants: await grantInfos(api, listed.grants), complete: listed.complete };
  return c.json(detail);
});

userRoutes.delete("/teams/:team/users/:user", async (c) => {
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
  if (accountsDeleted > 0) await adminAction(c.env, { action: "upstream.accounts.delete", team: p.team, target: `*/${p.user}`, outcome: "ok" }, c.req.raw);
  // The index entry goes last, once no grant is left: until then GET …/users/:user still shows what remains.
  const userDeleted = listed.complete ? await store(c).deleteUser(p.team, p.user) : false;
  const found = listed.grants.length > 0 || userDeleted || accountsDeleted > 0;
  await adminAction(c.env, { action: "user.delete", team: p.team, target: p.user, outcome: found ? "ok" : "refused" }, c.req.raw);
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

userRoutes.delete("/teams/:team/users/:user/grants/:grant", async (c) => {
  const p = params(c, GrantParam);
  if (isResponse(p)) return p;
  const api = grantsApi(c, p.team);
  if (isResponse(api)) return api;
  // revokeGrant deletes whatever keys it is given: the grant must first be one the library lists for this user.
  const listed = await userGrants(api, p.user, MAX_GRANTS_LISTED, (g) => g.id === p.grant);
  const owned = listed.grants.some((g) => g.id === p.grant);
  if (owned) await api.revokeGrant(p.grant, p.user);
  await adminAction(c.env, { action: "grant.revoke", team: p.team, target: `${p.user}/${p.grant}`, outcome: owned ? "ok" : "refused" }, c.req.raw);
  return owned ? c.body(null, 204) : problem(c, 404, "not_found", `User ${p.user} of team ${p.team} has no grant ${p.grant}.`);
});
