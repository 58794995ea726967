// What the MCP route's steps learn and hand on (Hono context variables, `c.set` / `c.get`), in the order they learn it.
import type { Subject } from "../../config/subject.ts";
import type { View } from "../../config/view.ts";
import type { Env } from "../../lib/env.ts";

/**
 * Who is calling: a team and one of its tokens (learned by the token step), with the token's view setting if it has
 * one. An OAuth caller (docs/oauth.md) has `tokenId` `g.<grant binding>`, so everything bound to a token (session
 * ids, toolset handles, request state, objects) binds to the grant, and `user`.
 */
export interface Principal {
  team: string;
  tokenId: string;
  view?: View;
  user?: { id: string };
  /**
   * Who the team's policies are decided for: the token's id and label, or the member's user id, verified email and
   * groups as the access token's grant holds them. Learned with the principal (a cached token record or access token:
   * no read of its own) and handed to the session object with every request (forward.ts).
   */
  subject: Subject;
}

export interface McpVariables {
  /** auth.ts, token: the caller. */
  principal: Principal;
  /** rate-limit.ts, rateLimit: the limiter's verdict (true: within the limit), until `withinRateLimit` takes it. */
  rateLimit: Promise<boolean> | undefined;
  /** guards.ts, protocolVersion: the MCP-Protocol-Version header, null when absent (already checked). */
  protocolVersion: string | null;
  /** session-id.ts, sessionKey: the SESSION_KEY secret that signs session ids. */
  sessionKey: string;
  /** body-steps.ts, sizeLimit (POST only): the body as it came, within MAX_BODY_BYTES, forwarded byte for byte. */
  body: string | undefined;
  /** body-steps.ts, jsonMessage (POST only): the body parsed. */
  message: unknown;
  /** session-id.ts, session: the checked (or, for initialize, newly minted) session id. */
  sessionId: string;
  /** session-id.ts, session: true when this request starts the session. */
  initialize: boolean;
  /** view.ts, view: the view the URL's `?view=` asks for (checked), undefined without one. */
  view: View | undefined;
}

/** The MCP route's Hono environment: the Worker's bindings and the steps' variables. */
export interface McpEnv {
  Bindings: Env;
  Variables: McpVariables;
}
