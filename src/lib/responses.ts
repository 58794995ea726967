// The router's and session object's own answers (not the MCP server's): JSON bodies with plain messages.
import { HTTP_ANSWERS, SESSION_NOT_FOUND_MESSAGE, type HttpErrorKind } from "./errors.ts";

/** A JSON-RPC error outside any request context (id null), with its HTTP status. */
export function jsonRpcError(status: number, code: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status, headers });
}

/** One of the router's answers by its kind: the status and the JSON-RPC code come from `HTTP_ANSWERS` (src/lib/errors.ts). */
export function httpError(kind: HttpErrorKind, message: string, headers?: HeadersInit): Response {
  const { status, code } = HTTP_ANSWERS[kind];
  return jsonRpcError(status, code, message, headers);
}

/** The one answer to a session id nobody knows (the router's check, and the session object's own). */
export function sessionNotFound(): Response {
  return httpError("session_not_found", SESSION_NOT_FOUND_MESSAGE);
}

export const REALM = "dynmcp-edge";

/** What a 401's challenge adds when OAuth is on (RFC 6750 §3, RFC 9728 §5.1). */
export interface OAuthChallenge {
  resourceMetadata: string;
  scope: string;
  /** A token was sent (and refused): `error="invalid_token"`. */
  invalidToken: boolean;
}

/**
 * The one answer for every authentication failure, so team names and tokens cannot be probed. With OAuth on, its
 * challenge names the resource metadata, the same for every valid team name.
 */
export function unauthorized(oauth?: OAuthChallenge): Response {
  const challenge = oauth
    ? `Bearer realm="${REALM}", resource_metadata="${oauth.resourceMetadata}", scope="${oauth.scope}"${oauth.invalidToken ? ', error="invalid_token"' : ""}`
    : `Bearer realm="${REALM}"`;
  return Response.json(
    { error: "unauthorized", message: "A valid bearer token for this team is required." },
    { status: 401, headers: { "WWW-Authenticate": challenge } },
  );
}

/**
 * An OAuth access token of the team that was not granted the scope the MCP URL needs (RFC 6750 §3.1): 403 with a
 * challenge naming that scope, so a client can ask for it (a step-up sign-in). Only a valid token of this team gets it.
 */
export function insufficientScope(oauth: Omit<OAuthChallenge, "invalidToken">): Response {
  return Response.json(
    { error: "insufficient_scope", message: `This token was not granted the ${oauth.scope} scope: sign in again asking for it.` },
    {
      status: 403,
      headers: { "WWW-Authenticate": `Bearer realm="${REALM}", resource_metadata="${oauth.resourceMetadata}", scope="${oauth.scope}", error="insufficient_scope"` },
    },
  );
}
