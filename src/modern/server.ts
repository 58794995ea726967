// The MCP server of the 2026-07-28 era: one SDK `Server` per request (the era has no sessions), behind the SDK's
// per-request handler, which checks the era's headers and envelope and answers server/discover. The router answers
// server/discover and tools/list itself with the static part (`staticHandler`, no object woken); everything else
// runs in a session object over its upstream registry (`toolsetHandler`). Design: docs/protocol-2026.md.
import { Server, createMcpHandler, type McpHttpHandler, type ServerCapabilities, type ServerContext } from "@modelcontextprotocol/server";
import { PRODUCT } from "../env.ts";
import { modernDefinitions } from "../meta/definitions.ts";

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
 * How long a client may reuse a list (ms), private to its credentials. tools/list changes only with a deployment
 * (load_mcp's description states the handle lifetime), so an hour; server/discover likewise.
 */
export const LIST_TTL_MS = 3_600_000;

/**
 * A fresh server with the era's capabilities, cache hints and the fixed tools/list (three meta-tools). `verify`
 * checks a retried request's state before any handler runs (src/modern/request-state.ts): a state that does not
 * verify is answered -32602 by the SDK.
 */
export function modernServer(handleLifetimeSeconds: number, verify?: (state: string, ctx: ServerContext) => Promise<unknown>): Server {
  const server = new Server(
    { name: PRODUCT.name, version: PRODUCT.version },
    {
      capabilities: MODERN_CAPABILITIES,
      cacheHints: {
        "tools/list": { ttlMs: LIST_TTL_MS, cacheScope: "private" },
        "server/discover": { ttlMs: LIST_TTL_MS, cacheScope: "private" },
      },
      ...(verify ? { requestState: { verify } } : {}),
    },
  );
  const tools = modernDefinitions(handleLifetimeSeconds);
  server.setRequestHandler("tools/list", () => ({ tools }));
  return server;
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

/** Handlers of the router, one per handle lifetime (a setting): server/discover and tools/list, nothing else. */
const statics = new Map<number, McpHttpHandler>();

export function staticHandler(handleLifetimeSeconds: number): McpHttpHandler {
  let handler = statics.get(handleLifetimeSeconds);
  if (!handler) {
    handler = modernHandler(() => modernServer(handleLifetimeSeconds));
    statics.set(handleLifetimeSeconds, handler);
  }
  return handler;
}

/** The methods the router's static handler answers without waking an object. */
export const STATIC_METHODS: ReadonlySet<string> = new Set(["server/discover", "tools/list"]);
