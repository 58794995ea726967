// A member's way through a host's sign-in (docs/oauth.md 3.2): the authorization request is checked, the
// member consents, signs in at the team's identity provider, and comes back to the host with a code bound to who
// they are. Three steps:
//   GET  /t/<team>/oauth/authorize  the request checked (client, registered redirect URI, resource, PKCE S256), the consent page
//   POST /t/<team>/oauth/authorize  the decision; on Allow, off to the team's provider (state bound to this browser)
//   GET  /t/<team>/oauth/callback   the provider's answer: the member's claims, the team's admission rule, the user
//                                   index, and the grant (GrantProps) with a code for the host (a state `m.…` is a
//                                   connect link's member sign-in, `d.…` a team admin's dashboard sign-in: handed on)
// Once the client and its redirect URI are validated, every failure goes back to the host as an OAuth error redirect
// (RFC 6749 4.1.2.1, with `state` and `iss`), its reason in `error_description`; before that, and for a stale or
// replayed page, a local page says what happened and the browser goes nowhere.
import { Hono } from "hono";
import { AuthorizationError, authorizationErrorRedirect, type AuthRequest, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { base64url } from "../../lib/bytes.ts";
import { admitMember, memberClaims, userIdFor } from "../../auth/user.ts";
import { isDashboardSignInState } from "../../auth/flow-state.ts";
import { loadTeamConfig } from "../../config/load.ts";
import type { TeamStore } from "../../store/store.ts";
import { publicBase } from "../../lib/public-url.ts";
import { authorizationServer, grantedScopes } from "./server.ts";
import { memberProps } from "./grant-props.ts";
import { absent, teamOf, type OAuthContext } from "./team-param.ts";
import { consentPage, errorPage, redirect, type ConsentTeam } from "./pages.ts";
import { SignInError, finishSignIn, newSignIn, signInUrl, teamProvider, teamStore, type SignInState, type SignedIn } from "./sign-in.ts";
import { clearFlowCookie, finishMemberSignIn, flowCookie, fromFlowBrowser, isMemberSignInState, memberCookie } from "./member-cookie.ts";
import { MAX_CONSENT_HANDLE_CHARS, consentFlow, mintConsentHandle, openConsentHandle } from "./consent-handle.ts";
import { PAGE_FORM_LIMIT, pageForm } from "./forms.ts";

export const signIn = new Hono<{ Bindings: Env }>();

const STOPPED = "This sign-in cannot go on";

/** Back to the host with an OAuth error (only for a request the library validated). */
const refuse = (request: AuthRequest, code: Parameters<typeof authorizationErrorRedirect>[1], reason: string, headers?: Headers): Response =>
  redirect(authorizationErrorRedirect(request, code, reason), headers);

interface Step {
  team: string;
  base: string;
  /** SESSION_KEY: it signs the consent page's handle and binds each flow to its browser. */
  key: string;
  api: OAuthHelpers;
  store: TeamStore;
}

/** The step's parts; undefined where the route is absent, or a page saying the proxy lacks SESSION_KEY. */
function step(c: OAuthContext): Step | Response | undefined {
  const team = teamOf(c);
  if (!team) return undefined;
  const key = c.env.SESSION_KEY;
  if (!key) {
    log({ event: "misconfigured", reason: "signing members in needs SESSION_KEY" });
    return errorPage(500, STOPPED, "The proxy is not set up to sign members in (SESSION_KEY is missing).");
  }
  const base = publicBase(c.env, c.req.raw);
  return {
    team,
    base,
    key,
    api: authorizationServer(base, team).getOAuthApi(c.env),
    store: teamStore(c.env),
  };
}

/** The library's refusal of a page or state it cannot honour: its own words, and nowhere to go. */
const expired = (err: unknown): Response | undefined =>
  err instanceof AuthorizationError && !err.redirectTo
    ? errorPage(400, STOPPED, `${err.description} Start again from the application.`)
    : undefined;

/** The team's provider (src/edge/oauth/sign-in.ts), or why a member of this team cannot sign in. */
const provider = (c: OAuthContext, s: Step) => teamProvider(c.env, s.store, s.team, s.base);

signIn.get("/t/:team/oauth/authorize", async (c) => {
  const s = step(c);
  if (!s) return absent(c);
  if (s instanceof Response) return s;
  let request: AuthRequest;
  try {
    request = await s.api.parseAuthRequest(c.req.raw);
  } catch (err) {
    if (err instanceof AuthorizationError) {
      return err.redirectTo ? redirect(err.redirectTo) : errorPage(400, "This sign-in request is not valid", err.description);
    }
    // A metadata-document client whose document cannot be read, or a request the library cannot parse at all.
    return errorPage(400, "This sign-in request is not valid", "The application's registration could not be read.");
  }
  // The library asks PKCE of public clients only; the MCP authorization spec asks it of every client.
  if (!request.codeChallenge || request.codeChallengeMethod !== "S256") {
    return refuse(request, "invalid_request", "PKCE with code_challenge_method S256 is required");
  }
  const idp = await provider(c, s);
  if ("reason" in idp) return refuse(request, "access_denied", idp.reason);
  const config = await loadTeamConfig(c.env.TEAMS, s.team);
  const team: ConsentTeam = {
    team: s.team,
    upstreams: config?.ok
      ? config.config.upstreams.map((u) => ({ name: u.name, ...(u.description === undefined ? {} : { description: u.description }) }))
      : [],
  };
  const { handle, nonce } = await mintConsentHandle(s.key, s.team, request);
  if (handle.length > MAX_CONSENT_HANDLE_CHARS) return refuse(request, "invalid_request", "the authorization request is too long");
  const client = await s.api.describeConsent(request);
  const headers = new Headers({ "set-cookie": await flowCookie(s.key, consentFlow(nonce)) });
  return consentPage(`/t/${s.team}/oauth/authorize`, handle, client, team, headers);
});

signIn.post("/t/:team/oauth/authorize", async (c) => {
  const s = step(c);
  if (!s) return absent(c);
  if (s instanceof Response) return s;
  const posted = await pageForm(c.req.raw);
  if (!posted.ok) {
    return posted.problem === "too_large"
      ? errorPage(413, STOPPED, `The consent form is over ${PAGE_FORM_LIMIT} bytes: it was not sent as the page sends it.`)
      : errorPage(400, STOPPED, "The consent form was not sent as the page sends it.");
  }
  const consent = await openConsentHandle(s.key, s.team, posted.form.get("handle") ?? "");
  if (!consent) return errorPage(400, STOPPED, "This consent page has expired, was altered or is another team's. Start again from the application.");
  // The page's own browser, once: its cookie is cleared here, so the same page cannot be posted twice from it.
  const flow = consentFlow(consent.nonce);
  if (!(await fromFlowBrowser(s.key, c.req.header("cookie"), flow))) {
    return errorPage(400, STOPPED, "This consent page was already used, or opened in another browser. Start again from the application.");
  }
  const { request } = consent;
  const headers = new Headers({ "set-cookie": await clearFlowCookie(s.key, flow) });
  if (posted.form.get("decision") !== "approve") {
    log({ event: "sign_in", team: s.team, outcome: "refused", client: request.clientId, reason: "declined at consent" });
    return refuse(request, "access_denied", "the member declined", headers);
  }
  const idp = await provider(c, s);
  if ("reason" in idp) return refuse(request, "access_denied", idp.reason, headers);
  const saved = newSignIn();
  const upstream = await s.api.beginUpstream(request, { data: saved, headers });
  try {
    const url = await signInUrl(idp, upstream.state, saved);
    return redirect(url, upstream.headers);
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    log({ event: "sign_in", team: s.team, outcome: "failed", client: request.clientId, reason: err.message });
    return refuse(request, "temporarily_unavailable", `the team's identity provider cannot be used: ${err.message}`, upstream.headers);
  }
});

signIn.get("/t/:team/oauth/callback", async (c, next) => {
  // A connect link's member sign-in comes back here too (the provider knows one redirect URI per team), and a team
  // admin's dashboard sign-in, whose route is the dashboard's (src/edge/dashboard/team-admin-routes.tsx, mounted after).
  if (isMemberSignInState(c.req.query("state"))) return finishMemberSignIn(c);
  if (isDashboardSignInState(c.req.query("state"))) return next();
  const s = step(c);
  if (!s) return absent(c);
  if (s instanceof Response) return s;
  let resumed: { request: AuthRequest; data: SignInState; headers: Headers };
  try {
    resumed = await s.api.finishUpstream<SignInState>(c.req.raw);
  } catch (err) {
    const page = expired(err);
    if (page) return page;
    throw err;
  }
  const { request, data, headers } = resumed;
  const url = new URL(c.req.url);
  if (url.searchParams.has("error")) {
    log({ event: "sign_in", team: s.team, outcome: "refused", client: request.clientId, reason: "cancelled at the identity provider" });
    return refuse(request, "access_denied", "the sign-in at the team's identity provider was cancelled or refused", headers);
  }
  const idp = await provider(c, s);
  if ("reason" in idp) return refuse(request, "access_denied", idp.reason, headers);
  let signed: SignedIn;
  try {
    signed = await finishSignIn(idp, url, data);
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    log({ event: "sign_in", team: s.team, outcome: "failed", client: request.clientId, reason: err.message });
    return refuse(request, "access_denied", `signing in at the team's identity provider failed: ${err.message}`, headers);
  }
  const { claims } = signed;
  const userId = await userIdFor(s.team, claims.iss, claims.sub);
  const member = memberClaims(idp.idp, claims);
  const admission = admitMember(idp.idp, member);
  if (!admission.ok) {
    log({ event: "sign_in", team: s.team, outcome: "refused", user: userId, client: request.clientId, reason: admission.reason });
    return refuse(request, "access_denied", admission.reason, headers);
  }
  await s.store.recordUser(s.team, userId, { sub: claims.sub, issuer: claims.iss, ...(admission.email === undefined ? {} : { email: admission.email }), emailVerified: member.emailVerified, groups: member.groups });
  // The member's groups and whether the email is verified go with the grant (the team's policies read them), and the
  // provider's refresh token if it gave one: each refresh of the grant learns the groups of that moment with it.
  const binding = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const props = memberProps({ team: s.team, binding, user: { id: userId } }, member, signed.refreshToken);
  const { redirectTo } = await s.api.completeAuthorization({
    request,
    userId,
    // Stored in clear beside the grant (the admin's grant list): nothing the user index does not already hold.
    metadata: { team: s.team, ...(admission.email === undefined ? {} : { email: admission.email }) },
    // The scopes the consent page showed: `mcp` when the client asked for none the server offers.
    scope: grantedScopes(request.scope),
    props,
  });
  const dropped = member.groupsDropped > 0 ? { groups_dropped: member.groupsDropped } : {};
  log({ event: "sign_in", team: s.team, outcome: "ok", user: userId, client: request.clientId, ...dropped });
  // Connect links opened later in this browser know which member it is (src/edge/oauth/member-cookie.ts).
  headers.append("set-cookie", await memberCookie(s.key, s.team, userId));
  return redirect(redirectTo, headers);
});
