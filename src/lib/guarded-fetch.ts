// Fetches to URLs that a third party named (an identity provider's endpoints, an upstream's authorization server, a
// host's client metadata document): each one checked by the upstream URL guard first, and so is every redirect on the
// way, which is followed here one hop at a time (at most MAX_REDIRECTS), never by the platform's fetch; the time limit
// covers the whole chain. As oauth4webapi takes its options: plain http only where private upstreams are allowed
// (local runs and tests).
import * as oauth from "oauth4webapi";
import { checkUpstreamUrl, type UrlPolicy } from "./url-guard.ts";

/** How long one request to a provider may take, its redirects included. */
export const GUARDED_FETCH_TIMEOUT_MS = 10_000;
/** Redirects followed at most for one request (a provider needs one or two). */
export const MAX_REDIRECTS = 5;

/** Why a URL was not fetched: the guard's reason (the URL is not repeated: it may carry a query of the provider's). */
export class GuardedFetchError extends Error {
  override readonly name = "GuardedFetchError";
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function guard(url: string, policy: UrlPolicy, hop: number): void {
  const verdict = checkUpstreamUrl(url, policy);
  if (verdict.ok) return;
  const what = hop === 0 ? "a URL" : "a redirect to a URL";
  throw new GuardedFetchError(`the provider named ${what} the proxy may not fetch: ${verdict.reason}`);
}

/**
 * `fetch`, with the URL guard in front of every hop. A request that asks for `redirect: "manual"` gets the redirect
 * itself, as from fetch; otherwise redirects are followed as fetch would (303, and 301/302 after a POST, become a GET
 * without body; 307/308 repeat the request), except that credentials (`authorization`, `cookie`) do not go to another
 * origin. Without a signal of the caller's, the chain gets GUARDED_FETCH_TIMEOUT_MS.
 */
export function guardedFetch(policy: UrlPolicy): typeof fetch {
  return async (input, init) => {
    // Judged before anything is built from it: the guard's reason is the clearer one for a URL fetch cannot read.
    guard(input instanceof Request ? input.url : String(input), policy, 0);
    const request = new Request(input, init);
    const follow = request.redirect !== "manual";
    const signal = init?.signal ?? AbortSignal.timeout(GUARDED_FETCH_TIMEOUT_MS);
    let url = request.url;
    let method = request.method;
    const headers = new Headers(request.headers);
    // Read once, so that a 307 or 308 can send it again (these are small: forms and JSON documents of the proxy's).
    let body: ArrayBuffer | undefined = method === "GET" || method === "HEAD" ? undefined : await request.arrayBuffer();
    for (let hop = 0; ; hop++) {
      if (hop > 0) guard(url, policy, hop);
      const response = await fetch(url, { ...init, method, headers, body: body ?? null, redirect: "manual", signal });
      const location = response.headers.get("location");
      if (!follow || !REDIRECTS.has(response.status) || location === null) return response;
      await response.body?.cancel();
      if (hop === MAX_REDIRECTS) throw new GuardedFetchError(`the provider redirected more than ${MAX_REDIRECTS} times`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new GuardedFetchError("the provider redirected to something that is not a URL");
      }
      if (response.status === 303 ? method !== "HEAD" : response.status <= 302 && method === "POST") {
        method = "GET";
        body = undefined;
        headers.delete("content-type");
        headers.delete("content-length");
      }
      if (next.origin !== new URL(url).origin) {
        headers.delete("authorization");
        headers.delete("cookie");
      }
      url = next.href;
    }
  };
}

/** oauth4webapi's options for one request: the guarded fetch, the time limit, and http only under the local policy. */
export function guardedFetchOptions(policy: UrlPolicy): { [oauth.customFetch]: typeof fetch; [oauth.allowInsecureRequests]?: boolean; signal: AbortSignal } {
  return {
    [oauth.customFetch]: guardedFetch(policy),
    ...(policy.allowPrivate ? { [oauth.allowInsecureRequests]: true } : {}),
    signal: AbortSignal.timeout(GUARDED_FETCH_TIMEOUT_MS),
  };
}
