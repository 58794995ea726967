// The MCP endpoint /t/<team>/mcp, as a chain of steps read top to bottom. Each step either answers (and the chain
// stops there) or hands what it learned to the next through typed context variables (context.ts).
import { Hono } from "hono";
import type { McpEnv } from "./context.ts";
import { origin } from "./origin.ts";
import { teamName, token } from "./auth.ts";
import { failedAuthLimit, rateLimit, withinRateLimit } from "./rate-limit.ts";
import { jsonRpc, mediaTypes, method, protocolVersion } from "./guards.ts";
import { session, sessionKey } from "./session-id.ts";
import { jsonMessage, sizeLimit } from "./body-steps.ts";
import { forward } from "./forward.ts";
import { era } from "./era.ts";
import { initializedNotice } from "./notices.ts";
import { view } from "./view.ts";

/** The one path of the MCP endpoint; every step below is mounted on it alone. */
export const MCP_PATH = "/t/:team/mcp";

export const mcp = new Hono<McpEnv>()
  // origin.ts: preflight (204/403), a foreign Origin 403, CORS headers on the way out.
  .use(MCP_PATH, origin)
  // rate-limit.ts: an address over its budget of failed authentications is answered 429 here, before any read;
  // the 401s of the two steps below count against it.
  .use(MCP_PATH, failedAuthLimit)
  // auth.ts: the team name (zod, via Hono's validator), then the bearer token → `principal`; else the one 401.
  .use(MCP_PATH, teamName, token)
  // rate-limit.ts: asks the limiter about the token's request (→ `rateLimit`) and goes on meanwhile; over the
  // limit, the answer is 429 with Retry-After, whatever the steps below answer.
  .use(MCP_PATH, rateLimit)
  // guards.ts: POST/GET/DELETE (405), MCP-Protocol-Version (400) → `protocolVersion`, Content-Type (415), Accept (406).
  .use(MCP_PATH, method, protocolVersion, mediaTypes)
  // view.ts: `?view=` must name a view (400) → `view`.
  .use(MCP_PATH, view)
  // session-id.ts: SESSION_KEY must be set (503) → `sessionKey`; checked before the body is read, so a
  // misconfigured proxy answers 503 to whatever it is sent.
  .use(MCP_PATH, sessionKey)
  // POST only (a GET's or DELETE's body is neither limited nor read nor forwarded). body-steps.ts: the body read within its size limit (413) → `body`, JSON (-32700) → `message`;
  // guards.ts: batches only where the version has them, and the JSON-RPC shape (-32600);
  // era.ts: a 2026-07-28 request (its `_meta` envelope) is answered there or sent to its object; 2025 ones go on.
  .post(MCP_PATH, sizeLimit, jsonMessage, jsonRpc, era)
  // session-id.ts: the session id is the caller's (404), or the request is initialize (400) → `sessionId`, `initialize`;
  // rate-limit.ts: the limiter's verdict, waited for here (429); notices.ts: notifications/initialized answered
  // here (202); forward.ts: to the session's object.
  .all(MCP_PATH, session, withinRateLimit, initializedNotice, forward);
