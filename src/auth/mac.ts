// The proxy's one MAC: HMAC-SHA256 under SESSION_KEY, cut to 128 bits. Session ids, toolset handles and connect
// links are all signed with it, each over a text of its own shape, so one kind can never stand in for another.
import { base64url } from "../bytes.ts";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

/** The first 128 bits of HMAC-SHA256(secret, text), base64url (22 characters). */
export async function mac128(secret: string, text: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(text));
  return base64url(new Uint8Array(mac, 0, 16));
}

/**
 * Equal-length strings compared without an early exit: every byte is looked at whatever the first difference (the
 * same in workerd and in Node, which share this file). A length difference is not a secret: tokens and MACs have
 * fixed lengths.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.byteLength !== y.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < x.byteLength; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/** True when `mac` is the MAC of `text`, compared in constant time. */
export async function macMatches(secret: string, text: string, mac: string): Promise<boolean> {
  return constantTimeEqual(mac, await mac128(secret, text));
}

/** 128 random bits, base64url (22 characters). */
export const nonce128 = (): string => base64url(crypto.getRandomValues(new Uint8Array(16)));
