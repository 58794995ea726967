// The Worker's bindings (the Durable Object ones typed by what is called on them), and what the router hands the
// session object: the headers of each request, and the name it reaches the object by.
import type { AuditEntry, AuditPage, AuditQuery, AuditServerFigures, AuditSummary } from "./audit-types.ts";

export type { AuditEntry, AuditPage, AuditQuery, AuditServerFigures, AuditSummary } from "./audit-types.ts";

/**
 * What the router and the admin API call on a session object besides `fetch` (which every stub has).
 * `SessionObject` implements it, so the two cannot drift apart.
 */
export interface SessionRpc extends Rpc.DurableObjectBranded {
  /** Take the team's current config at the start of the next request; false when the session has ended. */
  reload(): Promise<boolean>;
  /** Close one upstream's connection and connect it again now; false when there is no such session or upstream. */
  reconnect(name: string): Promise<boolean>;
  /**
   * Ends the session when it serves nothing right now (no request being answered and, unless `evenListening`, no
   * host GET stream open; an open one is ended with it) and answers true; false when it is in use. The team's index asks it of a principal's least recently used session when the
   * principal is at its bound. An object without a session answers true: there is nothing left to end.
   */
  endIfIdle(evenListening?: boolean): Promise<boolean>;
}

/** A session's place among its principal's live sessions: taken (another, idle, may have ended for it), or refused. */
export type Admission = { admitted: true; ended?: string } | { admitted: false; held: number };

/**
 * A team's token accounting for one UTC day, or a session's share not yet sent: numbers only (the zod schema and what
 * each means: src/session/usage.ts, README "Usage").
 */
export interface UsageFigures {
  sessions: number;
  direct: number;
  listed: number;
  answers: { lookups: number; searches: number; loads: number; executes: number };
  calls: { lookups: number; searches: number; loads: number; tools: number; executes: number };
}

/** Figures of one UTC day (`YYYY-MM-DD`). */
export interface UsageDay {
  day: string;
  figures: UsageFigures;
}

/**
 * One account's OAuth tokens at one upstream (the zod schema and what each field means: src/upstream/oauth-credential.ts).
 * Only the team's index holds it, sealed.
 */
export interface UpstreamCredential {
  issuer: string;
  resource: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret?: string | undefined;
  authMethod: "none" | "client_secret_basic" | "client_secret_post";
  accessToken: string;
  refreshToken?: string | undefined;
  expiresAt?: number | undefined;
  scope?: string | undefined;
  connectedAt: string;
}

/** What may be shown of a credential: who and what, never a token or a secret. */
export interface CredentialInfo {
  server: string;
  account: string;
  issuer: string;
  resource: string;
  scope?: string;
  expiresAt?: number;
  connectedAt: string;
  refreshable: boolean;
}

/** An access token for an upstream call, or why there is none. */
export type UpstreamTokenAnswer =
  | { ok: true; token: string; expiresAt?: number }
  | { ok: false; reason: "not_connected" | "refresh_failed" | "resource_changed"; detail: string };

/** A connect between its start and the upstream authorization server's callback (src/upstream/oauth-credential.ts). */
export interface ConnectTransaction {
  server: string;
  account: string;
  resource: string;
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  authMethod: "none" | "client_secret_basic" | "client_secret_post";
  verifier: string;
  redirectUri: string;
  scope?: string | undefined;
  expiresAt: number;
}

/**
 * A member's sign-in at the team's identity provider started from a connect link (src/edge/oauth/member-cookie.ts),
 * between its start and the provider's callback: the PKCE verifier and nonce, and the link to go back to.
 */
export interface MemberSignIn {
  verifier: string;
  nonce: string;
  server: string;
  handle: string;
  /** The tag of the link's account (src/auth/connect-link.ts): whose it is, before the sign-in says who that is. */
  accountTag: string;
  expiresAt: number;
}

/** A team admin's dashboard sign-in between its start and the provider's callback: the PKCE verifier and nonce. */
export interface DashboardSignIn {
  verifier: string;
  nonce: string;
  expiresAt: number;
}

/** Which of a team's lists changed (each one `true` is announced; absent or false ones are not). */
export interface ListsChanged {
  tools?: boolean;
  prompts?: boolean;
  resources?: boolean;
}

/** What sessions and the admin API call on a team's index (`TeamIndex` implements it). */
export interface TeamIndexRpc extends Rpc.DurableObjectBranded {
  /**
   * Lists a new session (a 2025 session at initialize, a 2026-era object at its first request) as one of its
   * principal's (`t:<token id>` or `u:<user id>`). At `max` live sessions the principal's least recently used idle
   * one is ended to make room (`endIfIdle`); when every one is in use the session is refused. `team` must be this
   * index's own team (checked).
   */
  admit(team: string, sessionId: string, principal: string, max: number): Promise<Admission>;
  /** The session was used now (told at most once a minute): it moves to the end of its principal's order of use. */
  seen(sessionId: string): Promise<void>;
  remove(sessionId: string): Promise<void>;
  list(): Promise<string[]>;
  /**
   * Adds a session's figures to the team's days, and to its principal's (`t:<token id>` or `u:<user id>`) when given;
   * days past the kept window are dropped, and older stored ones deleted.
   */
  addUsage(days: UsageDay[], principal?: string): Promise<void>;
  /** The team's figures of the last `days` UTC days (today included), oldest first; days with nothing recorded left out. */
  usage(days: number): Promise<UsageDay[]>;
  /** Each principal's figures summed over the last `days` UTC days, principals in order. */
  usageByPrincipal(days: number): Promise<Array<{ principal: string; figures: UsageFigures }>>;
  /**
   * Announces changed lists on the team's open 2026-era `subscriptions/listen` streams, each as the
   * `notifications/<list>/list_changed` its filter asked for (a no-op when none is open). Other teams' streams are
   * held by their own index objects and never hear it.
   */
  listsChanged(what: ListsChanged): Promise<void>;
  /**
   * An object of the team read an eager upstream's catalog anew and found its tools changed (`digest`: of the new
   * tools): announced on the listen streams as a tools list change, once per change however many objects report it.
   */
  catalogChanged(server: string, digest: string): Promise<void>;
  /** How many listen streams the team holds open in its index right now (for tests and an operator's view). */
  listenStreams(): Promise<number>;
  /**
   * The team's upstream OAuth credentials (src/team/credential-vault.ts). `account` is "shared" or a user id;
   * `team` must be this index's own team (checked). Stores a credential, sealed.
   */
  putCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<void>;
  /**
   * Stores a newly connected credential unless the account is already connected to the same resource: false then,
   * and nothing changed (a connected shared account is replaced only after an explicit disconnect).
   */
  addCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<boolean>;
  /**
   * Spends a connect link's nonce (kept until `expiresAt`, unix ms): "first" at its first use, "used" after, "full"
   * when too many unexpired links of the team were spent already.
   */
  spendConnectLink(team: string, nonce: string, expiresAt: number): Promise<"first" | "used" | "full">;
  /** An access token for the entry's URL `resource`, refreshed ahead of expiry or when `stale` was refused by the upstream. */
  upstreamToken(team: string, server: string, account: string, resource: string, stale?: string): Promise<UpstreamTokenAnswer>;
  /** What may be shown of the team's credentials, one server's or all. */
  listCredentials(team: string, server?: string): Promise<CredentialInfo[]>;
  /** Deletes credentials (a server's, an account's, or one of both); answers how many. */
  deleteCredentials(team: string, filter: { server?: string; account?: string }): Promise<number>;
  /** Keeps a connect's transaction under its `state` for ten minutes. */
  beginConnect(team: string, state: string, transaction: ConnectTransaction): Promise<void>;
  /** The connect `state` started, once. */
  takeConnect(team: string, state: string): Promise<ConnectTransaction | undefined>;
  /** Keeps a connect link's member sign-in under its `state` for ten minutes. */
  beginMemberSignIn(team: string, state: string, signIn: MemberSignIn): Promise<void>;
  /** The member sign-in `state` started, once. */
  takeMemberSignIn(team: string, state: string): Promise<MemberSignIn | undefined>;
  /** Keeps a team admin's dashboard sign-in under its `state` for ten minutes. */
  beginDashboardSignIn(team: string, state: string, signIn: DashboardSignIn): Promise<void>;
  /** The dashboard sign-in `state` started, once. */
  takeDashboardSignIn(team: string, state: string): Promise<DashboardSignIn | undefined>;
  /**
   * The team's token endpoint honoured the OAuth secret (a code, a refresh token) with this SHA-256 (lowercase hex):
   * true the first time within ten minutes, false for a second use (src/team/spent-secrets.ts).
   */
  spendOAuthSecret(team: string, hash: string): Promise<boolean>;
  /**
   * Adds entries to the team's audit trail (src/team/audit-trail.ts): idempotent by id, so a batch sent again adds
   * nothing twice; with `days` (the team config's `audit.days`, which sessions know), entries older than that are
   * deleted as new ones come. Answers how many were new.
   */
  appendAudit(team: string, entries: AuditEntry[], days?: number): Promise<number>;
  /** A page of the team's audit trail, newest first. */
  readAudit(team: string, query: AuditQuery): Promise<AuditPage>;
  /** The trail's tool calls at or after `since` (unix ms) counted per UTC day, and the `top` tools by calls. */
  auditSummary(team: string, since: number, top: number): Promise<AuditSummary>;
  /** The tool calls of the team's audit trail since a time, per server (the dashboard's upstreams page). */
  auditServers(team: string, since: number): Promise<AuditServerFigures[]>;
}

export interface Env {
  /** Team configs and token hashes (layout in docs/storage.md). */
  TEAMS: KVNamespace;
  /** One session object per MCP session. */
  SESSIONS: DurableObjectNamespace<SessionRpc>;
  /** One index per team: its live sessions (for admin reloads and reconnects). */
  TEAM_INDEX: DurableObjectNamespace<TeamIndexRpc>;
  /** Static assets, read only through this binding: the token table (src/catalog/tokenizer.ts). */
  ASSETS: Fetcher;
  /**
   * Workers AI, declared only in wrangler.toml's `[env.production]` (a top-level one would make `wrangler dev` ask for
   * a login): the embedder of the search's `workers-ai` setting (src/catalog/workers-ai-embedder.ts). Absent locally
   * and in tests, where that setting falls back to the static embedder.
   */
  AI?: Ai;
  /** Loads the Dynamic Workers code mode runs programs in (src/views/code/sandbox.ts); absent, code mode is off. */
  LOADER?: WorkerLoader;
  // The string settings below are read through `settings(env)` (src/lib/settings.ts), parsed once per env object.
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
  /** "off" serves 2025 sessions only, turning MCP 2026-07-28 requests away (default "on"). */
  MODERN_ERA?: string;
  /**
   * "off" refuses OAuth access tokens and turns the teams' authorization servers off (default "on"; connecting accounts
   * of OAuth upstreams works either way).
   */
  OAUTH_HOSTS?: string;
  /** "off" refuses the code view (default "on"; it also needs the LOADER binding). */
  CODE_MODE?: string;
  /** "off" runs programs without checkpoints (default "on": the CPU limit kept where the platform keeps none). */
  CODE_CHECKPOINTS?: string;
  /** Code mode's limits per execute: wall time (ms, default 30000), CPU time (ms, default 5000, enforced when deployed), tool calls (50), answer bytes (65536), console bytes (16384). */
  CODE_WALL_MS?: string;
  CODE_CPU_MS?: string;
  CODE_MAX_CALLS?: string;
  CODE_MAX_RESULT_BYTES?: string;
  CODE_MAX_LOG_BYTES?: string;
  /** Live sessions (2025 sessions and 2026-era objects) one principal may hold in a team (default 20; src/team/team-index.ts). */
  MAX_SESSIONS_PER_PRINCIPAL?: string;
  /** 2026-era listen streams one principal may hold open (default 10), and the seconds one lasts at most (default 1800). */
  LISTEN_STREAMS_PER_PRINCIPAL?: string;
  LISTEN_STREAM_MAX_SECONDS?: string;
  /** The OAuth library's grants, tokens and clients (@cloudflare/workers-oauth-provider names this binding). */
  OAUTH_KV?: KVNamespace;
  /** Per-token request limiter (Workers rate-limiting binding). */
  TOKEN_LIMITER?: RateLimit;
  /**
   * Per-client-address limiter (Workers rate-limiting binding, 100 a minute in every environment): failed
   * authentications, and requests of the OAuth and connect routes (src/edge/common/address-limit.ts).
   */
  ADDRESS_LIMITER?: RateLimit;
}

/** Headers only the router sets on requests to a session object (stripped from client requests). */
export const ROUTE_HEADERS = {
  team: "x-dynmcp-team",
  tokenId: "x-dynmcp-token-id",
  /** An OAuth principal's user id (never an email): sessions and log lines name who acted (docs/oauth.md 3.1). */
  user: "x-dynmcp-user",
  /**
   * Who policies are decided for (src/config/subject.ts) as compact JSON, ASCII only (src/auth/subject-header.ts): a
   * token's label, a member's verified email and groups. Read by the session object into its views' CallSession;
   * never logged, never sent upstream.
   */
  subject: "x-dynmcp-subject",
  session: "x-dynmcp-session",
  initialize: "x-dynmcp-initialize",
  view: "x-dynmcp-view",
  /** "modern": a 2026-07-28 request, served by the object's per-request handler (docs/protocol-2026.md). */
  era: "x-dynmcp-era",
  /** 2026 era: the checked toolset handle this object holds, and when it expires (ISO 8601). */
  toolset: "x-dynmcp-toolset",
  toolsetExpires: "x-dynmcp-toolset-expires",
  /** 2026 era: why the request's toolset handle was refused, as the sentence the caller gets. */
  toolsetProblem: "x-dynmcp-toolset-problem",
} as const;

/** The name of a session's object in SESSIONS: a session id is only unique within its team. */
export const sessionObjectName = (team: string, sessionId: string): string => `${team}/${sessionId}`;

export { PRODUCT } from "./product.ts";
