// The team's token endpoint: the library's, held to the rule that what it redeems is used once (RFC 6749 §4.1.2 and
// §10.4, RFC 9700 §4.14.2). An authorization code or a refresh token presented a second time means someone else has a
// copy: the whole grant is revoked (its access and refresh tokens, whoever holds them) and the answer is invalid_grant.
// The library (1.2.3) does not do this by itself: it keeps the refresh token a rotation replaced valid for one more use
// (so a thief's replay of it succeeds, again and again, each time voiding the owner's new one), revokes on a used
// code only when the same client presents it, and lets two overlapping uses of one secret both succeed (its records
// are in eventually consistent KV). So, around its endpoint:
//   before: the grant's KV record says whether the secret is the refresh token a rotation replaced, or a code already
//           exchanged; either revokes the grant at once, for any client
//   after:  a use the library honoured is recorded in the team's index (src/team/spent-secrets.ts), which tells a
//           second use within ten minutes from the first whatever isolate or location served either
// Revocation deletes the grant; the refused request then goes to the library, whose answer for a grant that is gone is
// the invalid_grant a client expects, with its CORS headers and its log line.
import type { TeamAuthorizationServer } from "./server.ts";
import * as z from "zod";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import { readLimitedText } from "../../lib/request-body.ts";
import { TOKEN_FORM_LIMIT } from "./forms.ts";

/** What of the library's grant record (`grant:<user>:<grant>` in OAUTH_KV) tells a secret's use. */
const GrantRecord = z.object({
  /** SHA-256 of the authorization code; its wrapped key is deleted when the code is exchanged. */
  authCodeId: z.string().optional(),
  authCodeWrappedKey: z.string().optional(),
  /** SHA-256 of the refresh token the last rotation replaced. */
  previousRefreshTokenId: z.string().optional(),
});

type SecretKind = "authorization_code" | "refresh_token";

/** A code or refresh token as the library mints them, `<user>:<grant>:<random>`, and its SHA-256. */
interface Presented {
  kind: SecretKind;
  user: string;
  grant: string;
  hash: string;
}

async function presented(form: URLSearchParams): Promise<Presented | undefined> {
  const kind = form.get("grant_type");
  if (kind !== "authorization_code" && kind !== "refresh_token") return undefined;
  const secret = form.get(kind === "authorization_code" ? "code" : "refresh_token");
  const [user, grant, random, ...more] = secret?.split(":") ?? [];
  if (!secret || !user || !grant || random === undefined || more.length > 0) return undefined;
  return { kind, user, grant, hash: await sha256Hex(secret) };
}

/** Whether the grant's record shows the secret already used: the refresh token rotated away, the code exchanged. */
async function usedBefore(kv: KVNamespace, p: Presented): Promise<boolean> {
  const record = GrantRecord.safeParse(await kv.get(`grant:${p.user}:${p.grant}`, "json"));
  if (!record.success) return false;
  if (p.kind === "refresh_token") return record.data.previousRefreshTokenId === p.hash;
  return record.data.authCodeId === p.hash && record.data.authCodeWrappedKey === undefined;
}

/**
 * Whether this honoured use is the secret's first, as the team's index keeps them. If the index cannot be asked, the
 * answer goes out as the library gave it: its tokens are issued and the secret is spent, and holding them back would
 * only make the client's retry look like a reuse.
 */
async function firstUse(env: Env, team: string, p: Presented): Promise<boolean> {
  try {
    return await env.TEAM_INDEX.getByName(team).spendOAuthSecret(team, p.hash);
  } catch (err) {
    log({ event: "unhandled", error: `team ${team}: a token use not recorded in its index: ${err instanceof Error ? err.message : String(err)}` });
    return true;
  }
}

/** The library's token endpoint for `request`, under the single-use rule (what is neither a code nor a refresh passes). */
export async function tokenEndpoint(env: Env, team: string, server: TeamAuthorizationServer, request: Request, ctx: ExecutionContext): Promise<Response> {
  const library = (r: Request) => server.fetch(r, env, ctx);
  if (request.method !== "POST" || !env.OAUTH_KV) return library(request);
  // Any POST is read and looked at, whatever its content type says: the rule cannot be stepped around by a header.
  // The route has read it within its limit already (src/edge/oauth/forms.ts); this read is of those bytes.
  const text = await readLimitedText(request, TOKEN_FORM_LIMIT);
  if (text === undefined) {
    return Response.json(
      { error: "invalid_request", error_description: `A token request is at most ${TOKEN_FORM_LIMIT} bytes.` },
      { status: 413, headers: { "cache-control": "no-store" } },
    );
  }
  // The library reads the body again: it gets the text read here (without the length the original may have declared).
  const headers = new Headers(request.headers);
  headers.delete("content-length");
  const again = () => new Request(request, { headers, body: text });
  const secret = await presented(new URLSearchParams(text));
  if (!secret) return library(again());
  const kv = env.OAUTH_KV;
  const revoke = async (reason: "superseded" | "exchanged" | "overlapping"): Promise<Response> => {
    await server.getOAuthApi(env).revokeGrant(secret.grant, secret.user);
    log({ event: "oauth_reuse", team, kind: secret.kind, reason, user: secret.user, outcome: "grant_revoked" });
    return library(again());
  };
  if (await usedBefore(kv, secret)) return revoke(secret.kind === "refresh_token" ? "superseded" : "exchanged");
  const answer = await library(again());
  if (answer.status !== 200 || (await firstUse(env, team, secret))) return answer;
  await answer.body?.cancel();
  return revoke("overlapping");
}
