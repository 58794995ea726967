// The request state a 2026-era host carries between rounds of a call that waits for its input: which parked call
// (src/modern/parked-calls.ts), which 2026 upstream and its own state, or which code-mode program paused for the
// user's consent, and which tool call it belongs to.
// HMAC-signed by the SDK's codec under a key derived from SESSION_KEY, bound to the team, the token and the method,
// and valid as long as a park. Signed, not encrypted: the host can read it (ids, a digest, and the upstream's state,
// which that upstream gave out to be carried by its client anyway).
import { CLIENT_CAPABILITIES_META_KEY, createRequestStateCodec, type ClientCapabilities, type RequestStateCodec } from "@modelcontextprotocol/server";
import type { HostExtra } from "../relay/bridge.ts";
import { sha256Hex } from "../lib/bytes.ts";
import { canonicalJson } from "../store/pins.ts";
import { PARK_TTL_SECONDS } from "./parked-calls.ts";

/**
 * Either a parked call of this object (`c`: a 2025 upstream's request for input), or a 2026 upstream's own round
 * passed through (`u`: the upstream, `s`: its request state, carried inside ours so nothing is held here).
 */
export interface ParkState {
  c?: string;
  u?: string;
  s?: string;
  /** A passed-through round's nonce: each state is good for one retry. */
  n?: string;
  /** 1: the round asked the member to connect an OAuth upstream account; the retry calls the tool afresh. */
  k?: 1;
  /** 1: the parked call waits for the proxy's own question (its consent) and has sent nothing upstream yet. */
  b?: 1;
  /** A code-mode program paused for the user's consent (its id): the retry resumes it with their answer. */
  p?: string;
  /** The consent rounds one execute has asked so far, this one included (src/views/code/execute.ts caps them). */
  r?: number;
  /**
   * The tool the host called through use_tool and a digest of its arguments, or `execute` and the SHA-256 of its
   * code: a retry must repeat both.
   */
  t: string;
  d: string;
}

/** Whose calls an object holds (its session record's team and token). */
interface Owner {
  team: string;
  tokenId: string;
}

/** The codec's key: HMAC-SHA256(SESSION_KEY, a label of its own), 32 bytes whatever the secret's length. */
async function codecKey(sessionKey: string): Promise<Uint8Array> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(sessionKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode("dynmcp/requestState/v1")));
}

/**
 * The codec of one object: a state minted for one team, token or method is refused under another. `ttlSeconds`: as
 * long as what the state names lives (a park by default; a paused program for code mode's consent rounds).
 */
export async function requestStateCodec(sessionKey: string, owner: Owner, ttlSeconds: number = PARK_TTL_SECONDS): Promise<RequestStateCodec<ParkState>> {
  return createRequestStateCodec<ParkState>({
    // Derived, so it is apart from the session ids and toolset handles signed with the same secret.
    key: await codecKey(sessionKey),
    ttlSeconds,
    bind: (ctx) => `${owner.team}\0${owner.tokenId}\0${ctx.mcpReq.method}`,
  });
}

/** The digest of a call's arguments, the same whatever order the host serialized them in. */
export const argumentsDigest = (input: Record<string, unknown>): Promise<string> => sha256Hex(canonicalJson(input));

/** The host's capabilities as this request declares them (the 2026 era declares them per request). */
export const declaredCapabilities = (extra: HostExtra): ClientCapabilities | undefined =>
  (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
