// The members-and-tokens page's routes (relative to a team's pages, team-pages.tsx: `<base>/members` and its forms):
// the page (members and their grants, then the tokens), minting and revoking a token, revoking a member's grant,
// removing a member. Each change is a POST checked by the mount's `sessionForm` and done by the admin API's own code
// (the team store, member-grants.ts), recorded as the same admin action in the audit trail, as whoever took it; the
// answer is the page again, saying what was done.
import { formatIssues } from "../../config/validate.ts";
import { grantsApi, membersWithGrants, removeMember, revokeMemberGrant, type GrantsApi } from "../admin/member-grants.ts";
import { adminAction, store } from "../admin/route-context.ts";
import { GrantParam, TokenCreateBody, TokenIdParam, UserParam } from "../admin/schemas.ts";
import { message, page, refused, type Status } from "./page-answers.tsx";
import { actedBy, type TeamPagesApp, type TeamPagesContext } from "./team-scope.ts";
import { TokensPage, type TokensPageProps } from "./tokens-page.tsx";

type Done = Omit<TokensPageProps, "team" | "tokens" | "members" | "scope">;

/** The members-and-tokens page, with what the request just did. */
async function membersPage(c: TeamPagesContext, status: Status, done: Done = {}, reached?: GrantsApi) {
  const { team } = c.var.scope;
  const teamStore = store(c);
  const grants = reached ?? grantsApi(c.env, c.req.raw, team);
  const [tokens, idp, listed] = await Promise.all([teamStore.listTokens(team), teamStore.getIdp(team), membersWithGrants(grants.ok ? grants.api : undefined, teamStore, team)]);
  const members = { idp: idp !== undefined, ...(grants.ok ? {} : { grantsUnavailable: grants.reason }), ...listed };
  return page(c, status, <TokensPage team={team} tokens={tokens} members={members} scope={c.var.scope} {...done} />);
}

/** A page that only says something, in the scope's frame. */
const say = (c: TeamPagesContext, status: Status, title: string, text: string) => message(c, status, title, text, c.var.scope.csrf, c.var.scope.home);

/** The posted form checked against the session: its fields, or the answer refusing the request. */
async function changeAllowed(c: TeamPagesContext): Promise<URLSearchParams | Response> {
  const posted = await c.var.sessionForm();
  return posted.ok ? posted.form : refused(c, posted.refusal, c.var.scope.home);
}

/** The members page and its forms. */
export function memberRoutes(app: TeamPagesApp): void {
  app.get("/members", (c) => membersPage(c, 200));

  // Minting goes through the admin API's body schema, store and audit (an admin action, as `POST .../tokens` records).
  app.post("/tokens", async (c) => {
    const form = await changeAllowed(c);
    if (form instanceof Response) return form;
    const { team } = c.var.scope;
    // The form's empty fields are the body's absent keys.
    const filled = (key: string) => form.get(key)?.trim() || undefined;
    const fields = Object.fromEntries(["label", "view"].flatMap((key) => (filled(key) === undefined ? [] : [[key, filled(key)]])));
    const body = TokenCreateBody.safeParse(fields);
    if (!body.success) {
      const problem = formatIssues(body.error).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
      return membersPage(c, 400, { problem: `No token minted: ${problem}` });
    }
    const minted = await store(c).mintToken(team, body.data.label, body.data.view);
    await adminAction(c.env, { action: "token.mint", team, target: minted.id, outcome: "ok", ...actedBy(c.var.scope) }, c.req.raw);
    return membersPage(c, 201, { minted: { id: minted.id, token: minted.token } });
  });

  app.post("/tokens/:id/revoke", async (c) => {
    const form = await changeAllowed(c);
    if (form instanceof Response) return form;
    const { team } = c.var.scope;
    const p = TokenIdParam.safeParse({ team, id: c.req.param("id") });
    if (!p.success) return say(c, 404, "No such token", "That is not a token's id.");
    const revoked = await store(c).revokeToken(team, p.data.id);
    await adminAction(c.env, { action: "token.revoke", team, target: p.data.id, outcome: revoked ? "ok" : "refused", ...actedBy(c.var.scope) }, c.req.raw);
    if (!revoked) return say(c, 404, "No such token", `Team ${team} has no token ${p.data.id}.`);
    return membersPage(c, 200, { revoked: p.data.id });
  });

  // A grant or a member: the admin API's path schemas (a user id carries its team's name), its functions and its audit.
  app.post("/members/:user/grants/:grant/revoke", async (c) => {
    const form = await changeAllowed(c);
    if (form instanceof Response) return form;
    const { team } = c.var.scope;
    const p = GrantParam.safeParse({ team, user: c.req.param("user"), grant: c.req.param("grant") });
    if (!p.success) return say(c, 404, "No such grant", "That is not a member's grant of this team.");
    const reached = grantsApi(c.env, c.req.raw, team);
    if (!reached.ok) return say(c, 503, "Not done", reached.reason);
    const owned = await revokeMemberGrant(c.env, reached.api, team, p.data.user, p.data.grant, c.req.raw, actedBy(c.var.scope).by);
    if (!owned) return say(c, 404, "No such grant", `Member ${p.data.user} of team ${team} has no grant ${p.data.grant}.`);
    return membersPage(c, 200, { grantRevoked: { member: p.data.user, grant: p.data.grant } }, reached);
  });

  app.post("/members/:user/remove", async (c) => {
    const form = await changeAllowed(c);
    if (form instanceof Response) return form;
    const { team } = c.var.scope;
    const p = UserParam.safeParse({ team, user: c.req.param("user") });
    if (!p.success) return say(c, 404, "No such member", "That is not a member of this team.");
    const reached = grantsApi(c.env, c.req.raw, team);
    if (!reached.ok) return say(c, 503, "Not done", reached.reason);
    const removed = await removeMember(c.env, reached.api, store(c), team, p.data.user, c.req.raw, actedBy(c.var.scope).by);
    if (!removed) return say(c, 404, "No such member", `Team ${team} has no member ${p.data.user}.`);
    return membersPage(c, 200, { memberRemoved: removed }, reached);
  });
}
