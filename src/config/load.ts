// Reads a team's config and tokens from KV: the key layout lives here and in docs/storage.md.
import { parseConfig, type ConfigResult } from "./validate.ts";

export const kvKeys = {
  config: (team: string) => `team/${team}/config`,
  token: (team: string, tokenId: string) => `team/${team}/token/${tokenId}`,
  tokenPrefix: (team: string) => `team/${team}/token/`,
} as const;

/** A stored token: only the hash of the secret is kept. */
export interface TokenRecord {
  hash: string;
  label?: string;
  createdAt: string;
}

/** The team's config, validated; `undefined` when the team has none. */
export async function loadTeamConfig(kv: KVNamespace, team: string): Promise<ConfigResult | undefined> {
  const raw = await kv.get(kvKeys.config(team), "json");
  if (raw === null) return undefined;
  return parseConfig(raw);
}

export async function loadToken(kv: KVNamespace, team: string, tokenId: string): Promise<TokenRecord | null> {
  return kv.get<TokenRecord>(kvKeys.token(team, tokenId), "json");
}
