// A member's grant at the team's token endpoint (the OAuth library's `tokenExchangeCallback`, run before it issues
// anything): what its access tokens carry, and at each refresh, who the member is now. The groups a team's policies
// match on and the rules that admitted the member may both have changed since sign-in, so a refresh learns the
// member's claims again (through the provider's refresh token, when it gave one; else the claims kept at sign-in) and
// asks the team's rules of this moment. A member they no longer admit loses the grant: `invalid_grant`, on which the
// library revokes it with all its tokens. A provider that cannot be reached refuses the refresh for now
// (`temporarily_unavailable`, the grant and its refresh token untouched): without it no one could sign in either.
import { OAuthError, type TokenExchangeCallbackOptions, type TokenExchangeCallbackResult } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { admitMember, memberClaims, userIdFor, type MemberClaims } from "../../auth/user.ts";
import { GrantProps, accessTokenProps, memberProps } from "./grant-props.ts";
import { SignInError, renewSignIn, teamProvider, teamStore, type Provider } from "./sign-in.ts";

/** Seconds a host is asked to wait before it tries a refresh the provider could not serve again. */
const RETRY_SECONDS = "30";

const refused = (description: string): OAuthError =>
  new OAuthError("invalid_grant", { description, internal: { category: "token-exchange-callback", reason: "member_not_admitted" } });

const unavailable = (description: string): OAuthError =>
  new OAuthError("temporarily_unavailable", {
    description,
    statusCode: 503,
    headers: { "Retry-After": RETRY_SECONDS },
    internal: { category: "token-exchange-callback", reason: "identity_provider_unavailable" },
  });

/**
 * The props of what the token endpoint issues: at a code exchange, the grant's without the provider's refresh token
 * for the access token; at a refresh of a member's grant, the member as they are now (or a refusal, thrown). A grant
 * made before the proxy kept groups is left as it is (no groups) until it expires.
 */
export async function exchangedProps(options: TokenExchangeCallbackOptions<Env>, base: string, team: string): Promise<TokenExchangeCallbackResult | undefined> {
  const parsed = GrantProps.safeParse(options.props);
  if (!parsed.success || parsed.data.team !== team) return undefined;
  const props = parsed.data;
  if (options.grantType !== "refresh_token" || props.member === undefined) {
    return props.idpRefreshToken === undefined ? undefined : { accessTokenProps: accessTokenProps(props) };
  }
  const renewed = await renewedMember(options.env, base, team, props);
  return { newProps: renewed, accessTokenProps: accessTokenProps(renewed) };
}

/** The grant's props with the member's claims of now, if the team's rules still admit them; else an OAuthError. */
async function renewedMember(env: Env, base: string, team: string, props: GrantProps): Promise<GrantProps> {
  const provider = await teamProvider(env, teamStore(env), team, base);
  if ("reason" in provider) {
    // No provider any more: nobody signs in to the team this way. A provider whose secret cannot be read is a
    // misconfiguration an admin can mend: the grant waits.
    const gone = (await teamStore(env).getIdp(team)) === undefined;
    log({ event: "grant_refresh", team, user: props.user.id, outcome: gone ? "refused" : "failed", reason: provider.reason });
    throw gone ? refused(provider.reason) : unavailable(provider.reason);
  }
  const now = await currentClaims(provider, team, props);
  const admission = admitMember(provider.idp, now.claims);
  if (!admission.ok) {
    log({ event: "grant_refresh", team, user: props.user.id, outcome: "refused", reason: admission.reason });
    throw refused(admission.reason);
  }
  return memberProps(props, now.claims, now.refreshToken);
}

/** The member's claims through the provider's refresh token, or those the grant kept when it holds none. */
async function currentClaims(provider: Provider, team: string, props: GrantProps): Promise<{ claims: MemberClaims; refreshToken?: string }> {
  const kept: MemberClaims = {
    ...(props.user.email === undefined ? {} : { email: props.user.email }),
    emailVerified: props.member?.emailVerified ?? false,
    groups: props.member?.groups ?? [],
    groupsDropped: 0,
  };
  if (props.idpRefreshToken === undefined) return { claims: kept };
  try {
    const signed = await renewSignIn(provider, props.idpRefreshToken);
    if ((await userIdFor(team, signed.claims.iss, signed.claims.sub)) !== props.user.id) {
      throw new SignInError("the provider answered for another account", "refused");
    }
    return { claims: memberClaims(provider.idp, signed.claims), ...(signed.refreshToken === undefined ? {} : { refreshToken: signed.refreshToken }) };
  } catch (err) {
    if (!(err instanceof SignInError)) throw err;
    log({ event: "grant_refresh", team, user: props.user.id, outcome: err.kind === "refused" ? "refused" : "failed", reason: err.message });
    // The provider no longer honours the member's sign-in (signed out, removed, its grant revoked): neither does the proxy.
    throw err.kind === "refused" ? refused(`the team's identity provider ended the member's sign-in: ${err.message}`) : unavailable(`the team's identity provider cannot be reached: ${err.message}`);
  }
}
