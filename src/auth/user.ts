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

/**
 * Whether the team admits this account: a verified email in an allowed domain, or membership of an allowed group
 * (either rule the team configured suffices). The reason is for the log and the member's own page; it names the rule,
 * never the account's groups.
 */
export function admit(idp: IdpConfig, claims: IdClaims): Admission {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : undefined;
  const verified = claims.email_verified === true || claims.email_verified === "true";
  if (idp.allowed_domains !== undefined && email !== undefined && verified) {
    const domain = email.slice(email.lastIndexOf("@") + 1);
    if (email.includes("@") && idp.allowed_domains.includes(domain)) return { ok: true, email };
  }
  if (idp.allowed_groups !== undefined) {
    const raw = claims[idp.groups_claim];
    const groups = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw.filter((g): g is string => typeof g === "string") : [];
    if (groups.some((g) => idp.allowed_groups?.includes(g))) return { ok: true, ...(email === undefined ? {} : { email }) };
  }
  const rules = [
    idp.allowed_domains === undefined ? undefined : "a verified email address in an allowed domain",
    idp.allowed_groups === undefined ? undefined : "membership of an allowed group",
  ].filter(Boolean);
  return { ok: false, reason: `this account may not sign in to this team: it needs ${rules.join(" or ")}` };
}
