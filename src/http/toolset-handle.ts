// Toolset handles of the 2026-07-28 era: what a `load_mcp` returns, so that a client without sessions can reach the
// servers it loaded on any later request (docs/protocol-2026.md). A handle is opaque to the client and carries its
// own proof: `ts1.<nonce>.<expiry>.<mac>`, 128 random bits, the expiry in unix seconds (base 36), and 128 bits of
// HMAC over team, token, nonce and expiry. The router checks it before any object wakes; the nonce names the
// toolset's object.
import type { Principal } from "./context.ts";
import { mac128, macMatches, nonce128 } from "../auth/mac.ts";

const TOOLSET_PREFIX = "ts1.";
const HANDLE = /^ts1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/;

/** A text no session id can be signed over: session ids sign three lines that start with a team name (no `/` in it). */
const signedText = (who: Principal, nonce: string, expiry: string): string =>
  `toolset/v1\n${who.team}\n${who.tokenId}\n${nonce}\n${expiry}`;

export interface MintedHandle {
  handle: string;
  nonce: string;
  expiresAt: Date;
}

/** A new handle for this team and token, valid for `lifetimeSeconds`. */
export async function mintToolsetHandle(secret: string, who: Principal, lifetimeSeconds: number, now = Date.now()): Promise<MintedHandle> {
  const nonce = nonce128();
  const expirySeconds = Math.floor(now / 1000) + Math.max(1, Math.floor(lifetimeSeconds));
  const expiry = expirySeconds.toString(36);
  return { handle: `${TOOLSET_PREFIX}${nonce}.${expiry}.${await mac128(secret, signedText(who, nonce, expiry))}`, nonce, expiresAt: new Date(expirySeconds * 1000) };
}

/** Why a handle was refused: each is told to the caller in plain words (`handleProblem`). */
export type HandleProblem = "malformed" | "foreign" | "expired";

export type HandleCheck = { ok: true; nonce: string; expiresAt: Date } | { ok: false; problem: HandleProblem; expiredAt?: Date };

/**
 * A handle is good only when it is well formed, signed for this very team and token, and not expired (checked in
 * that order: the expiry of a handle that is not ours is never told).
 */
export async function checkToolsetHandle(secret: string, who: Principal, handle: string, now = Date.now()): Promise<HandleCheck> {
  const m = HANDLE.exec(handle);
  if (!m) return { ok: false, problem: "malformed" };
  const [, nonce, expiry, mac] = m as unknown as [string, string, string, string];
  if (!(await macMatches(secret, signedText(who, nonce, expiry), mac))) return { ok: false, problem: "foreign" };
  const expiresAt = new Date(parseInt(expiry, 36) * 1000);
  if (expiresAt.getTime() <= now) return { ok: false, problem: "expired", expiredAt: expiresAt };
  return { ok: true, nonce, expiresAt };
}

/** The sentence a refused handle gets (a tool error): what is wrong and what to do. */
export function handleProblem(problem: HandleProblem, expiredAt?: Date): string {
  switch (problem) {
    case "malformed":
      return "The toolset handle is not one this proxy issued (it is malformed): pass the toolset string load_mcp returned, unchanged, or call load_mcp again without one.";
    case "foreign":
      return "The toolset handle was not issued to this token (or it was altered): call load_mcp again without a toolset to get one of your own.";
    case "expired":
      return `The toolset handle expired at ${expiredAt?.toISOString() ?? "an earlier time"}: call load_mcp again without a toolset to get a new one.`;
  }
}
