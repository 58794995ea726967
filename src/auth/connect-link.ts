// Connect links for OAuth upstreams (issue 16, docs/oauth.md 3.3): `<base>/t/<team>/connect/<server>?h=<handle>`,
// where the handle carries its own proof: `cx1.<nonce>.<expiry>.<tag>.<mac>`, 128 random bits, the expiry in unix
// seconds (base 36), a tag naming the account, and 128 bits of HMAC-SHA256 under SESSION_KEY over team, server,
// account, nonce and expiry (src/auth/mac.ts). The account is
// "shared" (an admin's link) or a member's user id (the link a tool result hands that member); it is in the handle
// so that nothing personal is in the URL. Made by the admin API and the session objects, checked by the connect
// route; it works for ten minutes. Pure apart from Web Crypto.
import { constantTimeEqual, mac128 as mac, nonce128 } from "./mac.ts";

export const CONNECT_LINK_TTL_MS = 10 * 60_000;
const HANDLE = /^cx1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

/** A text no session id or toolset handle is signed over (those start with a team name or `toolset/`). */
const signedText = (team: string, server: string, account: string, nonce: string, expiry: string): string =>
  `connect/v1\n${team}\n${server}\n${account}\n${nonce}\n${expiry}`;

/**
 * The account travels in the handle as 128 bits of HMAC under another text (`account/v1`): the handle names whose
 * link it is without showing the user id, and the route learns the account from the candidates it may be.
 */
const accountTag = (secret: string, team: string, account: string) => mac(secret, `connect-account/v1\n${team}\n${account}`);

export interface ConnectLinkHandle {
  handle: string;
  expiresAt: Date;
}

export async function mintConnectHandle(secret: string, team: string, server: string, account: string, now = Date.now()): Promise<ConnectLinkHandle> {
  const nonce = nonce128();
  const expirySeconds = Math.floor((now + CONNECT_LINK_TTL_MS) / 1000);
  const expiry = expirySeconds.toString(36);
  const tag = await accountTag(secret, team, account);
  const proof = await mac(secret, signedText(team, server, account, nonce, expiry));
  return { handle: `cx1.${nonce}.${expiry}.${tag}.${proof}`, expiresAt: new Date(expirySeconds * 1000) };
}

/** Whether `handle` has a connect link handle's shape (its proof is not checked: that needs the account). */
export const isConnectHandle = (handle: string): boolean => HANDLE.test(handle);

export type ConnectHandleCheck =
  | { ok: true; nonce: string; expiresAt: Date }
  | { ok: false; problem: "malformed" | "foreign" | "expired" };

/**
 * Whether `handle` is a link for this team, server and account, unexpired. The caller names the account it expects
 * ("shared", or the user id of the member whose browser opened it); a link of another account is "foreign".
 */
export async function checkConnectHandle(secret: string, handle: string, team: string, server: string, account: string, now = Date.now()): Promise<ConnectHandleCheck> {
  const m = HANDLE.exec(handle);
  if (!m) return { ok: false, problem: "malformed" };
  const [, nonce, expiry, tag, proof] = m as unknown as [string, string, string, string, string];
  const expected = await mac(secret, signedText(team, server, account, nonce, expiry));
  if (!constantTimeEqual(proof, expected) || !constantTimeEqual(tag, await accountTag(secret, team, account))) return { ok: false, problem: "foreign" };
  const expiresAt = new Date(parseInt(expiry, 36) * 1000);
  if (expiresAt.getTime() <= now) return { ok: false, problem: "expired" };
  return { ok: true, nonce, expiresAt };
}
