// Team secrets at rest: AES-GCM under a key derived from the SECRETS_KEY Worker secret, bound to team and name.
import { base64url, fromBase64url } from "./bytes.ts";

/** Secret names: what `${secret:NAME}` may reference. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What KV holds for one secret: never the value, only its ciphertext. */
export interface SealedSecret {
  v: 1;
  iv: string;
  data: string;
}

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** HKDF-SHA256 from the Worker secret (any long random string) to a 256-bit AES-GCM key. */
function aesKey(material: string): Promise<CryptoKey> {
  let key = keys.get(material);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", encoder.encode(material), "HKDF", false, ["deriveKey"])
      .then((base) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: encoder.encode("dynmcp-edge secrets v1"), info: new Uint8Array() },
          base,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keys.set(material, key);
  }
  return key;
}

/** Binds a ciphertext to its team and name: copied under another team or name, it no longer opens. */
const aad = (team: string, name: string) => encoder.encode(`dynmcp-secret\n${team}\n${name}`);

export async function sealSecret(material: string, team: string, name: string, value: string): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: aad(team, name) },
    await aesKey(material),
    encoder.encode(value),
  );
  return { v: 1, iv: base64url(iv), data: base64url(new Uint8Array(data)) };
}

/** The value, or undefined when the ciphertext does not open under this key, team and name. */
export async function openSecret(material: string, team: string, name: string, sealed: SealedSecret): Promise<string | undefined> {
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(sealed.iv), additionalData: aad(team, name) },
      await aesKey(material),
      fromBase64url(sealed.data),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return undefined;
  }
}


