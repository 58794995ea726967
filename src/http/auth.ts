// Bearer token → team principal: the token must be one of this team's, compared in constant time.
import { hashToken, tokenId } from "../auth/token.ts";
import { loadToken } from "../config/load.ts";
import { numberSetting } from "../env.ts";
import { DEFAULT_TOKEN_CACHE_SECONDS, TokenCache } from "./token-cache.ts";

export interface Principal {
  team: string;
  tokenId: string;
}

const encoder = new TextEncoder();

/** Equal-length strings compared without an early exit (workerd's timingSafeEqual). */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.byteLength !== y.byteLength) return false;
  return crypto.subtle.timingSafeEqual(x, y);
}

const caches = new Map<number, TokenCache>();
function cacheFor(setting: string | undefined): TokenCache {
  const seconds = numberSetting(setting, DEFAULT_TOKEN_CACHE_SECONDS);
  let cache = caches.get(seconds);
  if (!cache) caches.set(seconds, (cache = new TokenCache(seconds)));
  return cache;
}

export async function authenticate(
  kv: KVNamespace,
  team: string,
  header: string | null,
  cacheSeconds?: string,
): Promise<Principal | null> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  const token = match?.[1];
  if (!token) return null;
  const id = tokenId(token);
  if (!id) return null;
  const [record, hash] = await Promise.all([
    cacheFor(cacheSeconds).get(`${team}/${id}`, () => loadToken(kv, team, id)),
    hashToken(token),
  ]);
  if (!record || !constantTimeEqual(record.hash, hash)) return null;
  return { team, tokenId: id };
}
