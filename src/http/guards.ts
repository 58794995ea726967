// Pure checks of the MCP endpoint's requests (MCP 2025-11-25 transport rules), each with the answer it gives.
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { jsonRpcError } from "../responses.ts";

/** Versions whose transport still allowed JSON-RPC batches (removed in 2025-06-18). */
const BATCH_ERA = new Set(["2025-03-26", "2024-11-05", "2024-10-07"]);

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Origins a browser may call from: the proxy's own and ALLOWED_ORIGINS (comma-separated). The proxy's own origin
 * is PUBLIC_URL's when set; otherwise only a loopback origin counts as its own, since the Host header (and with it
 * the request URL) is the attacker's to choose in a DNS-rebinding attack on a local proxy.
 */
export function allowedOrigins(self: URL, env: { ALLOWED_ORIGINS?: string; PUBLIC_URL?: string }): Set<string> {
  const list = (env.ALLOWED_ORIGINS ?? "").split(",").map((o) => o.trim().replace(/\/+$/, "")).filter(Boolean);
  const own: string[] = [];
  if (env.PUBLIC_URL) {
    try {
      own.push(new URL(env.PUBLIC_URL).origin);
    } catch {
      // A malformed PUBLIC_URL adds nothing.
    }
  } else if (LOOPBACK_HOSTS.has(self.hostname)) {
    own.push(self.origin);
  }
  return new Set([...own, ...list]);
}

/** A request without Origin (as hosts send them) passes; one from elsewhere is refused (DNS rebinding). */
export function checkOrigin(request: Request, allowed: Set<string>): Response | undefined {
  const origin = request.headers.get("origin");
  if (origin === null || allowed.has(origin)) return undefined;
  return Response.json({ error: "forbidden_origin", message: "Requests from this Origin are not allowed." }, { status: 403 });
}

/** CORS headers for an allowed cross origin: explicit origin (never *), the session header exposed. */
export function corsHeaders(request: Request, allowed: Set<string>, self: URL): Record<string, string> {
  const origin = request.headers.get("origin");
  // Same-origin requests need no CORS headers; cross-origin ones get them only when allowed.
  if (origin === null || origin === self.origin || !allowed.has(origin)) return {};
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": "Mcp-Session-Id, Mcp-Protocol-Version",
    Vary: "Origin",
  };
}

export function preflight(request: Request, allowed: Set<string>, self: URL): Response {
  const cors = corsHeaders(request, allowed, self);
  if (!cors["Access-Control-Allow-Origin"]) return new Response(null, { status: 403 });
  return new Response(null, {
    status: 204,
    headers: {
      ...cors,
      "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
      "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
      "Access-Control-Max-Age": "600",
    },
  });
}

/** An MCP-Protocol-Version header must name a version the proxy speaks. */
export function checkProtocolVersion(request: Request): Response | undefined {
  const version = request.headers.get("mcp-protocol-version");
  if (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return jsonRpcError(400, -32000, `Unsupported MCP-Protocol-Version ${JSON.stringify(version.slice(0, 40))}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}.`);
}

const accepts = (request: Request, type: string) =>
  (request.headers.get("accept") ?? "").toLowerCase().split(",").some((part) => {
    const media = part.split(";")[0]!.trim();
    return media === type || media === "*/*";
  });

/** POST bodies are JSON, and the client must take both JSON and SSE answers; GET must take SSE. */
export function checkMediaTypes(request: Request): Response | undefined {
  if (request.method === "POST") {
    const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") return jsonRpcError(415, -32000, "Unsupported Media Type: send the body as application/json.");
    if (!accepts(request, "application/json") || !accepts(request, "text/event-stream")) {
      return jsonRpcError(406, -32000, "Not Acceptable: accept both application/json and text/event-stream.");
    }
  }
  if (request.method === "GET" && !accepts(request, "text/event-stream")) {
    return jsonRpcError(406, -32000, "Not Acceptable: a GET stream needs Accept: text/event-stream.");
  }
  return undefined;
}

/** Batches only for the protocol versions that had them. */
export function checkBatch(request: Request, message: unknown): Response | undefined {
  if (!Array.isArray(message)) return undefined;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !BATCH_ERA.has(version)) {
    return jsonRpcError(400, -32600, `JSON-RPC batches are not part of MCP ${version}: send one message per request.`);
  }
  if (message.length === 0) return jsonRpcError(400, -32600, "An empty JSON-RPC batch is not a request.");
  return undefined;
}

/** A JSON-RPC message must at least be an object (or, in the batch era, an array of them). */
export function checkShape(message: unknown): Response | undefined {
  const one = (m: unknown) => typeof m === "object" && m !== null && !Array.isArray(m) && (m as { jsonrpc?: unknown }).jsonrpc === "2.0";
  if (Array.isArray(message) ? message.every(one) : one(message)) return undefined;
  return jsonRpcError(400, -32600, "Invalid Request: the body must be a JSON-RPC 2.0 message.");
}
