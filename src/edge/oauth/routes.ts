// The OAuth routes of each team (docs/oauth.md), served only with OAUTH_HOSTS=on: RFC 9728 protected
// resource metadata for the team's MCP URL, and the library's own endpoints of the team's authorization server
// (RFC 8414 metadata, token with refresh and RFC 7009 revocation, RFC 7591 registration). The authorize step (sign-in
// at the team's identity provider, consent) comes with the host flow; until then nothing here is advertised unless
// the setting is on.
import { Hono, type MiddlewareHandler } from "hono";
import type { Env } from "../../lib/env.ts";
import { publicBase } from "../../lib/public-url.ts";
import { addressLimitAnswer, clientAddress, countAddressEvent, overAddressLimit } from "../common/address-limit.ts";
import { MCP_SCOPE, authorizationServer, teamResource } from "./server.ts";
import { absent, teamOf, type OAuthContext } from "./team-param.ts";
import { signIn } from "./authorize.ts";
import { upstreamConnect } from "./upstream-connect.ts";
import { tokenEndpoint } from "./token-endpoint.ts";
import { memberSignIn } from "./member-cookie.ts";
import { REGISTRATION_LIMIT, TOKEN_FORM_LIMIT, limitedForLibrary } from "./forms.ts";
import { log } from "../../lib/log.ts";

export const oauth = new Hono<{ Bindings: Env }>();

/**
 * Every request of the routes that read or write (the library's token and registration, the sign-in, the connect
 * link and their callbacks) counts against its client address's budget (src/edge/common/address-limit.ts); over it, 429
 * before anything is read. The metadata documents are constant answers and are not counted.
 */
const addressLimit: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const address = clientAddress(c.req.raw);
  const waitSeconds = overAddressLimit("oauth", address) ?? (await countAddressEvent(c.env, "oauth", address, "oauth"));
  if (waitSeconds) return addressLimitAnswer(waitSeconds, "sign-in and connect requests");
  await next();
};
// Registered before the routes, so that it runs first.
oauth.use("/t/:team/oauth/*", addressLimit);
oauth.use("/t/:team/connect/*", addressLimit);
oauth.use("/oauth/upstream/callback", addressLimit);

/** The protected resource metadata document's URL for a team's MCP URL (RFC 9728 §3.1: the path inserted). */
export const resourceMetadataUrl = (base: string, team: string): string => `${base}/.well-known/oauth-protected-resource/t/${team}/mcp`;

oauth.get("/.well-known/oauth-protected-resource/t/:team/mcp", (c) => {
  const team = teamOf(c);
  if (!team) return absent(c);
  const base = publicBase(c.env, c.req.raw);
  return c.json(
    {
      resource: teamResource(base, team),
      authorization_servers: [`${base}/t/${team}`],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ["header"],
      resource_name: `dynmcp-edge: team ${team}`,
    },
    200,
    { "cache-control": "public, max-age=3600", "access-control-allow-origin": "*" },
  );
});

/**
 * The library's endpoints of the team's server: its metadata, metadata and registration (the token endpoint is `token` below). A POST's
 * body is read here, within the endpoint's limit, and the library gets those bytes (src/edge/oauth/forms.ts).
 */
const library = (limit: number) => async (c: OAuthContext): Promise<Response> => {
  const team = teamOf(c);
  if (!team) return absent(c);
  const request = await limitedForLibrary(c.req.raw, limit);
  if (request instanceof Response) {
    log({ event: "oauth_error", team, code: "invalid_request", category: "body", reason: "body_too_large", status: request.status });
    return request;
  }
  // Hono types its execution context with its own interface; it is the runtime's, as the library expects.
  return authorizationServer(publicBase(c.env, c.req.raw), team).fetch(request, c.env, c.executionCtx as unknown as ExecutionContext);
};

/**
 * The token endpoint (code exchange, refresh, revocation): the library's, its body read within the limit first, each
 * code and refresh token used once (src/edge/oauth/token-endpoint.ts).
 */
async function token(c: OAuthContext): Promise<Response> {
  const team = teamOf(c);
  if (!team) return absent(c);
  const request = await limitedForLibrary(c.req.raw, TOKEN_FORM_LIMIT);
  if (request instanceof Response) {
    log({ event: "oauth_error", team, code: "invalid_request", category: "body", reason: "body_too_large", status: request.status });
    return request;
  }
  const server = authorizationServer(publicBase(c.env, c.req.raw), team);
  return tokenEndpoint(c.env, team, server, request, c.executionCtx as unknown as ExecutionContext);
}

oauth.get("/.well-known/oauth-authorization-server/t/:team", library(0));
oauth.on(["POST", "OPTIONS"], "/t/:team/oauth/token", token);
oauth.on(["POST", "OPTIONS"], "/t/:team/oauth/register", library(REGISTRATION_LIMIT));
// The member's way through: authorize (consent), the team's identity provider, and back (src/edge/oauth/authorize.ts).
oauth.route("/", signIn);
// Connecting accounts to OAuth-protected upstreams, with or without OAUTH_HOSTS (src/edge/oauth/upstream-connect.ts), and
// the member sign-in a connect link may ask for (src/edge/oauth/member-cookie.ts).
oauth.route("/", upstreamConnect);
oauth.route("/", memberSignIn);
