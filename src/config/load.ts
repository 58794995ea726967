// Reads a team's config and tokens from KV.
import { kvKeys, type TokenRecord } from "./keys.ts";
import { parseStoredConfig, type ConfigResult } from "./validate.ts";

/** The team's config as a session serves it (broken entries set aside); `undefined` when the team has none. */
export async function loadTeamConfig(kv: KVNamespace, team: string): Promise<ConfigResult | undefined> {
  const text = await kv.get(kvKeys.config(team));
  if (text === null) return undefined;
  try {
    return parseStoredConfig(JSON.parse(text));
  } catch {
    return { ok: false, issues: [{ path: "(root)", message: "not valid JSON" }], errors: ["(root): not valid JSON"] };
  }
}

export async function loadToken(kv: KVNamespace, team: string, tokenId: string): Promise<TokenRecord | null> {
  return kv.get<TokenRecord>(kvKeys.token(team, tokenId), "json");
}
