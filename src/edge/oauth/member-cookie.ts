// Which member a browser is, and which browser started a flow (docs/oauth.md 3.3). The MCP spec asks a server to
// check that whoever opens a connect link is the member it was made for (phishing: Alice sends Bob her link), and a
// callback must come back to the browser that started its flow (else Alice could start a connect and have Bob finish
// it with his account). Two cookies, both signed with the proxy's MAC under SESSION_KEY (src/auth/signed.ts):
//   __Host-dynmcp-member        a handle `<nonce>.mc2.<payload: user id, expiry>.<mac>` bound to the team, 30 days;
//                               set when a member signs in at the team's identity provider (a host's sign-in, or the
//                               one below)
//   __Host-dynmcp-flow-<tag>    one flow's binding, ten minutes: `<tag><value>` is the MAC of its `state`
// And the sign-in a connect link asks for when the browser has no member cookie for the team, or another member's:
//   POST /t/<team>/connect/<server>/sign-in   (h=<handle>) off to the team's identity provider, state `m.<handle>` (src/auth/flow-state.ts)
//   GET  /t/<team>/oauth/callback             the provider's answer (src/edge/oauth/authorize.ts hands `m.` states here):
//                                             the member admitted, the cookie set, back to the connect link
import { Hono } from "hono";
import * as z from "zod";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { expiry, handleFormat, macMatches, macOf, openHandle, sealHandle } from "../../auth/signed.ts";
import { oldMemberCookie } from "../../auth/legacy-handles.ts";
import { flowStatePrefix, isFlowState, mintFlowState } from "../../auth/flow-state.ts";
import { ServerName, TeamName } from "../../config/schema.ts";
import { admitMember, memberClaims, userIdFor } from "../../auth/user.ts";
import { checkConnectHandle, checkConnectHandleOfAnyAccount } from "../../auth/connect-link.ts";
import { loadTeamConfig } from "../../config/load.ts";
import { publicBase } from "../../lib/public-url.ts";
import { teamExists } from "../common/team-view.ts";
import { settings } from "../../lib/settings.ts";
import { absent, type OAuthContext } from "./team-param.ts";
import { errorPage } from "./pages.ts";
import { SignInError, finishSignIn, newSignIn, signInUrl, teamProvider, teamStore } from "./sign-in.ts";
import { PAGE_FORM_LIMIT, pageForm } from "./forms.ts";

const MEMBER_COOKIE = "__Host-dynmcp-member";
const MEMBER_TTL_SECONDS = 30 * 24 * 3600;
const FLOW_COOKIE = "__Host-dynmcp-flow-";
const FLOW_TTL_SECONDS = 10 * 60;
/** The member cookie's handle carries the user id (src/auth/user.ts USER_ID) and its expiry; it is bound to the team. */
const MEMBER = handleFormat("mc2", z.strictObject({ user: z.string().regex(/^[a-z0-9_-]{1,64}\.[A-Za-z0-9_-]{22}$/), exp: z.int().positive() }));

const setCookie = (name: string, value: string, maxAge: number): string =>
  `${name}=${value}; Path=/; Max-Age=${maxAge}; Secure; HttpOnly; SameSite=Lax`;

/** One cookie's value from a request's Cookie header. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie line that tells later connect links which member of `team` this browser is. */
export async function memberCookie(secret: string, team: string, user: string, now = Date.now()): Promise<string> {
  const { handle } = await sealHandle(secret, MEMBER, [team], { user, exp: Math.floor(now / 1000 + MEMBER_TTL_SECONDS) });
  return setCookie(MEMBER_COOKIE, handle, MEMBER_TTL_SECONDS);
}

/**
 * The member of `team` the request's cookie proves, or undefined (none, another team's, expired, altered). A cookie of
 * the form before (`<user id>.<expiry>.<mac>`) is read too, until it expires.
 */
export async function memberOf(secret: string, cookieHeader: string | undefined, team: string, now = Date.now()): Promise<string | undefined> {
  const value = cookieValue(cookieHeader, MEMBER_COOKIE) ?? "";
  const opened = (await oldMemberCookie(secret, MEMBER, team, value)) ?? (await openHandle(secret, MEMBER, [team], value));
  if (!opened.ok) return undefined;
  const { user, exp } = opened.payload;
  return user.startsWith(`${team}.`) && !expiry(exp, now).passed ? user : undefined;
}

/** A flow's cookie: its name carries the first 12 characters of the MAC (concurrent flows keep their own), the value the rest. */
const FLOW_BINDING = "flow-binding/v1";
async function flowParts(secret: string, state: string): Promise<{ name: string; value: string }> {
  const mac = await macOf(secret, FLOW_BINDING, state);
  return { name: FLOW_COOKIE + mac.slice(0, 12), value: mac.slice(12) };
}

/** The Set-Cookie line binding the flow `state` to this browser for ten minutes. */
export async function flowCookie(secret: string, state: string): Promise<string> {
  const { name, value } = await flowParts(secret, state);
  return setCookie(name, value, FLOW_TTL_SECONDS);
}

/** The Set-Cookie line that removes a finished flow's binding. */
export async function clearFlowCookie(secret: string, state: string): Promise<string> {
  return setCookie((await flowParts(secret, state)).name, "", 0);
}

/** Whether this request comes from the browser that started the flow `state`. */
export async function fromFlowBrowser(secret: string, cookieHeader: string | undefined, state: string): Promise<boolean> {
  const { name } = await flowParts(secret, state);
  const sent = cookieValue(cookieHeader, name) ?? "";
  // The whole mac checked in constant time (its first part is the cookie's name, so it matched already).
  return /^[A-Za-z0-9_-]{10}$/.test(sent) && macMatches(secret, name.slice(FLOW_COOKIE.length) + sent, FLOW_BINDING, state);
}

// ---- the member sign-in a connect link asks for ------------------------------------------------------------------

export const memberSignIn = new Hono<{ Bindings: Env }>();

/** A member sign-in's state starts `m.` (src/auth/flow-state.ts): the OAuth library's own states have no dot, so the two never meet. */
export const isMemberSignInState = (state: string | undefined): boolean => state !== undefined && flowStatePrefix(state) === "m";

const teamParam = (c: OAuthContext): string | undefined => {
  const parsed = TeamName.safeParse(c.req.param("team"));
  return parsed.success ? parsed.data : undefined;
};

export const connectPath = (team: string, server: string, handle: string) =>
  `/t/${team}/connect/${encodeURIComponent(server)}?h=${encodeURIComponent(handle)}`;

const TITLE = "Cannot sign you in";


memberSignIn.post("/t/:team/connect/:server/sign-in", async (c) => {
  const team = teamParam(c);
  if (!team) return absent(c);
  const key = c.env.SESSION_KEY;
  if (!key) return errorPage(500, TITLE, "The proxy is not set up for connect links (SESSION_KEY is missing).");
  const posted = await pageForm(c.req.raw);
  if (!posted.ok) {
    return posted.problem === "too_large"
      ? errorPage(413, TITLE, `The sign-in form is over ${PAGE_FORM_LIMIT} bytes: it was not sent as the page sends it.`)
      : errorPage(400, TITLE, "The sign-in form was not sent as the page sends it.");
  }
  const server = ServerName.safeParse(c.req.param("server"));
  if (!server.success) return errorPage(404, TITLE, "There is no such server.");
  // Nothing is stored, and the team's index not woken, for a link the proxy did not make (or that has expired), nor
  // for a server whose accounts are not each member's own: those never ask a member to sign in.
  const handle = posted.form.get("h") ?? "";
  const link = await checkConnectHandleOfAnyAccount(key, handle, team, server.data);
  if (!link.ok) {
    return errorPage(400, TITLE, link.problem === "expired" ? "This connect link has expired (links work for ten minutes): retry the tool call for a new one." : "This is not a connect link of this server: it was cut short, altered, or made for another server or team.");
  }
  if (!(await ownAccountsServer(c.env, team, server.data))) {
    return errorPage(400, TITLE, `${server.data} of team ${team} does not connect each member's own account: no sign-in is needed.`);
  }
  const base = publicBase(c.env, c.req.raw);
  const provider = await teamProvider(c.env, teamStore(c.env), team, base);
  if ("reason" in provider) return errorPage(400, TITLE, `${provider.reason}.`);
  const state = await mintFlowState(key, "member-sign-in", team, "m");
  const saved = newSignIn();
  await c.env.TEAM_INDEX.getByName(team).beginMemberSignIn(team, state, {
    ...saved,
    server: server.data,
    handle,
    accountTag: link.accountTag,
    expiresAt: Date.now() + FLOW_TTL_SECONDS * 1000,
  });
  let location: string;
  try {
    location = await signInUrl(provider, state, saved);
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    log({ event: "sign_in", team, outcome: "failed", reason: err.message });
    return errorPage(502, TITLE, `The team's identity provider cannot be used: ${err.message}.`);
  }
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store", "set-cookie": await flowCookie(key, state) } });
});

/** Whether the team's `server` is an OAuth upstream that connects each member's own account (the links that ask for a sign-in). */
async function ownAccountsServer(env: Env, team: string, server: string): Promise<boolean> {
  const config = await loadTeamConfig(env.TEAMS, team);
  const auth = config?.ok ? config.config.upstreams.find((u) => u.name === server)?.auth : undefined;
  return auth?.type === "oauth" && auth.mode === "per_user";
}

/**
 * The provider's answer to a member sign-in (its `state` starts with `m.`): the flow checked (this browser, once,
 * in time), the member's claims and the team's admission rule, the user index, the member cookie; then back to the
 * connect link when it was made for this member, else a page saying it was not.
 */
export async function finishMemberSignIn(c: OAuthContext): Promise<Response> {
  const team = teamParam(c);
  if (!team) return absent(c);
  const key = c.env.SESSION_KEY;
  if (!key) return errorPage(500, TITLE, "The proxy is not set up for connect links (SESSION_KEY is missing).");
  const url = new URL(c.req.url);
  const state = url.searchParams.get("state") ?? "";
  const headers = new Headers({ "set-cookie": await clearFlowCookie(key, state) });
  const page = (status: number, message: string, outcome: "refused" | "failed", user?: string) => {
    log({ event: "sign_in", team, outcome, ...(user === undefined ? {} : { user }), reason: `connect link sign-in: ${message}` });
    return errorPage(status, TITLE, message, headers);
  };
  // The team's index is woken only for a state this proxy minted for this team, which still exists.
  const minted = (await isFlowState(key, "member-sign-in", team, state)) && (await teamExists(c.env.TEAMS, team, settings(c.env).tokenCacheSeconds));
  const saved = minted ? await c.env.TEAM_INDEX.getByName(team).takeMemberSignIn(team, state) : undefined;
  if (!saved) return page(400, "This sign-in has expired or was already used. Open the connect link again.", "refused");
  if (!(await fromFlowBrowser(key, c.req.header("cookie"), state))) {
    return page(400, "This sign-in was started in another browser. Open the connect link again in the browser you use.", "refused");
  }
  if (url.searchParams.has("error")) return page(400, "The sign-in at the team's identity provider was cancelled or refused.", "refused");
  const base = publicBase(c.env, c.req.raw);
  const store = teamStore(c.env);
  const provider = await teamProvider(c.env, store, team, base);
  if ("reason" in provider) return page(400, `${provider.reason}.`, "failed");
  let claims;
  try {
    ({ claims } = await finishSignIn(provider, url, saved));
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    return page(502, `Signing in at the team's identity provider failed: ${err.message}.`, "failed");
  }
  const user = await userIdFor(team, claims.iss, claims.sub);
  const member = memberClaims(provider.idp, claims);
  const admission = admitMember(provider.idp, member);
  if (!admission.ok) return page(403, `${admission.reason}.`, "refused", user);
  await store.recordUser(team, user, { sub: claims.sub, issuer: claims.iss, ...(admission.email === undefined ? {} : { email: admission.email }), emailVerified: member.emailVerified, groups: member.groups });
  headers.append("set-cookie", await memberCookie(key, team, user));
  log({ event: "sign_in", team, outcome: "ok", user, reason: "connect link sign-in" });
  const check = await checkConnectHandle(key, saved.handle, team, saved.server, user);
  if (!check.ok && check.problem === "foreign") {
    return errorPage(403, "This link is not yours", `This connect link was made for another member of team ${team}, not for the account you signed in with (or it was altered). Ask for your own link: retry the tool call as yourself.`, headers);
  }
  // An expired or malformed link is the connect route's to explain.
  headers.set("location", `${base}${connectPath(team, saved.server, saved.handle)}`);
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 302, headers });
}
