// The MCP route's last step: the request goes to its session's object, with the router's headers instead of the
// client's credentials; the object's answer comes back without any CORS headers of its own.
import type { Handler } from "hono";
import { ROUTE_HEADERS, sessionObjectName } from "../../lib/env.ts";
import { subjectHeaderValue } from "../../auth/subject-header.ts";
import type { McpEnv, Principal } from "./context.ts";
import { startingView } from "./view.ts";
import { resolveView } from "../../config/view.ts";
import { codeModeAvailable } from "../../lib/settings.ts";
import { httpError } from "../../lib/responses.ts";

/** Client headers that never travel further than the router. */
const DROPPED = ["authorization", "cookie", ...Object.values(ROUTE_HEADERS)];

export const forward: Handler<McpEnv> = async (c) => {
  const request = c.req.raw;
  const who = c.get("principal");
  const sessionId = c.get("sessionId");
  // One native copy of the client's headers, then the few that stop here are taken out.
  const headers = objectHeaders(request);
  setPrincipal(headers, who);
  headers.set(ROUTE_HEADERS.session, sessionId);
  // The view: at initialize the one the session starts with; later only one the URL names (the object checks it).
  const view = c.get("initialize") ? startingView(c.get("view"), who) : c.get("view");
  // A view asked for that this deployment does not run is refused here, before any object is reached.
  if (c.get("initialize") && view !== undefined) {
    const chosen = resolveView(view, undefined, codeModeAvailable(c.env));
    if ("refused" in chosen) return httpError("invalid_view", chosen.refused);
  }
  if (c.get("initialize")) headers.set(ROUTE_HEADERS.initialize, "1");
  if (view) headers.set(ROUTE_HEADERS.view, view);
  const stub = c.env.SESSIONS.getByName(sessionObjectName(who.team, sessionId));
  const response = await stub.fetch(new Request(request.url, { method: request.method, headers, body: c.get("body"), signal: request.signal }));
  return withoutObjectCors(response);
};

/**
 * Who is calling, as the object reads it: the team, the token (or grant binding), an OAuth caller's user id, and the
 * subject the team's policies are decided for (both eras send every request through here).
 */
export function setPrincipal(headers: Headers, who: Principal): void {
  headers.set(ROUTE_HEADERS.team, who.team);
  headers.set(ROUTE_HEADERS.tokenId, who.tokenId);
  if (who.user) headers.set(ROUTE_HEADERS.user, who.user.id);
  headers.set(ROUTE_HEADERS.subject, subjectHeaderValue(who.subject));
}

/** The client's headers for an object: a copy without its credentials and without any route header it sent. */
export function objectHeaders(request: Request): Headers {
  const headers = new Headers(request.headers);
  for (const name of DROPPED) headers.delete(name);
  return headers;
}

/**
 * CORS is the router's decision alone: the session transport sets none, and any the object's answer carried would
 * be dropped here. The answer's headers are copied once (a fetched answer's are immutable); the origin step sets
 * its own on this copy.
 */
export function withoutObjectCors(response: Response): Response {
  const out = new Headers(response.headers);
  let foreign: string[] | undefined;
  for (const name of out.keys()) if (name.startsWith("access-control-")) (foreign ??= []).push(name);
  if (foreign) for (const name of foreign) out.delete(name);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: out });
}
