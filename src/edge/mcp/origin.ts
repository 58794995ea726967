// The MCP route's first step: the Origin check (DNS rebinding), CORS preflight, and CORS headers on the answer.
//
// Hono's own `cors` middleware is not used: it cannot give the same answers. It answers every preflight with 204
// (ours refuses one from a foreign origin with 403), sets Access-Control-Expose-Headers and appends `Vary: Origin`
// on every answer, also same-origin and Origin-less ones (ours only on allowed cross-origin answers), joins its
// lists with "," and adds `Vary: Access-Control-Request-Headers` to preflights; and it rebuilds the answer twice
// on the way out (the `c.res` setter copies it, `c.header` after `next()` copies it again), which is the very
// work this step avoids by setting three headers on the answer in place.
import type { MiddlewareHandler } from "hono";
import type { Env } from "../../lib/env.ts";
import { publicOrigin } from "../../lib/public-url.ts";
import type { McpEnv } from "./context.ts";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

const EXPOSE_HEADERS = "Mcp-Session-Id, Mcp-Protocol-Version";
const ALLOW_METHODS = "GET, POST, DELETE, OPTIONS";
const ALLOW_HEADERS = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";

/**
 * Origins a browser may call from: the proxy's own and ALLOWED_ORIGINS (comma-separated). The proxy's own origin
 * is PUBLIC_URL's when set; otherwise only a loopback origin counts as its own, since the Host header (and with it
 * the request URL) is the attacker's to choose in a DNS-rebinding attack on a local proxy.
 */
interface OriginPolicy {
  /** ALLOWED_ORIGINS, parsed. */
  listed: ReadonlySet<string>;
  /** PUBLIC_URL's origin; undefined when unset or malformed. */
  publicOrigin: string | undefined;
  /** PUBLIC_URL is set (a malformed one adds nothing, and the loopback rule does not apply either). */
  hasPublicUrl: boolean;
}

/** Parsed once per isolate (per pair of settings: tests run the app with other bindings too). */
let cached: { allowedOrigins: string | undefined; publicUrl: string | undefined; policy: OriginPolicy } | undefined;

function policyFor(env: Env): OriginPolicy {
  if (cached && cached.allowedOrigins === env.ALLOWED_ORIGINS && cached.publicUrl === env.PUBLIC_URL) return cached.policy;
  const listed = new Set((env.ALLOWED_ORIGINS ?? "").split(",").map((o) => o.trim().replace(/\/+$/, "")).filter(Boolean));
  const policy = { listed, publicOrigin: publicOrigin(env), hasPublicUrl: Boolean(env.PUBLIC_URL) };
  cached = { allowedOrigins: env.ALLOWED_ORIGINS, publicUrl: env.PUBLIC_URL, policy };
  return policy;
}

function allowed(policy: OriginPolicy, origin: string, self: URL): boolean {
  if (policy.listed.has(origin)) return true;
  if (policy.hasPublicUrl) return origin === policy.publicOrigin;
  return LOOPBACK_HOSTS.has(self.hostname) && origin === self.origin;
}

/**
 * A request without Origin (as hosts send them) passes untouched; one from elsewhere is refused (DNS rebinding).
 * An allowed cross origin gets CORS headers on whatever the later steps answer: an explicit origin (never `*`),
 * the session header exposed. Same-origin requests need none.
 */
export const origin: MiddlewareHandler<McpEnv> = async (c, next) => {
  const request = c.req.raw;
  const from = request.headers.get("origin");
  if (request.method === "OPTIONS") return preflight(c.env, request, from);
  // The common case (MCP hosts send no Origin): nothing to parse, nothing to add.
  if (from === null) return next();
  const self = new URL(request.url);
  if (!allowed(policyFor(c.env), from, self)) {
    return Response.json({ error: "forbidden_origin", message: "Requests from this Origin are not allowed." }, { status: 403 });
  }
  await next();
  // An unhandled error's 500 (app.ts) has never carried CORS headers.
  if (from === self.origin || c.error) return;
  // Every answer of the later steps is built here with mutable headers, so they are set in place: no copy.
  const headers = c.res.headers;
  headers.set("Access-Control-Allow-Origin", from);
  headers.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  headers.set("Vary", "Origin");
};

/** 204 with the CORS headers for an allowed cross origin; 403 for anything else (also same-origin and no Origin). */
function preflight(env: Env, request: Request, from: string | null): Response {
  if (from === null) return new Response(null, { status: 403 });
  const self = new URL(request.url);
  if (from === self.origin || !allowed(policyFor(env), from, self)) return new Response(null, { status: 403 });
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": from,
      "Access-Control-Expose-Headers": EXPOSE_HEADERS,
      Vary: "Origin",
      "Access-Control-Allow-Methods": ALLOW_METHODS,
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
    },
  });
}
