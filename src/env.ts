// The Worker's bindings, and what the router hands the session object with each request.
import type { SessionObject } from "./session/object.ts";

export interface Env {
  /** Team configs and token hashes (layout in docs/storage.md). */
  TEAMS: KVNamespace;
  /** One session object per MCP session. */
  SESSIONS: DurableObjectNamespace<SessionObject>;
  /** HMAC key that signs session ids (a Worker secret; `npm run dev` writes one into .dev.vars). */
  SESSION_KEY?: string;
}

/** Headers only the router sets on requests to a session object (stripped from client requests). */
export const ROUTE_HEADERS = {
  team: "x-dynmcp-team",
  tokenId: "x-dynmcp-token-id",
  session: "x-dynmcp-session",
  initialize: "x-dynmcp-initialize",
} as const;

export const PRODUCT = { name: "dynmcp-edge", version: "0.1.0" } as const;
