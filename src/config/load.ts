// Reads a team's config and tokens from KV.
import { jsonOrUndefined, kvKeys, logUnreadable, TokenRecord } from "./keys.ts";
import { parseStoredConfig, storedView, type ConfigResult } from "./validate.ts";
import type { View } from "./view.ts";

/** What reading needs of a KV binding (a Workers `KVNamespace` is one). */
export interface KvText {
  get(key: string): Promise<string | null>;
}

/** The team's config as a session serves it (broken entries set aside); `undefined` when the team has none. */
export async function loadTeamConfig(kv: KvText, team: string): Promise<ConfigResult | undefined> {
  const text = await kv.get(kvKeys.config(team));
  if (text === null) return undefined;
  try {
    return parseStoredConfig(JSON.parse(text));
  } catch {
    return { ok: false, issues: [{ path: "(root)", message: "not valid JSON" }], errors: ["(root): not valid JSON"] };
  }
}

/** Whether the team has a config at all, and its default `view` (see `loadTeamView`): one read gives both. */
export async function loadTeamSummary(kv: KvText, team: string): Promise<{ exists: boolean; view: View | undefined }> {
  const text = await kv.get(kvKeys.config(team));
  return text === null ? { exists: false, view: undefined } : { exists: true, view: storedView(jsonOrUndefined(text)) };
}

/**
 * The team config's default `view` alone (undefined when the config names none, is missing or does not parse): what
 * the 2026 era's router needs of the config, without validating every entry.
 */
export async function loadTeamView(kv: KvText, team: string): Promise<View | undefined> {
  return (await loadTeamSummary(kv, team)).view;
}

/**
 * A token's record, read through its schema. One that is not JSON or does not parse is no token (the caller's 401:
 * fail closed), logged by its key only.
 */
export async function loadToken(kv: KvText, team: string, tokenId: string): Promise<TokenRecord | null> {
  const key = kvKeys.token(team, tokenId);
  const text = await kv.get(key);
  if (text === null) return null;
  const parsed = TokenRecord.safeParse(jsonOrUndefined(text));
  if (parsed.success) return parsed.data;
  logUnreadable("token", key);
  return null;
}
