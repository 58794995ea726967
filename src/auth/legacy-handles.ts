// The forms the signed values had before the shared handle encoding (src/auth/signed.ts), read only so that values
// issued before it keep working until they expire. Nothing mints them any more. Each reader answers undefined for a
// value not of its old shape (the caller then reads the new form), else the old value opened into the new format's
// payload: its MAC checked over the lines it was signed over then, the same MAC as today's.
//
// When each can go (docs/security.md, "Values issued before the shared encoding"): connect handles, flow states and
// consent pages live ten minutes; toolset handles and session ids at most SESSION_TTL_SECONDS (a day by default); the
// member cookie 30 days. This file goes once the longest of them has passed since the encoding was deployed.
import type { HandleFormat, OpenedHandle } from "./signed.ts";
import { fromBase64url } from "../lib/bytes.ts";
import { openLegacy } from "./signed.ts";

const B64_22 = "([A-Za-z0-9_-]{22})";
const EXPIRY = "([0-9a-z]{1,11})";
const seconds = (base36: string): number => parseInt(base36, 36);

const OLD_SESSION_ID = new RegExp(`^${B64_22}\\.${B64_22}$`);
const OLD_TOOLSET = new RegExp(`^ts1\\.${B64_22}\\.${EXPIRY}\\.${B64_22}$`);
const OLD_CONNECT = new RegExp(`^cx1\\.${B64_22}\\.${EXPIRY}\\.${B64_22}\\.${B64_22}$`);
const OLD_MEMBER = new RegExp(`^([a-z0-9_-]{1,64}\\.[A-Za-z0-9_-]{22})\\.${EXPIRY}\\.${B64_22}$`);
const OLD_FLOW_STATE = new RegExp(`^([a-z0-9_-]{1,64})\\.${B64_22}\\.${B64_22}$`);
const OLD_CONSENT = new RegExp(`^c1\\.${B64_22}\\.${EXPIRY}\\.([A-Za-z0-9_-]+)\\.${B64_22}$`);

/** `<nonce>.<mac>` over team, token id and nonce. */
export function oldSessionId(secret: string, format: HandleFormat<undefined>, team: string, tokenId: string, id: string) {
  const m = OLD_SESSION_ID.exec(id);
  if (!m) return undefined;
  const [, nonce = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce, mac, lines: [team, tokenId, nonce], payload: () => undefined });
}

/** `ts1.<nonce>.<expiry, base 36>.<mac>` over `toolset/v1`, team, token id, nonce and expiry. */
export function oldToolsetHandle<T>(secret: string, format: HandleFormat<T>, team: string, tokenId: string, handle: string) {
  const m = OLD_TOOLSET.exec(handle);
  if (!m) return undefined;
  const [, nonce = "", exp = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce, mac, lines: ["toolset/v1", team, tokenId, nonce, exp], payload: () => ({ exp: seconds(exp) }) });
}

/** `cx1.<nonce>.<expiry>.<account tag>.<mac>` over `connect/v2`, team, server, the tag, nonce and expiry. */
export function oldConnectHandle<T>(secret: string, format: HandleFormat<T>, team: string, server: string, handle: string) {
  const m = OLD_CONNECT.exec(handle);
  if (!m) return undefined;
  const [, nonce = "", exp = "", tag = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce, mac, lines: ["connect/v2", team, server, tag, nonce, exp], payload: () => ({ exp: seconds(exp), accountTag: tag }) });
}

/** The member cookie's `<user id>.<expiry>.<mac>` over `member-cookie/v1`, team, user id and expiry (it had no nonce). */
export function oldMemberCookie<T>(secret: string, format: HandleFormat<T>, team: string, value: string) {
  const m = OLD_MEMBER.exec(value);
  if (!m) return undefined;
  const [, user = "", exp = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce: "", mac, lines: ["member-cookie/v1", team, user, exp], payload: () => ({ user, exp: seconds(exp) }) });
}

/** A flow state's `<prefix>.<nonce>.<mac>` over `flow-state/v1`, the flow's kind, team and nonce (not the prefix). */
export function oldFlowState(secret: string, format: HandleFormat<undefined>, kind: string, team: string, state: string) {
  const m = OLD_FLOW_STATE.exec(state);
  if (!m) return undefined;
  const [, , nonce = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce, mac, lines: ["flow-state/v1", kind, team, nonce], payload: () => undefined });
}

/** The prefix of an old flow state (read before anything is checked). */
export const oldFlowStatePrefix = (state: string): string | undefined => OLD_FLOW_STATE.exec(state)?.[1];

function jsonOf(base64: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64url(base64)));
  } catch {
    return undefined;
  }
}

/** `c1.<nonce>.<expiry>.<request as base64url JSON>.<mac>` over `consent/v1`, team, nonce, expiry and the request. */
export function oldConsentHandle<T>(secret: string, format: HandleFormat<T>, team: string, handle: string): Promise<OpenedHandle<T>> | undefined {
  const m = OLD_CONSENT.exec(handle);
  if (!m) return undefined;
  const [, nonce = "", exp = "", body = "", mac = ""] = m;
  return openLegacy(secret, format, { nonce, mac, lines: ["consent/v1", team, nonce, exp, body], payload: () => ({ exp: seconds(exp), request: jsonOf(body) }) });
}
