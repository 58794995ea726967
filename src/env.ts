// The Worker's bindings, and what the router hands the session object with each request.
import type { SessionObject } from "./session/object.ts";
import type { TeamIndex } from "./session/team-index.ts";

export interface Env {
  /** Team configs and token hashes (layout in docs/storage.md). */
  TEAMS: KVNamespace;
  /** One session object per MCP session. */
  SESSIONS: DurableObjectNamespace<SessionObject>;
  /** One index per team: its live sessions (for admin reloads and reconnects). */
  TEAM_INDEX: DurableObjectNamespace<TeamIndex>;
  /** Seconds before idle upstream clients are closed (default 120). */
  UPSTREAM_IDLE_SECONDS?: string;
  /** Seconds before an unused session's storage is deleted (default 86400). */
  SESSION_TTL_SECONDS?: string;
  /** HMAC key that signs session ids (a Worker secret; `npm run dev` writes one into .dev.vars). */
  SESSION_KEY?: string;
  /** Key material for team secrets (AES-GCM); a Worker secret. */
  SECRETS_KEY?: string;
  /** Bearer token of the admin API; the admin API is off without it. */
  ADMIN_TOKEN?: string;
  /** "true" lifts the SSRF guard's address and https rules: local development and tests only. */
  ALLOW_PRIVATE_UPSTREAMS?: string;
  /** Comma-separated origins (besides the proxy's own) that browsers may call the MCP endpoint from. */
  ALLOWED_ORIGINS?: string;
  /** The deployed URL (e.g. https://mcp.example.com); its origin is the proxy's own. */
  PUBLIC_URL?: string;
  /** Seconds a token lookup may be cached in an isolate (default 30, at most 60; 0 disables). */
  TOKEN_CACHE_SECONDS?: string;
  /** Upper bound of a request body in bytes (default 4 MiB). */
  MAX_BODY_BYTES?: string;
  /** Upper bound of one upstream answer (a tool result, a catalog page) in bytes (default 8 MiB). */
  MAX_UPSTREAM_RESPONSE_BYTES?: string;
  /** Per-token request limiter (Workers rate-limiting binding). */
  TOKEN_LIMITER?: RateLimit;
}

/** Headers only the router sets on requests to a session object (stripped from client requests). */
export const ROUTE_HEADERS = {
  team: "x-dynmcp-team",
  tokenId: "x-dynmcp-token-id",
  session: "x-dynmcp-session",
  initialize: "x-dynmcp-initialize",
} as const;

/**
 * A numeric setting: its value when it is a finite number of at least `min`, else `fallback` (unset, empty,
 * garbage, or out of range, which would otherwise turn every request away).
 */
export function numberSetting(value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= min ? n : fallback;
}

export const PRODUCT = { name: "dynmcp-edge", version: "0.1.0" } as const;
