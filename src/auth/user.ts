// Who a signed-in member is, and whether the team lets them in (docs/oauth.md 3.1): pure rules on what the
// team's identity provider said in its ID token. No I/O.
import { base64url } from "../lib/bytes.ts";
import type { IdpConfig } from "../config/idp.ts";

/** The claims the proxy reads of an ID token (any others are ignored). */
export interface IdClaims {
  iss: string;
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  [claim: string]: unknown;
}

/**
 * A user's id in one team: `<team>.<22 base64url characters of SHA-256(issuer \n subject)>`. Stable across sign-ins
 * and email changes (the provider's subject is), free of ':' (the OAuth library splits its keys on it), and it names
 * the team, so the library's per-user grant list is one team's.
 */
export async function userIdFor(team: string, issuer: string, subject: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${issuer}\n${subject}`));
  return `${team}.${base64url(new Uint8Array(digest)).slice(0, 22)}`;
}

/** A user id as `userIdFor` makes them, for checking ids that arrive in admin paths. */
export const USER_ID = /^[a-z0-9_-]{1,64}\.[A-Za-z0-9_-]{22}$/;

export type Admission = { ok: true; email?: string } | { ok: false; reason: string };

/** Bounds on the groups a grant keeps: they travel with every request of the member to its session object. */
export const MAX_GROUPS = 64;
export const MAX_GROUP_CHARS = 256;
export const MAX_GROUPS_CHARS = 4096;

/**
 * What the proxy keeps of a member's claims (with the grant, renewed at each token refresh): the email as the provider
 * gave it (lowercased), whether the provider verified it, and the groups of the team's groups claim, bounded. A group
 * too long is left out whole (a cut name could be another group's); past the count or the total, the rest are left
 * out, those the team admits by coming first so that admission never depends on what was left out.
 */
export interface MemberClaims {
  email?: string;
  emailVerified: boolean;
  groups: string[];
  /** How many of the claim's groups were left out (for the log: never their names). */
  groupsDropped: number;
}

export function memberClaims(idp: IdpConfig, claims: IdClaims): MemberClaims {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : undefined;
  const emailVerified = claims.email_verified === true || claims.email_verified === "true";
  const raw = claims[idp.groups_claim];
  const listed = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw.filter((g): g is string => typeof g === "string") : [];
  const unique = [...new Set(listed)].filter((g) => g.length > 0);
  const admitting = new Set(idp.allowed_groups ?? []);
  const ordered = [...unique.filter((g) => admitting.has(g)), ...unique.filter((g) => !admitting.has(g))];
  const groups: string[] = [];
  let chars = 0;
  for (const group of ordered) {
    if (groups.length === MAX_GROUPS || group.length > MAX_GROUP_CHARS || chars + group.length > MAX_GROUPS_CHARS) continue;
    groups.push(group);
    chars += group.length;
  }
  return { ...(email === undefined ? {} : { email }), emailVerified, groups, groupsDropped: unique.length - groups.length };
}

/**
 * Whether the team admits this account: a verified email in an allowed domain, or membership of an allowed group
 * (either rule the team configured suffices). The reason is for the log and the member's own page; it names the rule,
 * never the account's groups.
 */
export const admit = (idp: IdpConfig, claims: IdClaims): Admission => admitMember(idp, memberClaims(idp, claims));

/** `admit` over what a grant kept of the claims: at a token refresh, the team's rules of that moment decide again. */
export function admitMember(idp: IdpConfig, member: Pick<MemberClaims, "email" | "emailVerified" | "groups">): Admission {
  const { email, emailVerified, groups } = member;
  if (idp.allowed_domains !== undefined && email !== undefined && emailVerified) {
    const domain = email.slice(email.lastIndexOf("@") + 1);
    if (email.includes("@") && idp.allowed_domains.includes(domain)) return { ok: true, email };
  }
  if (idp.allowed_groups !== undefined && groups.some((g) => idp.allowed_groups?.includes(g))) {
    return { ok: true, ...(email === undefined ? {} : { email }) };
  }
  const rules = [
    idp.allowed_domains === undefined ? undefined : "a verified email address in an allowed domain",
    idp.allowed_groups === undefined ? undefined : "membership of an allowed group",
  ].filter(Boolean);
  return { ok: false, reason: `this account may not sign in to this team: it needs ${rules.join(" or ")}` };
}
