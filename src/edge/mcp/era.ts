// The MCP route's fork between the protocol's two eras (POST only, once the body is parsed). A 2025-era request
// (initialize, a session id, no per-request `_meta` envelope) goes on to the session steps unchanged. A 2026-07-28
// request (its envelope in `params._meta`) is checked by the SDK's own classifier, then answered here when it needs
// no upstream (server/discover), or sent to an object: the principal's (tools/list, whose discover_tool carries the
// team's catalog, and calls), or a toolset's when its call names a valid toolset handle (src/edge/mcp/toolset-handle.ts);
// with the code view (URL, token or the team's default), the principal's code object. `?view=direct` is refused: the
// era does not serve it. Design and reasons: docs/protocol-2026.md.
import type { Context, MiddlewareHandler } from "hono";
import {
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  classifyInboundRequest,
  type InboundClassificationOutcome,
  type JSONRPCNotification,
  type JSONRPCRequest,
} from "@modelcontextprotocol/server";
import { PRODUCT, ROUTE_HEADERS, sessionObjectName } from "../../lib/env.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL } from "../../views/definitions.ts";
import { DISCOVER_TTL_MS, MODERN_CAPABILITIES, MODERN_VERSION, STATIC_METHODS, staticHandler } from "../../modern/server.ts";
import { LISTEN_METHOD } from "../../modern/listen.ts";
import type { McpEnv, Principal } from "./context.ts";
import { objectHeaders, setPrincipal, withoutObjectCors } from "./forward.ts";
import { isSessionVersion, unsupportedVersion } from "./guards.ts";
import { isPlainSessionRequest } from "./plain-session-request.ts";
import { overRateLimit } from "./rate-limit.ts";
import { checkToolsetHandle, handleProblem, mintToolsetHandle } from "./toolset-handle.ts";
import { startingView } from "./view.ts";
import { teamDefaultView } from "../common/team-view.ts";
import { directRefused, resolveView } from "../../config/view.ts";
import { httpError } from "../../lib/responses.ts";
import { codeModeAvailable, settings } from "../../lib/settings.ts";

/** JSON-RPC code of an unsupported protocol version in the 2026 era (not in the SDK's ProtocolErrorCode). */
const UNSUPPORTED_VERSION = -32022;

/** What the classifier answers for a 2025 session's request (isPlainSessionRequest). */
const LEGACY: InboundClassificationOutcome = { kind: "legacy", reason: "no-claim" };

const META_TOOLS: ReadonlySet<string> = new Set([DISCOVER_TOOL, USE_TOOL, LOAD_MCP]);

const requestId = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

const rpcError = (status: number, id: string | number | null, code: number, message: string, data?: unknown): Response =>
  Response.json({ jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } }, { status });

/** Every version one of the two eras serves, newest first: what a discover names when the 2026 era is on. */
const versions = (modern: boolean): string[] => [...(modern ? [MODERN_VERSION] : []), ...SUPPORTED_PROTOCOL_VERSIONS];

/**
 * server/discover without the era's envelope (a client probing before it knows which era we speak): the versions of
 * both eras, so it can open either way. The envelope-carrying discover is the SDK handler's.
 */
function discoverForAnyEra(message: unknown, modern: boolean): Response {
  const serverInfo = { name: PRODUCT.name, version: PRODUCT.version };
  return Response.json({
    jsonrpc: "2.0",
    id: requestId(message),
    result: {
      supportedVersions: versions(modern),
      capabilities: MODERN_CAPABILITIES,
      ttlMs: DISCOVER_TTL_MS,
      cacheScope: "private",
      _meta: { [SERVER_INFO_META_KEY]: serverInfo },
    },
  });
}

/** The protocol version a modern request's envelope names. */
const envelopeVersion = (message: JSONRPCRequest | JSONRPCNotification): unknown =>
  (message.params?._meta as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];

const isClaimlessDiscover = (message: unknown): boolean =>
  typeof message === "object" && message !== null && !Array.isArray(message) && (message as { method?: unknown }).method === "server/discover";

export const era: MiddlewareHandler<McpEnv> = async (c, next) => {
  const headers = c.req.raw.headers;
  const message = c.get("message");
  const header = (name: string) => headers.get(name) ?? undefined;
  const version = headers.get("mcp-protocol-version");
  const route = isPlainSessionRequest(message, version === null || isSessionVersion(version))
    ? LEGACY
    : classifyInboundRequest({
        httpMethod: "POST",
        protocolVersionHeader: header("mcp-protocol-version"),
        mcpMethodHeader: header("mcp-method"),
        mcpNameHeader: header("mcp-name"),
        body: message,
      });
  const modern = settings(c.env).modernEra;
  if (route.kind === "legacy") {
    // For `?view=direct`, only the 2025 versions: this era does not serve that view.
    if (isClaimlessDiscover(message)) return (await overRateLimit(c)) ?? discoverForAnyEra(message, modern && c.get("view") !== "direct");
    if (version !== null && !isSessionVersion(version)) return unsupportedVersion(version);
    return next();
  }
  if (route.kind === "reject") return rpcError(route.httpStatus, requestId(message), route.code, route.message, route.data);
  const claimed = envelopeVersion(route.message);
  if (modern && claimed !== MODERN_VERSION) {
    // Answered here rather than by the SDK's handler: no object is woken for a version nobody serves.
    return rpcError(400, requestId(message), UNSUPPORTED_VERSION, `Unsupported protocol version ${JSON.stringify(String(claimed).slice(0, 40))}; supported: ${versions(true).join(", ")}.`, {
      supported: versions(true),
      requested: claimed,
    });
  }
  if (!modern) {
    // As a server of the 2025 versions only: a dual-era client falls back to initialize on this answer.
    const requested = String(claimed ?? version ?? MODERN_VERSION);
    return rpcError(400, requestId(message), UNSUPPORTED_VERSION, `MCP ${requested} is not enabled on this proxy; open a session with initialize (versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}).`, {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested,
    });
  }
  const over = await overRateLimit(c);
  if (over) return over;
  // Asked for in the URL, so refused rather than answered under another view. A 400 with a JSON-RPC error at the
  // discover probe sends a dual-era client (the v2 SDK's auto mode, @ai-sdk/mcp) to initialize, where direct is served.
  if (c.get("view") === "direct") return httpError("invalid_view", directRefused(codeModeAvailable(c.env)));
  // The era's only client notification is a listen subscription's notifications/cancelled, and closing the stream
  // already ended that subscription: acknowledged here, no object woken.
  if (route.messageKind === "notification") return c.body(null, 202);
  // The code view (the URL's, else the token's, else the team config's): its tools/list names the team's namespaces,
  // so the principal's code object answers it, and every tool call; server/discover and listen streams are the same
  // as the meta view's. The config is read only when neither the URL nor the token chose, and only for the requests
  // the view decides (tools/list and calls: not a discover or a listen stream). A token's or the team's `direct` is
  // served as meta: the host did not ask for it, and refusing would lock every 2026 client of such a team out.
  const method = route.message.method;
  const asked = startingView(c.get("view"), c.get("principal"));
  const byView = !(STATIC_METHODS.has(method) || method === LISTEN_METHOD);
  const team = asked === undefined && byView ? await teamDefaultView(c.env.TEAMS, c.get("principal").team, settings(c.env).tokenCacheSeconds) : undefined;
  const chosen = resolveView(asked, team, codeModeAvailable(c.env), true);
  if ("refused" in chosen) return httpError("invalid_view", chosen.refused);
  if (STATIC_METHODS.has(method)) return staticHandler().fetch(c.req.raw, { parsedBody: message });
  if (method === LISTEN_METHOD) return toTeamIndex(c);
  return chosen.view === "code" ? toCodeObject(c) : toObject(c, route.message);
};

/** The client's request for an object, with the router's headers of a 2026 request (plus `set`'s) in place of its own. */
function modernRequest(c: Context<McpEnv>, set: (headers: Headers) => void = () => {}): Request {
  const request = c.req.raw;
  const who = c.get("principal");
  const headers = objectHeaders(request);
  setPrincipal(headers, who);
  headers.set(ROUTE_HEADERS.era, "modern");
  set(headers);
  return new Request(request.url, { method: "POST", headers, body: c.get("body"), signal: request.signal });
}

/** A listen stream is the team's: its index object holds the team's streams and hears its config changes. */
async function toTeamIndex(c: Context<McpEnv>): Promise<Response> {
  return withoutObjectCors(await c.env.TEAM_INDEX.getByName(c.get("principal").team).fetch(modernRequest(c)));
}

/**
 * To the object that serves it: a meta-tool call naming a toolset goes to that toolset's object when the handle is
 * good (else to the principal's, told why it was refused); a load_mcp without one starts a new toolset; everything
 * else goes to the principal's object (its eager servers).
 */
async function toObject(c: Context<McpEnv>, message: JSONRPCRequest | JSONRPCNotification): Promise<Response> {
  const toolset = new Headers();
  const objectId = await toolsetObject(c, c.get("principal"), message, toolset);
  return toSessionObject(c, objectId, toolset);
}

/**
 * To the principal's code object (`c.<token>`): one per token (or grant), apart from its meta-tools object, so the
 * lazy servers its programs load and the runs paused for consent are that principal's code view's alone.
 */
function toCodeObject(c: Context<McpEnv>): Promise<Response> {
  const view = new Headers({ [ROUTE_HEADERS.view]: "code" });
  return toSessionObject(c, `c.${c.get("principal").tokenId}`, view);
}

/** The request to one of the team's session objects, with the router's headers and `extra` (route headers). */
async function toSessionObject(c: Context<McpEnv>, objectId: string, extra: Headers): Promise<Response> {
  const request = modernRequest(c, (headers) => {
    for (const [name, value] of extra) headers.set(name, value);
    headers.set(ROUTE_HEADERS.session, objectId);
  });
  return withoutObjectCors(await c.env.SESSIONS.getByName(sessionObjectName(c.get("principal").team, objectId)).fetch(request));
}

/** The object id for this request (`p.<token>` or `ts.<nonce>`), with the toolset's route headers set. */
async function toolsetObject(c: Context<McpEnv>, who: Principal, message: JSONRPCRequest | JSONRPCNotification, headers: Headers): Promise<string> {
  const principalObject = `p.${who.tokenId}`;
  if (message.method !== "tools/call") return principalObject;
  const params = (message.params ?? {}) as { name?: unknown; arguments?: Record<string, unknown> };
  if (typeof params.name !== "string" || !META_TOOLS.has(params.name)) return principalObject;
  const secret = c.get("sessionKey");
  const given = params.arguments?.["toolset"];
  if (typeof given === "string") {
    const check = await checkToolsetHandle(secret, who, given);
    if (!check.ok) {
      headers.set(ROUTE_HEADERS.toolsetProblem, handleProblem(check.problem, check.expiredAt));
      return principalObject;
    }
    headers.set(ROUTE_HEADERS.toolset, given);
    headers.set(ROUTE_HEADERS.toolsetExpires, check.expiresAt.toISOString());
    return `ts.${check.nonce}`;
  }
  if (params.name !== LOAD_MCP || given !== undefined) return principalObject;
  const minted = await mintToolsetHandle(secret, who, settings(c.env).sessionTtlSeconds);
  headers.set(ROUTE_HEADERS.toolset, minted.handle);
  headers.set(ROUTE_HEADERS.toolsetExpires, minted.expiresAt.toISOString());
  return `ts.${minted.nonce}`;
}
