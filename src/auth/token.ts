// Team tokens: their format, minting and hashing (Web Crypto, so the CLI and the Worker share it).

const TOKEN = /^dmt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface MintedToken {
  id: string;
  token: string;
  hash: string;
}

export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A new token: `dmt_<id>_<secret>`; the id names it in storage, the secret is 256 random bits. */
export async function mintToken(): Promise<MintedToken> {
  const id = hex(crypto.getRandomValues(new Uint8Array(8)));
  const token = `dmt_${id}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return { id, token, hash: await hashToken(token) };
}

/** The token id, or undefined when the string is not a token at all. */
export function tokenId(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}

/** SHA-256 of the whole token, hex: tokens are random, so a fast hash is enough at rest. */
export async function hashToken(token: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token))));
}
