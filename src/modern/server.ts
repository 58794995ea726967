// The MCP server of the 2026-07-28 era: one SDK `Server` per request (the era has no sessions), behind the SDK's
// per-request handler, which checks the era's headers and envelope and answers server/discover. The router answers
// server/discover itself (`staticHandler`, no object woken); everything else, tools/list included, runs in a session
// object over its upstream registry (src/modern/object-handler.ts). Design: docs/protocol-2026.md.
import { Server, createMcpHandler, type McpHttpHandler, type ServerCapabilities, type ServerContext } from "@modelcontextprotocol/server";
import { PRODUCT } from "../lib/env.ts";
import { CATALOG_FRESH_MS } from "../store/catalog-cache.ts";

/** The revision this server speaks besides the 2025 ones (which the session objects serve). */
export const MODERN_VERSION = "2026-07-28";

/**
 * What a 2026-era client is told the proxy can do: the 2025 session's capabilities without resources/subscribe
 * (subscriptions/listen takes its place). `logging` stays: upstreams' log messages reach a request that asked for
 * them with its `logLevel` (the era has no logging/setLevel).
 */
export const MODERN_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

/**
 * How long a client may reuse a tools/list (ms), private to its credentials: no longer than the team's catalogs are
 * taken as current (CATALOG_FRESH_MS, 5 minutes), since discover_tool's description carries them. A list that shows
 * an upstream connecting or unavailable says less (src/modern/tool-list.ts).
 */
export const LIST_TTL_MS = CATALOG_FRESH_MS;

/** How long a client may reuse server/discover (ms): the capabilities change only with a deployment. */
export const DISCOVER_TTL_MS = 3_600_000;

/**
 * A fresh server with the era's capabilities and cache hints; the object registers its tools/list (the team's
 * catalog in discover_tool, or the code view's tools). `verify` checks a retried request's state before any handler
 * runs (src/modern/request-state.ts): a state that does not verify is answered -32602 by the SDK.
 */
export function modernServer(verify?: (state: string, ctx: ServerContext) => Promise<unknown>): Server {
  return new Server(
    { name: PRODUCT.name, version: PRODUCT.version },
    {
      capabilities: MODERN_CAPABILITIES,
      cacheHints: {
        "tools/list": { ttlMs: LIST_TTL_MS, cacheScope: "private" },
        "server/discover": { ttlMs: DISCOVER_TTL_MS, cacheScope: "private" },
      },
      ...(verify ? { requestState: { verify } } : {}),
    },
  );
}

/**
 * How often a streamed answer carries a keep-alive comment. A client closes its connection to cancel (the era's
 * way); a proxy in front that notices a closed connection only when it writes (wrangler dev's does) passes the
 * cancellation on at the next comment, so this bounds how long an abandoned upstream call runs on.
 */
export const KEEP_ALIVE_MS = 2_000;

/**
 * A strict 2026-07-28 handler (2025 traffic never reaches it: the router sends that to the sessions). `sse` for
 * the objects' handlers: the answer's stream starts at once, so a client that closes its connection cancels a
 * stream the object is writing, which aborts the request's signal and the upstream call.
 */
export function modernHandler(factory: (request: Request | undefined) => Server | Promise<Server>, responseMode: "auto" | "sse" = "auto"): McpHttpHandler {
  return createMcpHandler((ctx) => factory(ctx.requestInfo), { legacy: "reject", responseMode, keepAliveMs: KEEP_ALIVE_MS });
}

/** The router's handler (one per isolate): server/discover, nothing else. */
let statics: McpHttpHandler | undefined;

export function staticHandler(): McpHttpHandler {
  return (statics ??= modernHandler(() => modernServer()));
}

/** The methods the router's static handler answers without waking an object: the same for every view and principal. */
export const STATIC_METHODS: ReadonlySet<string> = new Set(["server/discover"]);
