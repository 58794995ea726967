// The proxy's public base URL: what OAuth names it (issuer, resource) and where the links it hands out point.
// PUBLIC_URL's origin when set, else the request's own origin (local runs; a deployment sets PUBLIC_URL, so a forged
// Host cannot change what tokens are minted for). The MCP route's Origin check counts the same origin as the proxy's.

/** The setting it reads (the Worker's env has it). */
interface PublicUrlSetting {
  PUBLIC_URL?: string | undefined;
}

/** Parsed once per isolate (per value: tests run the app with other bindings too). */
let cached: { publicUrl: string | undefined; origin: string | undefined } | undefined;

/** PUBLIC_URL's origin; undefined when it is unset or malformed (a malformed one adds nothing). */
export function publicOrigin(env: PublicUrlSetting): string | undefined {
  if (cached && cached.publicUrl === env.PUBLIC_URL) return cached.origin;
  let origin: string | undefined;
  if (env.PUBLIC_URL) {
    try {
      origin = new URL(env.PUBLIC_URL).origin;
    } catch {
      // A malformed PUBLIC_URL adds nothing.
    }
  }
  cached = { publicUrl: env.PUBLIC_URL, origin };
  return origin;
}

/** The base URL tokens are minted for and links start with: PUBLIC_URL's origin, else the request's. */
export function publicBase(env: PublicUrlSetting, request: Request): string {
  return publicOrigin(env) ?? new URL(request.url).origin;
}
