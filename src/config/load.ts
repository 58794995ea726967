// Reads a team's config and tokens from KV.
import { kvKeys, type TokenRecord } from "./keys.ts";
import { parseConfig, type ConfigResult } from "./validate.ts";

/** The team's config, validated; `undefined` when the team has none. */
export async function loadTeamConfig(kv: KVNamespace, team: string): Promise<ConfigResult | undefined> {
  const raw = await kv.get(kvKeys.config(team), "json");
  if (raw === null) return undefined;
  return parseConfig(raw);
}

export async function loadToken(kv: KVNamespace, team: string, tokenId: string): Promise<TokenRecord | null> {
  return kv.get<TokenRecord>(kvKeys.token(team, tokenId), "json");
}
