// Who is a team's admin, asked at the sign-in and again at every request of a team admin's pages: the member's
// session (team-admin-session.ts) proves who signed in; the team's `dashboard_admins` of this moment, matched by the
// policies' own selector matcher (src/config/tool-access.ts `selectsSubject`) against what the user index holds of
// the member's claims (email, whether verified, groups: written at each sign-in), and the team's admission rule of
// this moment, decide whether they still are. A member taken off the list, whose groups no longer match, or whom the
// team no longer admits is out at their next page.
import { admitMember } from "../../auth/user.ts";
import { DashboardAdmins } from "../../config/policy-rules.ts";
import type { Subject } from "../../config/subject.ts";
import { selectsSubject } from "../../config/tool-access.ts";
import type { TeamStore } from "../../store/store.ts";
import { subjectPrincipal, type AuditPrincipal } from "../../views/audit-entry.ts";
import { store } from "../admin/route-context.ts";
import { sessionForm } from "./csrf.ts";
import { csrfTokenOf } from "./operator-session.ts";
import { configuredTeam, message, noSuchTeam } from "./page-answers.tsx";
import { endTeamAdminSession, currentTeamAdmin } from "./team-admin-session.ts";
import type { ResolveScope, TeamPagesContext } from "./team-scope.ts";

/** Where a team's admins find its pages. */
export const teamAdminBase = (team: string): string => `/t/${encodeURIComponent(team)}/dashboard`;

/** What a member's claims are as selectors read them: `user:` and `domain:` match a verified email only. */
export interface AdminClaims {
  email?: string | undefined;
  emailVerified: boolean;
  groups: string[];
}

/** Whether the stored config's `dashboard_admins` names this member (a list that does not validate names nobody). */
export function listedAdmin(rawConfig: unknown, user: string, claims: AdminClaims): boolean {
  const admins = DashboardAdmins.safeParse((rawConfig as { dashboard_admins?: unknown } | undefined)?.dashboard_admins);
  if (!admins.success || admins.data === undefined) return false;
  return selectsSubject(admins.data, adminSubject(user, claims));
}

const adminSubject = (user: string, claims: AdminClaims): Subject => ({
  kind: "member",
  id: user,
  ...(claims.emailVerified && claims.email !== undefined ? { email: claims.email } : {}),
  groups: claims.groups,
});

/** The audit trail's principal of a team admin: the member, by id and verified email. */
const adminPrincipal = (user: string, claims: AdminClaims): AuditPrincipal => subjectPrincipal(adminSubject(user, claims));

export type AdminNow = { ok: true; by: AuditPrincipal } | { ok: false; reason: string };

/** Whether `user` is an admin of `team` now: the user index's claims, the admission rule and `dashboard_admins`. */
export async function adminNow(teams: TeamStore, team: string, user: string): Promise<AdminNow> {
  const [record, idp, config] = await Promise.all([teams.getUser(team, user), teams.getIdp(team), teams.getConfig(team)]);
  if (!record) return { ok: false, reason: "the team's user index no longer lists this member" };
  if (!idp) return { ok: false, reason: `sign-in is no longer set up for team ${team}` };
  const claims: AdminClaims = { email: record.email, emailVerified: record.emailVerified === true, groups: record.groups ?? [] };
  const admission = admitMember(idp, claims);
  if (!admission.ok) return { ok: false, reason: admission.reason };
  if (!listedAdmin(config, user, claims)) return { ok: false, reason: `this account is not one of team ${team}'s dashboard admins (dashboard_admins)` };
  return { ok: true, by: adminPrincipal(user, claims) };
}

/** The answer to a request without a session: the sign-in at the base, a way there from any other page. */
export type SignInAnswer = (c: TeamPagesContext, team: string) => Promise<Response>;

/**
 * A team admin's scope on their team's pages: the team's session cookie, its admin-ness checked now; the base and
 * home are the team's own dashboard; admin actions are recorded as the member.
 */
export const teamAdminScope =
  (signInPage: SignInAnswer): ResolveScope =>
  async (c) => {
    const team = await configuredTeam(c);
    if (team === undefined) return noSuchTeam(c);
    const base = teamAdminBase(team);
    const key = c.env.SESSION_KEY;
    if (!key) return message(c, 503, "Dashboard off", "A team's dashboard needs the SESSION_KEY secret: the operator sets it.", undefined, base);
    const session = await currentTeamAdmin(c, key, team);
    if (!session) {
      if (c.req.method !== "GET") return message(c, 403, "Not done", "Sign in first: the session has ended.", undefined, base);
      return new URL(c.req.url).pathname === base ? signInPage(c, team) : c.redirect(base, 303);
    }
    const admin = await adminNow(store(c), team, session.user);
    if (!admin.ok) {
      endTeamAdminSession(c, team);
      return message(c, 403, "Not a team admin", `You are signed out of team ${team}'s dashboard: ${admin.reason}.`, undefined, base);
    }
    return {
      scope: { team, base, home: base, csrf: await csrfTokenOf(key, session), viewer: "team-admin", by: admin.by },
      sessionForm: (limit) => sessionForm(c.env, c.req.raw, key, session, limit),
    };
  };
