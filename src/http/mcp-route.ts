// The MCP endpoint /t/<team>/mcp: authenticate, tie the request to its session, forward it to the session object.
import type { Context } from "hono";
import { TeamName } from "../config/schema.ts";
import { ROUTE_HEADERS, numberSetting, sessionObjectName, type Env } from "../env.ts";
import { log } from "../log.ts";
import { jsonRpcError, unauthorized } from "../responses.ts";
import { authenticate, type Principal } from "./auth.ts";
import { DEFAULT_BODY_LIMIT, readBody } from "./body.ts";
import { allowedOrigins, checkBatch, checkMediaTypes, checkOrigin, checkProtocolVersion, checkShape, corsHeaders, preflight } from "./guards.ts";
import { mintSessionId, sessionIdBelongsTo } from "./session-id.ts";

const SESSION_HEADER = "mcp-session-id";
/** Client headers that never travel further than the router. */
const DROPPED = new Set(["authorization", "cookie", ...Object.values(ROUTE_HEADERS)]);

const isInitialize = (message: unknown): boolean =>
  typeof message === "object" && message !== null && !Array.isArray(message) &&
  (message as { method?: unknown }).method === "initialize";

export async function mcpRoute(c: Context<{ Bindings: Env }>): Promise<Response> {
  const request = c.req.raw;
  const self = new URL(request.url);
  const origins = allowedOrigins(self, c.env);
  if (request.method === "OPTIONS") return preflight(request, origins, self);
  const response = await handle(c, request, origins);
  const cors = corsHeaders(request, origins, self);
  if (Object.keys(cors).length === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(cors)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function handle(c: Context<{ Bindings: Env }>, request: Request, origins: Set<string>): Promise<Response> {
  const refused = checkOrigin(request, origins);
  if (refused) return refused;
  const team = c.req.param("team") ?? "";
  if (!TeamName.safeParse(team).success) return unauthorized();
  const principal = await authenticate(c.env.TEAMS, team, request.headers.get("authorization"), c.env.TOKEN_CACHE_SECONDS);
  if (!principal) return unauthorized();

  const limited = await rateLimit(c.env, principal);
  if (limited) return limited;
  if (!["POST", "GET", "DELETE"].includes(request.method)) {
    return jsonRpcError(405, -32000, "Method not allowed: use POST, GET or DELETE.", { Allow: "POST, GET, DELETE" });
  }
  const bad = checkProtocolVersion(request) ?? checkMediaTypes(request);
  if (bad) return bad;
  const secret = c.env.SESSION_KEY;
  if (!secret) {
    log({ event: "misconfigured", reason: "SESSION_KEY is not set" });
    return jsonRpcError(503, -32603, "The proxy is not configured: its operator must set the SESSION_KEY secret.");
  }

  let body: string | undefined;
  let message: unknown;
  if (request.method === "POST") {
    const limit = numberSetting(c.env.MAX_BODY_BYTES, DEFAULT_BODY_LIMIT, 1);
    const read = await readBody(request, limit);
    if (!read.ok) return jsonRpcError(413, -32600, `Request body too large (the limit is ${limit} bytes).`);
    body = read.text;
    try {
      message = JSON.parse(body);
    } catch {
      return jsonRpcError(400, -32700, "Parse error: the body is not valid JSON.");
    }
    const invalid = checkBatch(request, message) ?? checkShape(message);
    if (invalid) return invalid;
  }

  let sessionId = request.headers.get(SESSION_HEADER);
  let initialize = false;
  if (sessionId) {
    if (!(await sessionIdBelongsTo(secret, principal, sessionId))) {
      return jsonRpcError(404, -32001, "Session not found: start a new session with initialize.");
    }
  } else {
    if (!isInitialize(message)) {
      return jsonRpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required (only initialize may come without one).");
    }
    initialize = true;
    sessionId = await mintSessionId(secret, principal);
  }
  return forward(c.env, request, body, principal, sessionId, initialize);
}

/** One limiter key per team token; the limits are the binding's (wrangler.toml). */
async function rateLimit(env: Env, who: Principal): Promise<Response | undefined> {
  if (!env.TOKEN_LIMITER) return undefined;
  const { success } = await env.TOKEN_LIMITER.limit({ key: `${who.team}/${who.tokenId}` });
  if (success) return undefined;
  return jsonRpcError(429, -32000, "Too many requests for this token: slow down and retry after the time given in Retry-After.", {
    "Retry-After": "60",
  });
}

async function forward(
  env: Env,
  request: Request,
  body: string | undefined,
  who: Principal,
  sessionId: string,
  initialize: boolean,
): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of request.headers) if (!DROPPED.has(name.toLowerCase())) headers.set(name, value);
  headers.set(ROUTE_HEADERS.team, who.team);
  headers.set(ROUTE_HEADERS.tokenId, who.tokenId);
  headers.set(ROUTE_HEADERS.session, sessionId);
  if (initialize) headers.set(ROUTE_HEADERS.initialize, "1");
  const stub = env.SESSIONS.getByName(sessionObjectName(who.team, sessionId));
  const response = await stub.fetch(new Request(request.url, { method: request.method, headers, body, signal: request.signal }));
  // CORS is the router's decision, not the transport's (it would answer any origin).
  const out = new Headers(response.headers);
  for (const name of [...out.keys()]) if (name.startsWith("access-control-")) out.delete(name);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: out });
}
