// The request state a 2026-era host carries between rounds of a call that waits for its input: which parked call
// (src/modern/parked-calls.ts) and which tool call it belongs to. HMAC-signed by the SDK's codec under a key derived
// from SESSION_KEY, bound to the team, the token and the method, and valid as long as a park. Signed, not
// encrypted: it holds no secret (ids and a digest), and the upstream's own state never leaves the object.
import { createRequestStateCodec, type RequestStateCodec } from "@modelcontextprotocol/server";
import { sha256Hex } from "../bytes.ts";
import { canonicalJson } from "../teams/pins.ts";
import { PARK_TTL_SECONDS } from "./parked-calls.ts";

export interface ParkState {
  /** The parked call. */
  c: string;
  /** The tool the host called through use_tool, and a digest of its arguments: a retry must repeat both. */
  t: string;
  d: string;
}

/** Whose calls an object holds (its session record's team and token). */
interface Owner {
  team: string;
  tokenId: string;
}

/** The codec of one object: a state minted for one team, token or method is refused under another. */
export function requestStateCodec(sessionKey: string, owner: Owner): RequestStateCodec<ParkState> {
  return createRequestStateCodec<ParkState>({
    // Domain-separated from the session ids and toolset handles signed with the same secret (and ≥ 32 bytes).
    key: `dynmcp/requestState/v1\n${sessionKey}`,
    ttlSeconds: PARK_TTL_SECONDS,
    bind: (ctx) => `${owner.team}\0${owner.tokenId}\0${ctx.mcpReq.method}`,
  });
}

/** The digest of a call's arguments, the same whatever order the host serialized them in. */
export const argumentsDigest = (input: Record<string, unknown>): Promise<string> => sha256Hex(canonicalJson(input));
