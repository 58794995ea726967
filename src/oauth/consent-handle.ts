// The consent page's handle: the authorization request the library validated, signed with the proxy's MAC and carried
// by the page's own form, so that showing a consent page stores nothing. Anyone can ask for the page (that is what
// an authorization request is), so it must not cost a write: the first write of a sign-in is the identity provider
// transaction, once a member has allowed the request. The handle is bound to the browser that got the page by a flow
// cookie (src/oauth/member-cookie.ts), cleared when the form is posted, and works for ten minutes.
//   `c1.<nonce>.<expiry: unix seconds, base 36>.<the request as base64url JSON>.<mac>`
// Signed, not sealed: it holds the host's own request, which the browser had in the authorize URL already.
import * as z from "zod";
import type { AuthRequest } from "@cloudflare/workers-oauth-provider";
import { base64url, fromBase64url } from "../bytes.ts";
import { mac128, macMatches, nonce128 } from "../auth/mac.ts";
import type { Same } from "../teams/kv.ts";

const CONSENT_TTL_SECONDS = 10 * 60;
/** The consent form's body limit (src/oauth/forms.ts) leaves room for the decision beside a handle this long. */
export const MAX_CONSENT_HANDLE_CHARS = 3_584;
const HANDLE = /^c1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

const ConsentRequest = z.object({
  responseType: z.string(),
  clientId: z.string(),
  redirectUri: z.string(),
  scope: z.array(z.string()),
  state: z.string(),
  codeChallenge: z.string().optional(),
  codeChallengeMethod: z.string().optional(),
  resource: z.string().optional(),
  issuer: z.string().optional(),
});
const requestMatches: Same<z.infer<typeof ConsentRequest>, AuthRequest> = true;
void requestMatches;

/** A text no other signature of the proxy is made over. */
const signedText = (team: string, nonce: string, expiry: string, payload: string) => `consent/v1\n${team}\n${nonce}\n${expiry}\n${payload}`;

/** The flow `state` whose cookie binds a consent page to its browser (no other flow's state has a colon). */
export const consentFlow = (nonce: string): string => `consent:${nonce}`;

export async function mintConsentHandle(secret: string, team: string, request: AuthRequest, now = Date.now()): Promise<{ handle: string; nonce: string }> {
  const nonce = nonce128();
  const expiry = Math.floor(now / 1000 + CONSENT_TTL_SECONDS).toString(36);
  const payload = base64url(new TextEncoder().encode(JSON.stringify(request)));
  return { handle: `c1.${nonce}.${expiry}.${payload}.${await mac128(secret, signedText(team, nonce, expiry, payload))}`, nonce };
}

/** The request a handle of this team carries, and its nonce; undefined when malformed, altered, another team's or expired. */
export async function openConsentHandle(secret: string, team: string, handle: string, now = Date.now()): Promise<{ request: AuthRequest; nonce: string } | undefined> {
  const m = HANDLE.exec(handle);
  if (!m || handle.length > MAX_CONSENT_HANDLE_CHARS) return undefined;
  const [, nonce = "", expiry = "", payload = "", mac = ""] = m;
  if (!(await macMatches(secret, signedText(team, nonce, expiry, payload), mac))) return undefined;
  if (parseInt(expiry, 36) * 1000 <= now) return undefined;
  const request = ConsentRequest.safeParse(JSON.parse(new TextDecoder().decode(fromBase64url(payload))));
  return request.success ? { request: request.data, nonce } : undefined;
}
