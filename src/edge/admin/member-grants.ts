// A team's members and their grants, for the admin API (user-routes.ts) and the dashboard's members page alike (one
// code path): reaching the OAuth library's records, a member's grants with their clients' names, revoking one grant,
// removing a member (their grants, their accounts at OAuth upstreams, then their index entry), each change recorded
// as the admin action it is. Grants are the library's (OAUTH_KV); members are the team's user index (TEAMS).
import type { GrantSummary, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { authorizationServer } from "../oauth/server.ts";
import { publicBase } from "../../lib/public-url.ts";
import type { Env } from "../../lib/env.ts";
import type { TeamStore } from "../../store/store.ts";
import type { AuditPrincipal } from "../../views/audit-entry.ts";
import { adminAction } from "./route-context.ts";
import type { GrantInfo, UserDetail, UserRemoved } from "./schemas.ts";
import type { UserRecord } from "../../config/keys.ts";

/** Grants read per listing page. Each listed grant costs one KV read, each revocation a list and deletes: the bounds
 * below keep one admin request well inside a Worker invocation's KV operations. */
const GRANT_PAGE = 100;
/** Grants one answer lists (and one grant revocation looks through for the grant). */
export const MAX_GRANTS_LISTED = 300;
/** Grants one user deletion revokes; the answer says when more remain (call again). */
export const MAX_GRANTS_REVOKED = 100;
/** Distinct clients whose names one answer looks up. */
export const MAX_CLIENT_LOOKUPS = 20;

/** The library's helpers for a team's grants, or why they cannot be reached (the admin API answers 503 with it). */
export type GrantsApi = { ok: true; api: OAuthHelpers } | { ok: false; reason: string };

export function grantsApi(env: Env, request: Request, team: string): GrantsApi {
  if (!env.OAUTH_KV) return { ok: false, reason: "Grants live in the OAUTH_KV namespace, and this Worker has no OAUTH_KV binding (see wrangler.toml)." };
  try {
    return { ok: true, api: authorizationServer(publicBase(env, request), team).getOAuthApi(env) };
  } catch (err) {
    // The library refuses a plain-http issuer off loopback: a deployment reached over http without PUBLIC_URL.
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, reason: `Grants cannot be reached: ${reason}. Set PUBLIC_URL to the Worker's https URL.` };
  }
}

/**
 * A user's grants, page after page up to `max` (or until `found` matches one); `complete` is false when more may
 * remain. Oldest first (the library lists a page in no set order).
 */
export async function userGrants(api: OAuthHelpers, userId: string, max: number, found?: (g: GrantSummary) => boolean): Promise<{ grants: GrantSummary[]; complete: boolean }> {
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
 * does not say) and, as ever, no token; the client's registered name when the library has it (the first
 * MAX_CLIENT_LOOKUPS distinct clients). A client id that is a URL (a metadata-document client) is not looked up: that
 * would fetch its document from the admin's request.
 */
export async function grantInfos(api: OAuthHelpers, grants: readonly GrantSummary[]): Promise<GrantInfo[]> {
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

/** A member's index entry and grants (up to MAX_GRANTS_LISTED); undefined when the team has neither for this id. */
export async function memberDetail(api: OAuthHelpers, store: TeamStore, team: string, userId: string): Promise<UserDetail | undefined> {
  const [user, listed] = await Promise.all([store.getUser(team, userId), userGrants(api, userId, MAX_GRANTS_LISTED)]);
  if (user === undefined && listed.grants.length === 0) return undefined;
  return { id: userId, ...(user === undefined ? {} : { user }), grants: await grantInfos(api, listed.grants), complete: listed.complete };
}

/**
 * Revokes one of a member's grants (its access and refresh tokens with it), recorded as `admin/grant.revoke`
 * (`refused` when the member has no such grant). False when they have not.
 */
export async function revokeMemberGrant(env: Env, api: OAuthHelpers, team: string, userId: string, grantId: string, request: Request, by?: AuditPrincipal): Promise<boolean> {
  // revokeGrant deletes whatever keys it is given: the grant must first be one the library lists for this user.
  const listed = await userGrants(api, userId, MAX_GRANTS_LISTED, (g) => g.id === grantId);
  const owned = listed.grants.some((g) => g.id === grantId);
  if (owned) await api.revokeGrant(grantId, userId);
  await adminAction(env, { action: "grant.revoke", team, target: `${userId}/${grantId}`, outcome: owned ? "ok" : "refused", ...(by ? { by } : {}) }, request);
  return owned;
}

/**
 * Removes a member: their grants (up to MAX_GRANTS_REVOKED), their own accounts at OAuth upstreams, then their index
 * entry once no grant is left; recorded as `admin/user.delete` (and `admin/upstream.accounts.delete` when they had
 * accounts). Undefined when the team had nothing of theirs.
 */
export async function removeMember(env: Env, api: OAuthHelpers, store: TeamStore, team: string, userId: string, request: Request, by?: AuditPrincipal): Promise<UserRemoved | undefined> {
  const listed = await userGrants(api, userId, MAX_GRANTS_REVOKED);
  // One at a time: each revocation lists and deletes the grant's tokens, and a Worker's concurrent subrequests are few.
  for (const grant of listed.grants) await api.revokeGrant(grant.id, userId);
  // The user's own accounts at per_user OAuth upstreams (`cred:*:<user>` in the team index), before the index entry,
  // so a revoked user leaves no upstream token behind, whatever happens next.
  const accountsDeleted = await env.TEAM_INDEX.getByName(team).deleteCredentials(team, { account: userId });
  if (accountsDeleted > 0) await adminAction(env, { action: "upstream.accounts.delete", team, target: `*/${userId}`, outcome: "ok", ...(by ? { by } : {}) }, request);
  // The index entry goes last, once no grant is left: until then the member's detail still shows what remains.
  const userDeleted = listed.complete ? await store.deleteUser(team, userId) : false;
  const found = listed.grants.length > 0 || userDeleted || accountsDeleted > 0;
  await adminAction(env, { action: "user.delete", team, target: userId, outcome: found ? "ok" : "refused", ...(by ? { by } : {}) }, request);
  if (!found) return undefined;
  return { id: userId, grantsRevoked: listed.grants.length, userDeleted, complete: listed.complete, ...(accountsDeleted > 0 ? { accountsDeleted } : {}) };
}

/** Members one dashboard page shows, most recently signed in first. */
export const MAX_MEMBERS_SHOWN = 100;

/** A member as the dashboard lists them: the index entry, and their grants unless the page's budget ran out first. */
export interface MemberGrants {
  member: UserRecord & { id: string };
  /** Undefined when the page read no grants of theirs (its MAX_GRANTS_LISTED were spent on members above). */
  grants: GrantInfo[] | undefined;
  /** False when they have more grants than shown. */
  complete: boolean;
}

/**
 * The team's members (up to MAX_MEMBERS_SHOWN, most recent sign-in first) with their grants: MAX_GRANTS_LISTED and
 * MAX_CLIENT_LOOKUPS hold for the whole page, as for one admin answer, so a team of many members costs no more KV
 * operations than one member's detail. `total` is how many members the index holds.
 */
export async function membersWithGrants(api: OAuthHelpers | undefined, store: TeamStore, team: string): Promise<{ members: MemberGrants[]; total: number }> {
  const all = (await store.listUsers(team)).sort((a, b) => b.lastSeen.localeCompare(a.lastSeen) || a.id.localeCompare(b.id));
  const shown = all.slice(0, MAX_MEMBERS_SHOWN);
  const read: Array<{ grants: GrantSummary[]; complete: boolean } | undefined> = [];
  let budget = MAX_GRANTS_LISTED;
  for (const member of shown) {
    const listed = api && budget > 0 ? await userGrants(api, member.id, budget) : undefined;
    budget -= listed?.grants.length ?? 0;
    read.push(listed);
  }
  // One lookup of client names for the whole page, then each member's share of it back in order. The groups a sign-in
  // recorded are in each member's record, not the listing's metadata: one read each, at most MAX_MEMBERS_SHOWN.
  const [infos, records] = await Promise.all([
    api ? grantInfos(api, read.flatMap((r) => r?.grants ?? [])) : [],
    Promise.all(shown.map((member) => store.getUser(team, member.id))),
  ]);
  let next = 0;
  const members = shown.map((member, i) => {
    const listed = read[i];
    const grants = listed === undefined ? undefined : infos.slice(next, (next += listed.grants.length));
    const groups = records[i]?.groups;
    return { member: groups === undefined ? member : { ...member, groups }, grants, complete: listed?.complete ?? false };
  });
  return { members, total: all.length };
}
