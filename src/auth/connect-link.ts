// Connect links for OAuth upstreams (docs/oauth.md 3.3): `<base>/t/<team>/connect/<server>?h=<handle>`, where the
// handle carries its own proof: `<nonce>.cx2.<payload>.<mac>`, a handle of src/auth/signed.ts bound to the team and
// the server, whose payload is its expiry and a tag naming the account. The account is "shared" (an admin's link) or
// a member's user id (the link a tool result hands that member); it is in the handle as a tag so that nothing
// personal is in the URL. Made by the admin API and the session objects, checked by the connect route; it works for
// ten minutes. Pure apart from Web Crypto.
import * as z from "zod";
import { constantTimeEqual, expiry, handleFormat, macOf, openHandle, sealHandle } from "./signed.ts";
import { oldConnectHandle } from "./legacy-handles.ts";

export const CONNECT_LINK_TTL_MS = 10 * 60_000;

const CONNECT = handleFormat("cx2", z.strictObject({ exp: z.int().positive(), accountTag: z.string().regex(/^[A-Za-z0-9_-]{22}$/) }));

/**
 * The account travels in the handle as a MAC of its own (`connect-account/v1`): the handle names whose link it is
 * without showing the user id, a handle can be checked as the proxy's own before anyone knows whose it is (the member
 * sign-in a link asks for), and the route learns the account from the candidates it may be.
 */
const accountTag = (secret: string, team: string, account: string) => macOf(secret, "connect-account/v1", team, account);

export interface ConnectLinkHandle {
  handle: string;
  expiresAt: Date;
}

export async function mintConnectHandle(secret: string, team: string, server: string, account: string, now = Date.now()): Promise<ConnectLinkHandle> {
  const exp = Math.floor((now + CONNECT_LINK_TTL_MS) / 1000);
  const { handle } = await sealHandle(secret, CONNECT, [team, server], { exp, accountTag: await accountTag(secret, team, account) });
  return { handle, expiresAt: new Date(exp * 1000) };
}

export type ConnectHandleCheck =
  | { ok: true; nonce: string; expiresAt: Date }
  | { ok: false; problem: "malformed" | "foreign" | "expired" };

/**
 * The handle's nonce, account tag and expiry when its proof is the proxy's for this team and server (expired or not);
 * a `cx1.` handle of the form before is read too, until it expires.
 */
async function proven(secret: string, handle: string, team: string, server: string) {
  const opened = (await oldConnectHandle(secret, CONNECT, team, server, handle)) ?? (await openHandle(secret, CONNECT, [team, server], handle));
  if (!opened.ok) return opened;
  return { ok: true, nonce: opened.nonce, tag: opened.payload.accountTag, exp: opened.payload.exp } as const;
}

/**
 * Whether `handle` is a link for this team, server and account, unexpired. The caller names the account it expects
 * ("shared", or the user id of the member whose browser opened it); a link of another account is "foreign".
 */
export async function checkConnectHandle(secret: string, handle: string, team: string, server: string, account: string, now = Date.now()): Promise<ConnectHandleCheck> {
  const p = await proven(secret, handle, team, server);
  if (!p.ok) return p;
  if (!constantTimeEqual(p.tag, await accountTag(secret, team, account))) return { ok: false, problem: "foreign" };
  const expires = expiry(p.exp, now);
  if (expires.passed) return { ok: false, problem: "expired" };
  return { ok: true, nonce: p.nonce, expiresAt: expires.at };
}

/**
 * Whether `handle` is a link the proxy made for this team and server, unexpired, whoever's it is; and then the tag of
 * its account (the same in every link of one account, telling nothing of who that is).
 */
export async function checkConnectHandleOfAnyAccount(
  secret: string,
  handle: string,
  team: string,
  server: string,
  now = Date.now(),
): Promise<{ ok: true; accountTag: string } | { ok: false; problem: "malformed" | "foreign" | "expired" }> {
  const p = await proven(secret, handle, team, server);
  if (!p.ok) return p;
  if (expiry(p.exp, now).passed) return { ok: false, problem: "expired" };
  return { ok: true, accountTag: p.tag };
}
