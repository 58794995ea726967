// Session ids that carry a signature over team and token: a foreign id is refused before any object wakes.
import { base64url } from "../bytes.ts";
import { constantTimeEqual, type Principal } from "./auth.ts";

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keys.set(secret, key);
  }
  return key;
}

async function signature(secret: string, who: Principal, nonce: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), new TextEncoder().encode(`${who.team}\n${who.tokenId}\n${nonce}`));
  return base64url(new Uint8Array(mac).slice(0, 16));
}

/** `<nonce>.<signature>`: 128 random bits, then 128 bits of HMAC over team, token id and nonce. */
export async function mintSessionId(secret: string, who: Principal): Promise<string> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  return `${nonce}.${await signature(secret, who, nonce)}`;
}

/** Ids this isolate already verified for a team and token (a hot session is checked by HMAC once). */
const verified = new Set<string>();
const MAX_VERIFIED = 10_000;

/** True only for an id minted for this very team and token. */
export async function sessionIdBelongsTo(secret: string, who: Principal, sessionId: string): Promise<boolean> {
  const key = `${secret}\n${who.team}\n${who.tokenId}\n${sessionId}`;
  if (verified.has(key)) return true;
  const m = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/.exec(sessionId);
  if (!m) return false;
  const ok = constantTimeEqual(m[2]!, await signature(secret, who, m[1]!));
  if (ok) {
    if (verified.size >= MAX_VERIFIED) verified.clear();
    verified.add(key);
  }
  return ok;
}
