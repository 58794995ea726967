// What the OAuth routes read of a request's body, and at most how much. Every body goes through the one limited reader
// (src/lib/request-body.ts), the OAuth library's endpoints too: they get a request carrying the bytes already read, so a
// body over the route's limit is refused before more than the limit is read, whatever its headers say.
import { readLimited, withBody } from "../../lib/request-body.ts";

/** The proxy's own pages post a handle and a decision (consent) or a connect handle (sign-in). */
export const PAGE_FORM_LIMIT = 4 * 1024;
/** The token endpoint: a code or refresh token, a verifier, URIs, and at most a client assertion (a JWT). */
export const TOKEN_FORM_LIMIT = 8 * 1024;
/** A dynamic client registration's metadata document (RFC 7591). */
export const REGISTRATION_LIMIT = 8 * 1024;

export type PageForm = { ok: true; form: URLSearchParams } | { ok: false; problem: "not_a_form" | "too_large" };

/** A form one of the proxy's pages posts: urlencoded, within PAGE_FORM_LIMIT (or the larger limit of a form that carries a text). */
export async function pageForm(request: Request, limit = PAGE_FORM_LIMIT): Promise<PageForm> {
  if (!request.headers.get("content-type")?.startsWith("application/x-www-form-urlencoded")) return { ok: false, problem: "not_a_form" };
  const read = await readLimited(request, limit);
  if (!read.ok) return { ok: false, problem: "too_large" };
  return { ok: true, form: new URLSearchParams(new TextDecoder().decode(read.bytes)) };
}

/**
 * The request for one of the library's endpoints, its body read within `limit`; or the refusal of a larger one, an
 * OAuth error as the library's own (RFC 6749 5.2, RFC 7591 3.2.2 share the shape), with its CORS headers.
 */
export async function limitedForLibrary(request: Request, limit: number): Promise<Request | Response> {
  if (request.method !== "POST") return request;
  const read = await readLimited(request, limit);
  if (read.ok) return withBody(request, read.bytes);
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  const origin = request.headers.get("origin");
  if (origin) {
    headers.set("access-control-allow-origin", origin);
    headers.set("vary", "Origin");
  }
  const body = { error: "invalid_request", error_description: `The request body is over ${limit} bytes.` };
  return new Response(JSON.stringify(body), { status: 413, headers });
}
