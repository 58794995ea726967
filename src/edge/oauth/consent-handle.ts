// The consent page's handle: the authorization request the library validated, signed with the proxy's MAC and carried
// by the page's own form, so that showing a consent page stores nothing. Anyone can ask for the page (that is what
// an authorization request is), so it must not cost a write: the first write of a sign-in is the identity provider
// transaction, once a member has allowed the request. The handle is bound to the browser that got the page by a flow
// cookie (src/edge/oauth/member-cookie.ts), cleared when the form is posted, and works for ten minutes.
//   `<nonce>.c2.<payload: the request and the handle's expiry>.<mac>`, a handle of src/auth/signed.ts bound to the team
// Signed, not sealed: it holds the host's own request, which the browser had in the authorize URL already.
import * as z from "zod";
import type { AuthRequest } from "@cloudflare/workers-oauth-provider";
import { expiry, handleFormat, openHandle, sealHandle } from "../../auth/signed.ts";
import { oldConsentHandle } from "../../auth/legacy-handles.ts";
import type { Same } from "../../store/kv.ts";

const CONSENT_TTL_SECONDS = 10 * 60;
/** The consent form's body limit (src/edge/oauth/forms.ts) leaves room for the decision beside a handle this long. */
export const MAX_CONSENT_HANDLE_CHARS = 3_584;

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

const CONSENT = handleFormat("c2", z.strictObject({ exp: z.int().positive(), request: ConsentRequest }));

/** The flow `state` whose cookie binds a consent page to its browser (no other flow's state has a colon). */
export const consentFlow = (nonce: string): string => `consent:${nonce}`;

export async function mintConsentHandle(secret: string, team: string, request: AuthRequest, now = Date.now()): Promise<{ handle: string; nonce: string }> {
  return sealHandle(secret, CONSENT, [team], { exp: Math.floor(now / 1000 + CONSENT_TTL_SECONDS), request });
}

/**
 * The request a handle of this team carries, and its nonce; undefined when malformed, altered, another team's or
 * expired. A `c1.` handle of the form before is read too, until it expires.
 */
export async function openConsentHandle(secret: string, team: string, handle: string, now = Date.now()): Promise<{ request: AuthRequest; nonce: string } | undefined> {
  if (handle.length > MAX_CONSENT_HANDLE_CHARS) return undefined;
  const opened = (await oldConsentHandle(secret, CONSENT, team, handle)) ?? (await openHandle(secret, CONSENT, [team], handle));
  if (!opened.ok || expiry(opened.payload.exp, now).passed) return undefined;
  return { request: opened.payload.request, nonce: opened.nonce };
}
