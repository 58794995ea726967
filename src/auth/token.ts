// Team tokens: their format, minting and hashing (Web Crypto, so the CLI and the Worker share it).

import { base64url, hex, sha256Hex } from "../lib/bytes.ts";

const TOKEN = /^dmt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface MintedToken {
  id: string;
  token: string;
  hash: string;
}


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
export function hashToken(token: string): Promise<string> {
  return sha256Hex(token);
}
