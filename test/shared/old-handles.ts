// Values in the forms the proxy signed before the shared handle encoding (src/auth/signed.ts), minted here the way the
// code before minted them (its texts and layouts, Web Crypto directly, nothing of src/), so tests can show that a
// value issued before still works until it expires, and that an altered one is refused as it was then.

const encoder = new TextEncoder();

const base64url = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The first 128 bits of HMAC-SHA256(secret, text), base64url: the MAC every old form used. */
async function mac128(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)), 0, 16));
}

const nonce = (): string => base64url(crypto.getRandomValues(new Uint8Array(16)));
const base36 = (unixSeconds: number): string => unixSeconds.toString(36);

/** `<nonce>.<mac>` over team, token id and nonce. */
export async function oldSessionId(secret: string, team: string, tokenId: string): Promise<string> {
  const n = nonce();
  return `${n}.${await mac128(secret, `${team}\n${tokenId}\n${n}`)}`;
}

/** `ts1.<nonce>.<expiry>.<mac>`; `n` names the toolset's object (the nonce of a handle the proxy minted since, say). */
export async function oldToolsetHandle(secret: string, team: string, tokenId: string, expiresAt: number, n = nonce()): Promise<string> {
  const exp = base36(Math.floor(expiresAt / 1000));
  return `ts1.${n}.${exp}.${await mac128(secret, `toolset/v1\n${team}\n${tokenId}\n${n}\n${exp}`)}`;
}

/** `cx1.<nonce>.<expiry>.<account tag>.<mac>`. */
export async function oldConnectHandle(secret: string, team: string, server: string, account: string, expiresAt: number): Promise<string> {
  const n = nonce();
  const exp = base36(Math.floor(expiresAt / 1000));
  const tag = await mac128(secret, `connect-account/v1\n${team}\n${account}`);
  return `cx1.${n}.${exp}.${tag}.${await mac128(secret, `connect/v2\n${team}\n${server}\n${tag}\n${n}\n${exp}`)}`;
}

/** The member cookie's value: `<user id>.<expiry>.<mac>`. */
export async function oldMemberCookieValue(secret: string, team: string, user: string, expiresAt: number): Promise<string> {
  const exp = base36(Math.floor(expiresAt / 1000));
  return `${user}.${exp}.${await mac128(secret, `member-cookie/v1\n${team}\n${user}\n${exp}`)}`;
}

/** A flow's `state`: `<prefix>.<nonce>.<mac>`. */
export async function oldFlowState(secret: string, kind: "connect" | "member-sign-in", team: string, prefix: string): Promise<string> {
  const n = nonce();
  return `${prefix}.${n}.${await mac128(secret, `flow-state/v1\n${kind}\n${team}\n${n}`)}`;
}

/** The consent page's `c1.<nonce>.<expiry>.<request as base64url JSON>.<mac>`. */
export async function oldConsentHandle(secret: string, team: string, request: object, expiresAt: number): Promise<{ handle: string; nonce: string }> {
  const n = nonce();
  const exp = base36(Math.floor(expiresAt / 1000));
  const payload = base64url(encoder.encode(JSON.stringify(request)));
  return { handle: `c1.${n}.${exp}.${payload}.${await mac128(secret, `consent/v1\n${team}\n${n}\n${exp}\n${payload}`)}`, nonce: n };
}

/** `value` with one character of its `part`-th dot-separated part changed (a part's first character, unless told). */
export function alter(value: string, part: number, at = 0): string {
  const parts = value.split(".");
  const p = parts[part]!;
  parts[part] = p.slice(0, at) + (p[at] === "A" ? "B" : "A") + p.slice(at + 1);
  return parts.join(".");
}

/** A flow's binding cookie (`__Host-dynmcp-flow-<first 12 of the MAC>=<the rest>`), as it was and still is. */
export async function oldFlowCookie(secret: string, state: string): Promise<string> {
  const mac = await mac128(secret, `flow-binding/v1\n${state}`);
  return `__Host-dynmcp-flow-${mac.slice(0, 12)}=${mac.slice(12)}`;
}
