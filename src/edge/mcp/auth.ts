// Bearer token → team principal: the token must be one of this team's, compared in constant time.
import type { Context, MiddlewareHandler } from "hono";
import { validator } from "hono/validator";
import { hashToken, tokenId } from "../../auth/token.ts";
import { constantTimeEqual } from "../../auth/signed.ts";
import { TeamName } from "../../config/schema.ts";
import { loadToken } from "../../config/load.ts";
import type { TokenRecord } from "../../config/keys.ts";
import { SETTING_DEFAULTS, settings } from "../../lib/settings.ts";
import { insufficientScope, unauthorized } from "../../lib/responses.ts";
import type { McpEnv, Principal } from "./context.ts";
import { MAX_TOKEN_CACHE_SECONDS, TokenCache } from "../common/token-cache.ts";
import { MCP_SCOPE, oauthCaller } from "../oauth/server.ts";
import { resourceMetadataUrl } from "../oauth/routes.ts";
import { publicBase } from "../../lib/public-url.ts";
import { log } from "../../lib/log.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";


/** One cache per TOKEN_CACHE_SECONDS value (the setting itself is parsed once per env by `settings`). */
const caches = new Map<number, TokenCache>();
function cacheFor(seconds: number): TokenCache {
  let cache = caches.get(seconds);
  if (!cache) caches.set(seconds, (cache = new TokenCache(seconds)));
  return cache;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export async function authenticate(
  kv: KVNamespace,
  team: string,
  header: string | null,
  cacheSeconds: number = SETTING_DEFAULTS.tokenCacheSeconds,
): Promise<Principal | null> {
  const token = header === null ? undefined : BEARER.exec(header)?.[1];
  if (!token) return null;
  const id = tokenId(token);
  if (!id) return null;
  const cache = cacheFor(cacheSeconds);
  const key = `${team}/${id}`;
  // The token this isolate already accepted while the lookup is cached is compared as it is, with no hash: it
  // matched that very record, and any other token goes the full way below.
  const known = cache.acceptedToken(key);
  const knownRecord = cache.acceptedRecord(key);
  if (known !== undefined && knownRecord && constantTimeEqual(known, token)) return principal(team, id, knownRecord);
  const [record, hash] = await Promise.all([cache.get(key, () => loadToken(kv, team, id)), hashToken(token)]);
  if (!record || !constantTimeEqual(record.hash, hash)) return null;
  cache.accept(key, token);
  return principal(team, id, record);
}

/** A team token's principal: its view setting, and its label for the subject (the cached record holds both). */
const principal = (team: string, tokenId: string, record: TokenRecord): Principal => ({
  team,
  tokenId,
  ...(record.view ? { view: record.view } : {}),
  subject: { kind: "token", id: tokenId, ...(record.label ? { label: record.label } : {}) },
});

/** What `teamName` leaves for the token step (Hono's validated data, typed). */
type TeamInput = { out: { param: { team: string } } };

/** Team names the schema already accepted in this isolate (a host sends the same one on every request). */
const knownTeams = new BoundedCache<string, true>({ max: 1000 });

/** The team name in the path, validated by the config's zod schema; a bad one is the one 401 (nothing to probe). */
export const teamName = validator("param", (params: Record<string, string>) => {
  const name = params.team ?? "";
  if (knownTeams.has(name)) return { team: name };
  const parsed = TeamName.safeParse(name);
  if (!parsed.success) return unauthorized();
  knownTeams.set(parsed.data, true);
  return { team: parsed.data };
});

/**
 * OAuth callers this isolate accepted, by base, team and token, for at most TOKEN_CACHE_SECONDS and never past the
 * token's own expiry: a host's every request would otherwise read the library's KV record. The bound on a revoked
 * grant is then the same as a team token's (docs/security.md). Only acceptances are kept.
 */
const oauthCallers = new BoundedCache<string, Principal>({ max: 10_000 });

/**
 * An OAuth access token of the team's authorization server (src/edge/oauth/server.ts), when OAUTH_HOSTS is on: a token
 * that is not a team token's shape (`dmt_…`) is asked there. Its principal binds to the grant (`g.<binding>`). A valid
 * token without the `mcp` scope is `insufficient_scope` (never kept).
 */
async function oauthPrincipal(c: Context<McpEnv>, team: string, header: string | null): Promise<Principal | "insufficient_scope" | null> {
  if (!settings(c.env).oauthHosts || !c.env.OAUTH_KV) return null;
  const bearer = header === null ? undefined : BEARER.exec(header)?.[1];
  if (!bearer || tokenId(bearer)) return null;
  const base = publicBase(c.env, c.req.raw);
  const key = `${base}\n${team}\n${bearer}`;
  const seconds = Math.min(settings(c.env).tokenCacheSeconds, MAX_TOKEN_CACHE_SECONDS);
  const known = seconds > 0 ? oauthCallers.get(key) : undefined;
  if (known) return known;
  let caller: Awaited<ReturnType<typeof oauthCaller>>;
  try {
    caller = await oauthCaller(c.env, base, team, bearer);
  } catch (err) {
    // The library refuses a base URL that is not https (or loopback http): a deployment without PUBLIC_URL, say.
    log({ event: "misconfigured", reason: `OAuth tokens cannot be checked: ${err instanceof Error ? err.message : String(err)}` });
    return null;
  }
  if (!caller) return null;
  if (!caller.mayUseMcp) return "insufficient_scope";
  const principal: Principal = { team, tokenId: `g.${caller.binding}`, user: { id: caller.user.id }, subject: caller.subject };
  if (seconds > 0) oauthCallers.set(key, principal, Math.min(seconds * 1000, caller.expiresAt * 1000 - Date.now()));
  return principal;
}

/** The bearer token must be one of the team's: the caller becomes `principal`; anything else is the one 401. */
export const token: MiddlewareHandler<McpEnv, string, TeamInput> = async (c, next) => {
  const { team } = c.req.valid("param");
  const header = c.req.raw.headers.get("authorization");
  const principal = (await authenticate(c.env.TEAMS, team, header, settings(c.env).tokenCacheSeconds)) ?? (await oauthPrincipal(c, team, header));
  if (principal === "insufficient_scope") return insufficientScope({ resourceMetadata: resourceMetadataUrl(publicBase(c.env, c.req.raw), team), scope: MCP_SCOPE });
  if (!principal) {
    // With OAuth on, the one 401 also says where the resource's metadata is (RFC 9728 §5.1), for any valid team name.
    if (!settings(c.env).oauthHosts || !c.env.OAUTH_KV) return unauthorized();
    return unauthorized({ resourceMetadata: resourceMetadataUrl(publicBase(c.env, c.req.raw), team), scope: MCP_SCOPE, invalidToken: header !== null });
  }
  c.set("principal", principal);
  await next();
};
