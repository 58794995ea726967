// The upstream URL policy of this deployment: private addresses only when ALLOW_PRIVATE_UPSTREAMS=true (local use).
import type { UrlPolicy } from "./url-guard.ts";

export function urlPolicy(env: { ALLOW_PRIVATE_UPSTREAMS?: string }, self?: URL): UrlPolicy {
  return {
    allowPrivate: env.ALLOW_PRIVATE_UPSTREAMS === "true",
    ...(self ? { selfHosts: [self.host] } : {}),
  };
}
