// The members-and-tokens page's routes, `/dashboard/teams/<team>/members` and its forms: the page (members and their
// grants, then the tokens), minting and revoking a token, revoking a member's grant, removing a member. Each change
// is a POST checked by `sessionForm` and done by the admin API's own code (the team store, member-grants.ts), recorded
// as the same admin action in the audit trail; the answer is the page again, saying what was done.
import { Hono } from "hono";
import { formatIssues } from "../../config/validate.ts";
import { grantsApi, membersWithGrants, removeMember, revokeMemberGrant, type GrantsApi } from "../admin/member-grants.ts";
import { adminAction, store } from "../admin/route-context.ts";
import { GrantParam, TokenCreateBody, TokenIdParam, UserParam } from "../admin/schemas.ts";
import { sessionForm } from "./csrf.ts";
import { configuredTeam, message, noSuchTeam, page, refused, signedIn, type DashboardContext, type DashboardEnv, type SignedIn, type Status } from "./page-answers.tsx";
import { TokensPage, type TokensPageProps } from "./tokens-page.tsx";

export const memberRoutes = new Hono<DashboardEnv>();

type Done = Omit<TokensPageProps, "team" | "tokens" | "members" | "csrf">;

/** The members-and-tokens page, with what the request just did. */
async function membersPage(c: DashboardContext, team: string, csrf: string, status: Status, done: Done = {}, reached?: GrantsApi) {
  const teamStore = store(c);
  const grants = reached ?? grantsApi(c.env, c.req.raw, team);
  const [tokens, idp, listed] = await Promise.all([teamStore.listTokens(team), teamStore.getIdp(team), membersWithGrants(grants.ok ? grants.api : undefined, teamStore, team)]);
  const members = { idp: idp !== undefined, ...(grants.ok ? {} : { grantsUnavailable: grants.reason }), ...listed };
  return page(c, status, <TokensPage team={team} tokens={tokens} members={members} csrf={csrf} {...done} />);
}

/** A signed-in session's checked form: the session, or the answer refusing the request. */
async function changeAllowed(c: DashboardContext): Promise<{ who: SignedIn; form: URLSearchParams } | Response> {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? message(c, 403, "Not done", "Sign in first: the session has ended.");
  const posted = await sessionForm(c.env, c.req.raw, who.secrets.sessionKey, who.session);
  return posted.ok ? { who, form: posted.form } : refused(c, posted.refusal);
}

memberRoutes.get("/teams/:team/members", async (c) => {
  const who = await signedIn(c);
  if ("answer" in who) return who.answer ?? c.redirect("/dashboard", 303);
  const team = await configuredTeam(c);
  return team ? membersPage(c, team, who.csrf, 200) : noSuchTeam(c, who.csrf);
});

// Minting goes through the admin API's body schema, store and audit (an admin action, as `POST .../tokens` records).
memberRoutes.post("/teams/:team/tokens", async (c) => {
  const allowed = await changeAllowed(c);
  if (allowed instanceof Response) return allowed;
  const { who, form } = allowed;
  const team = await configuredTeam(c);
  if (!team) return noSuchTeam(c, who.csrf);
  // The form's empty fields are the body's absent keys.
  const filled = (key: string) => form.get(key)?.trim() || undefined;
  const fields = Object.fromEntries(["label", "view"].flatMap((key) => (filled(key) === undefined ? [] : [[key, filled(key)]])));
  const body = TokenCreateBody.safeParse(fields);
  if (!body.success) {
    const problem = formatIssues(body.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
    return membersPage(c, team, who.csrf, 400, { problem: `No token minted: ${problem}` });
  }
  const minted = await store(c).mintToken(team, body.data.label, body.data.view);
  await adminAction(c.env, { action: "token.mint", team, target: minted.id, outcome: "ok" }, c.req.raw);
  return membersPage(c, team, who.csrf, 201, { minted: { id: minted.id, token: minted.token } });
});

memberRoutes.post("/teams/:team/tokens/:id/revoke", async (c) => {
  const allowed = await changeAllowed(c);
  if (allowed instanceof Response) return allowed;
  const { who } = allowed;
  const p = TokenIdParam.safeParse({ team: c.req.param("team"), id: c.req.param("id") });
  if (!p.success) return message(c, 404, "No such token", "That is not a token's id.", who.csrf);
  const revoked = await store(c).revokeToken(p.data.team, p.data.id);
  await adminAction(c.env, { action: "token.revoke", team: p.data.team, target: p.data.id, outcome: revoked ? "ok" : "refused" }, c.req.raw);
  if (!revoked) return message(c, 404, "No such token", `Team ${p.data.team} has no token ${p.data.id}.`, who.csrf);
  return membersPage(c, p.data.team, who.csrf, 200, { revoked: p.data.id });
});

// A grant or a member: the admin API's path schemas (a user id carries its team's name), its functions and its audit.
memberRoutes.post("/teams/:team/members/:user/grants/:grant/revoke", async (c) => {
  const allowed = await changeAllowed(c);
  if (allowed instanceof Response) return allowed;
  const { who } = allowed;
  const p = GrantParam.safeParse(c.req.param());
  if (!p.success) return message(c, 404, "No such grant", "That is not a member's grant of this team.", who.csrf);
  const reached = grantsApi(c.env, c.req.raw, p.data.team);
  if (!reached.ok) return message(c, 503, "Not done", reached.reason, who.csrf);
  const owned = await revokeMemberGrant(c.env, reached.api, p.data.team, p.data.user, p.data.grant, c.req.raw);
  if (!owned) return message(c, 404, "No such grant", `Member ${p.data.user} of team ${p.data.team} has no grant ${p.data.grant}.`, who.csrf);
  return membersPage(c, p.data.team, who.csrf, 200, { grantRevoked: { member: p.data.user, grant: p.data.grant } }, reached);
});

memberRoutes.post("/teams/:team/members/:user/remove", async (c) => {
  const allowed = await changeAllowed(c);
  if (allowed instanceof Response) return allowed;
  const { who } = allowed;
  const p = UserParam.safeParse(c.req.param());
  if (!p.success) return message(c, 404, "No such member", "That is not a member of this team.", who.csrf);
  const reached = grantsApi(c.env, c.req.raw, p.data.team);
  if (!reached.ok) return message(c, 503, "Not done", reached.reason, who.csrf);
  const removed = await removeMember(c.env, reached.api, store(c), p.data.team, p.data.user, c.req.raw);
  if (!removed) return message(c, 404, "No such member", `Team ${p.data.team} has no member ${p.data.user}.`, who.csrf);
  return membersPage(c, p.data.team, who.csrf, 200, { memberRemoved: removed }, reached);
});
