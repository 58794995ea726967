// Toolset handles of the 2026-07-28 era: what a `load_mcp` returns, so that a client without sessions can reach the
// servers it loaded on any later request (docs/protocol-2026.md). A handle is opaque to the client and carries its
// own proof: `<nonce>.ts2.<payload: its expiry>.<mac>`, a handle of src/auth/signed.ts bound to the team and the
// token. The router checks it before any object wakes; the nonce names the toolset's object.
import * as z from "zod";
import type { Principal } from "./context.ts";
import { expiry, handleFormat, openHandle, sealHandle } from "../../auth/signed.ts";
import { oldToolsetHandle } from "../../auth/legacy-handles.ts";

/** A toolset handle carries its expiry (unix seconds); it is bound to the team and the token. */
const TOOLSET = handleFormat("ts2", z.strictObject({ exp: z.int().positive() }));
/** What a signed value is bound to: the team and the token (or grant); the rest of a principal may change. */
type Bound = Pick<Principal, "team" | "tokenId">;
const bound = (who: Bound) => [who.team, who.tokenId];

export interface MintedHandle {
  handle: string;
  nonce: string;
  expiresAt: Date;
}

/** A new handle for this team and token, valid for `lifetimeSeconds`. */
export async function mintToolsetHandle(secret: string, who: Bound, lifetimeSeconds: number, now = Date.now()): Promise<MintedHandle> {
  const exp = Math.floor(now / 1000) + Math.max(1, Math.floor(lifetimeSeconds));
  const { handle, nonce } = await sealHandle(secret, TOOLSET, bound(who), { exp });
  return { handle, nonce, expiresAt: new Date(exp * 1000) };
}

/** Why a handle was refused: each is told to the caller in plain words (`handleProblem`). */
export type HandleProblem = "malformed" | "foreign" | "expired";

export type HandleCheck = { ok: true; nonce: string; expiresAt: Date } | { ok: false; problem: HandleProblem; expiredAt?: Date };

/**
 * A handle is good only when it is well formed, signed for this very team and token, and not expired (checked in
 * that order: the expiry of a handle that is not ours is never told). A `ts1.` handle of the form before is read too,
 * until it expires.
 */
export async function checkToolsetHandle(secret: string, who: Bound, handle: string, now = Date.now()): Promise<HandleCheck> {
  const opened = (await oldToolsetHandle(secret, TOOLSET, who.team, who.tokenId, handle)) ?? (await openHandle(secret, TOOLSET, bound(who), handle));
  if (!opened.ok) return opened;
  const expires = expiry(opened.payload.exp, now);
  if (expires.passed) return { ok: false, problem: "expired", expiredAt: expires.at };
  return { ok: true, nonce: opened.nonce, expiresAt: expires.at };
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
