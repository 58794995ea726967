// The MCP route's protocol checks (MCP 2025-11-25 transport rules), each a step with the answer it gives.
import type { MiddlewareHandler } from "hono";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { httpError } from "../../lib/responses.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { MODERN_VERSION } from "../../modern/server.ts";
import type { McpEnv } from "./context.ts";

/** Versions whose transport still allowed JSON-RPC batches (removed in 2025-06-18). */
const BATCH_ERA = new Set(["2025-03-26", "2024-11-05", "2024-10-07"]);

const SUPPORTED = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);
const SUPPORTED_LIST = SUPPORTED_PROTOCOL_VERSIONS.join(", ");

/** POST, GET and DELETE are the transport's methods (OPTIONS is the origin step's). */
export const method: MiddlewareHandler<McpEnv> = async (c, next) => {
  const m = c.req.raw.method;
  if (m !== "POST" && m !== "GET" && m !== "DELETE") {
    return httpError("method_not_allowed", "Method not allowed: use POST, GET or DELETE.", { Allow: "POST, GET, DELETE" });
  }
  await next();
};

/** The answer to an MCP-Protocol-Version header that names no version the proxy speaks. */
export const unsupportedVersion = (version: string): Response =>
  httpError("unsupported_version", `Unsupported MCP-Protocol-Version ${JSON.stringify(version.slice(0, 40))}; supported: ${MODERN_VERSION}, ${SUPPORTED_LIST}.`);

/** A 2025 version (the 2026 one is the era step's to check, against the body's envelope). */
export const isSessionVersion = (version: string): boolean => SUPPORTED.has(version);

/**
 * An MCP-Protocol-Version header must name a version the proxy speaks; it becomes `protocolVersion`. A POST's is
 * checked by the era step (era.ts), once the body says which era the request is of.
 */
export const protocolVersion: MiddlewareHandler<McpEnv> = async (c, next) => {
  const version = c.req.raw.headers.get("mcp-protocol-version");
  if (version !== null && c.req.raw.method !== "POST" && !SUPPORTED.has(version)) return unsupportedVersion(version);
  c.set("protocolVersion", version);
  await next();
};

const ACCEPTS_JSON = 1;
const ACCEPTS_SSE = 2;
/** Accept header → what it takes. Hosts send the same header on every request, so it is parsed once. */
const acceptCache = new BoundedCache<string, number>({ max: 256 });

function accepted(header: string): number {
  let flags = acceptCache.get(header);
  if (flags !== undefined) return flags;
  flags = 0;
  for (const part of header.toLowerCase().split(",")) {
    const media = part.split(";")[0]!.trim();
    if (media === "application/json" || media === "*/*") flags |= ACCEPTS_JSON;
    if (media === "text/event-stream" || media === "*/*") flags |= ACCEPTS_SSE;
  }
  if (header.length <= 256) acceptCache.set(header, flags);
  return flags;
}

const isJsonType = (header: string | null): boolean =>
  header === "application/json" || (header ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";

/** POST bodies are JSON, and the client must take both JSON and SSE answers; GET must take SSE. */
export const mediaTypes: MiddlewareHandler<McpEnv> = async (c, next) => {
  const request = c.req.raw;
  if (request.method === "POST") {
    if (!isJsonType(request.headers.get("content-type"))) {
      return httpError("unsupported_media_type", "Unsupported Media Type: send the body as application/json.");
    }
    if (accepted(request.headers.get("accept") ?? "") !== (ACCEPTS_JSON | ACCEPTS_SSE)) {
      return httpError("not_acceptable", "Not Acceptable: accept both application/json and text/event-stream.");
    }
  } else if (request.method === "GET" && !(accepted(request.headers.get("accept") ?? "") & ACCEPTS_SSE)) {
    return httpError("not_acceptable", "Not Acceptable: a GET stream needs Accept: text/event-stream.");
  }
  await next();
};

const isMessage = (m: unknown): boolean =>
  typeof m === "object" && m !== null && !Array.isArray(m) && (m as { jsonrpc?: unknown }).jsonrpc === "2.0";

/**
 * The parsed body (POST only): batches only for the protocol versions that had them, and a JSON-RPC message must
 * at least be an object (or, in the batch era, an array of them).
 */
export const jsonRpc: MiddlewareHandler<McpEnv> = async (c, next) => {
  const message = c.get("message");
  if (Array.isArray(message)) {
    const version = c.get("protocolVersion");
    if (version !== null && !BATCH_ERA.has(version)) {
      return httpError("invalid_request", `JSON-RPC batches are not part of MCP ${version}: send one message per request.`);
    }
    if (message.length === 0) return httpError("invalid_request", "An empty JSON-RPC batch is not a request.");
  }
  if (!(Array.isArray(message) ? message.every(isMessage) : isMessage(message))) {
    return httpError("invalid_request", "Invalid Request: the body must be a JSON-RPC 2.0 message.");
  }
  await next();
};
