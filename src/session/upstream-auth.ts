// Bearer tokens for a session's OAuth upstreams (docs/oauth.md 3.3): which account a call uses (the team's
// shared one, or the signed-in member's own), the token from the team's vault (the index object refreshes it), kept in
// memory until a minute before it expires, and the connect link a member is given when they have no account yet.
import type { AuthProvider } from "@modelcontextprotocol/client";
import { mintConnectHandle } from "../auth/connect-link.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import type { Env } from "../lib/env.ts";
import { UpstreamError } from "../lib/errors.ts";
import { REFRESH_AHEAD_MS, SHARED_ACCOUNT } from "../upstream/oauth-credential.ts";
import type { SessionRecord } from "./state.ts";

/** How long a session uses a token before asking the vault again (which answers from its storage, or refreshes). */
const TOKEN_MEMORY_MS = 30_000;

/** The proxy's public origin for links: PUBLIC_URL's when set, else the one the session was opened at. */
function baseOf(env: Env, record: SessionRecord): string | undefined {
  if (env.PUBLIC_URL) {
    try {
      return new URL(env.PUBLIC_URL).origin;
    } catch {
      // A malformed PUBLIC_URL: fall back to the session's own origin.
    }
  }
  return record.base;
}

/** Where this member connects their account at `server`, valid ten minutes; undefined when no link can be made. */
async function connectLink(env: Env, record: SessionRecord, server: string, account: string): Promise<string | undefined> {
  const base = baseOf(env, record);
  if (!base || !env.SESSION_KEY) return undefined;
  const { handle } = await mintConnectHandle(env.SESSION_KEY, record.team, server, account);
  return `${base}/t/${record.team}/connect/${encodeURIComponent(server)}?h=${handle}`;
}

/**
 * The auth provider of an OAuth upstream for this session, or undefined for one with static headers. Fails with an
 * `auth_required` fault (no strike against a lazy server) when the caller has no account there yet: a team token's
 * session cannot use a per_user server (it has no member), and a member without an account gets their connect link.
 */
export async function upstreamAuth(env: Env, record: SessionRecord, spec: UpstreamSpec): Promise<AuthProvider | undefined> {
  if (spec.auth?.type !== "oauth") return undefined;
  const shared = spec.auth.mode === "shared";
  if (!shared && !record.user) {
    throw new UpstreamError(spec.name, {
      kind: "auth_required",
      detail: "each member connects their own account to it, so it needs a member signed in through OAuth, not a team token",
    });
  }
  const account = shared ? SHARED_ACCOUNT : record.user!;
  const index = env.TEAM_INDEX.getByName(record.team);
  /** The token and until when it is used without asking the vault again. */
  let cached: { token: string; until: number } | undefined;

  const ask = async (stale?: string) => {
    const answer = await index.upstreamToken(record.team, spec.name, account, spec.url, stale);
    if (answer.ok) {
      // Kept a short while only (and never into the vault's refresh window): a disconnect reaches live sessions soon.
      const until = Math.min(Date.now() + TOKEN_MEMORY_MS, (answer.expiresAt ?? Infinity) - REFRESH_AHEAD_MS);
      return (cached = { token: answer.token, until });
    }
    cached = undefined;
    if (shared) {
      throw new UpstreamError(spec.name, { kind: "auth_required", detail: `${answer.detail}; an admin connects it (npm run team -- oauth connect ${record.team} ${spec.name})` });
    }
    const url = await connectLink(env, record, spec.name, account);
    throw new UpstreamError(spec.name, { kind: "auth_required", detail: answer.detail, ...(url ? { connectUrl: url } : {}) });
  };

  // Asked once now: an account that is not connected fails the connect at once, before anything is sent upstream.
  await ask();
  return {
    token: async () => (cached && cached.until > Date.now() ? cached : await ask()).token,
    // The upstream refused the token: the vault refreshes it unless another session already did.
    onUnauthorized: async () => {
      await ask(cached?.token);
    },
  };
}
