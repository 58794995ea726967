// Bearer token → team principal: the token must be one of this team's, compared in constant time.
import { hashToken, tokenId } from "../auth/token.ts";
import { loadToken } from "../config/load.ts";

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

export async function authenticate(kv: KVNamespace, team: string, header: string | null): Promise<Principal | null> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  const token = match?.[1];
  if (!token) return null;
  const id = tokenId(token);
  if (!id) return null;
  const [record, hash] = await Promise.all([loadToken(kv, team, id), hashToken(token)]);
  if (!record || !constantTimeEqual(record.hash, hash)) return null;
  return { team, tokenId: id };
}
