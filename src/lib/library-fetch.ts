// Fetches a library makes by itself, with the global `fetch` and no option to pass another: the team's authorization
// server (@cloudflare/workers-oauth-provider) fetches a host's client metadata document, the URL the host chose as its
// `client_id`, and the `jwks_uri` such a document names, following redirects. Code that calls into such a library
// does so inside `withGuardedFetch`: every fetch made on its behalf, wherever in the library, then goes through the
// guarded fetch (the URL guard on every hop, redirects followed one at a time and capped, the time limit). Outside
// that scope the global `fetch` is the platform's, untouched.
//
// The scope is an AsyncLocalStorage (nodejs_compat), so concurrent requests of one isolate keep their own; the global
// is wrapped once, when this module loads, and the wrapper only looks up the scope.
import { AsyncLocalStorage } from "node:async_hooks";
import { guardedFetch } from "./guarded-fetch.ts";
import type { UrlPolicy } from "./url-guard.ts";

const scope = new AsyncLocalStorage<typeof fetch>();

const platformFetch = globalThis.fetch;
const scopedFetch: typeof fetch = (input, init) => {
  const guarded = scope.getStore();
  // The guarded fetch's own requests leave the scope, so that they reach the platform's fetch.
  return guarded ? scope.exit(() => guarded(input, init)) : platformFetch.call(globalThis, input, init);
};
globalThis.fetch = scopedFetch;

/** Runs `fn` with every global fetch made on its behalf (its promises' too) through the guarded fetch under `policy`. */
export function withGuardedFetch<T>(policy: UrlPolicy, fn: () => T): T {
  return scope.run(guardedFetch(policy), fn);
}

/**
 * `target` with each of its methods run in `withGuardedFetch`: for a library's helper object, whose methods may fetch
 * (a client lookup reads a metadata document).
 */
export function guardedMethods<T extends object>(target: T, policy: UrlPolicy): T {
  return new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key, object);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => withGuardedFetch(policy, () => Reflect.apply(value, object, args));
    },
  });
}
