// Who is looking at a team's pages, and where those pages are. One set of team routes (team-pages.tsx) serves two
// audiences: the operator at /dashboard/teams/<team> (the ADMIN_TOKEN session) and the team's own admins at
// /t/<team>/dashboard (a session from the team's identity provider, for that team only). A mount resolves the scope
// once per request (its sign-in, its team) and the routes read it: the team, the base their links and forms use, the
// CSRF token, and whom an admin action is recorded as.
import type { Context, Hono } from "hono";
import type { Env } from "../../lib/env.ts";
import type { AuditPrincipal } from "../../views/audit-entry.ts";
import type { CheckedForm } from "./csrf.ts";

/** What a page may know of who is looking (nothing secret: pages render it). */
export interface TeamScope {
  team: string;
  /** Where the team's pages are: `/dashboard/teams/<team>` for the operator, `/t/<team>/dashboard` for its admins. */
  base: string;
  /** The dashboard the header's links go back to and sign out of: `/dashboard`, or the team's own for its admins. */
  home: string;
  /** The signed-in session's CSRF token, for every form that changes something. */
  csrf: string;
  /** The operator sees every team ("All teams"); a team admin only theirs. */
  viewer: "operator" | "team-admin";
  /** Whom an admin action is recorded as: a team admin's principal; absent for the operator (the admin API's). */
  by?: AuditPrincipal;
}

/** What the team routes read of a request: the scope, and the posted form checked against its session. */
export type TeamPagesEnv = {
  Bindings: Env;
  Variables: {
    scope: TeamScope;
    /** The posted form of this session's page: own origin, the session's CSRF token (csrf.ts `sessionForm`). */
    sessionForm: (limit?: number) => Promise<CheckedForm>;
  };
};
export type TeamPagesContext = Context<TeamPagesEnv>;
export type TeamPagesApp = Hono<TeamPagesEnv>;

/**
 * How a mount learns the scope: the scope and its form check, or the answer instead (no session: the sign-in or a
 * redirect to it; a team that does not exist; a session of another team).
 */
export type ResolveScope = (c: TeamPagesContext) => Promise<{ scope: TeamScope; sessionForm: (limit?: number) => Promise<CheckedForm> } | Response>;

/** The audit trail's principal of an action taken in this scope (spread into an `adminAction`). */
export const actedBy = (scope: TeamScope): { by?: AuditPrincipal } => (scope.by ? { by: scope.by } : {});
