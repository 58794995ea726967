// Fetches to URLs that a third party named (an identity provider's endpoints, an upstream's authorization server):
// each one checked by the upstream URL guard first, each bounded in time. As oauth4webapi takes its options: plain
// http only where private upstreams are allowed (local runs and tests).
import * as oauth from "oauth4webapi";
import { checkUpstreamUrl, type UrlPolicy } from "./url-guard.ts";

/** How long one request to a provider may take. */
export const GUARDED_FETCH_TIMEOUT_MS = 10_000;

/** Why a URL was not fetched: the guard's reason (the URL is not repeated: it may carry a query of the provider's). */
export class GuardedFetchError extends Error {
  override readonly name = "GuardedFetchError";
}

/** `fetch`, with the URL guard in front of it. */
export function guardedFetch(policy: UrlPolicy): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const verdict = checkUpstreamUrl(url, policy);
    if (!verdict.ok) throw new GuardedFetchError(`the provider named a URL the proxy may not fetch: ${verdict.reason}`);
    return fetch(input, init);
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
