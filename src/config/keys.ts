// The layout of the TEAMS KV namespace (documented in docs/storage.md); shared by the Worker and the team CLI.
import * as z from "zod";
import { log } from "../log.ts";
import { View } from "./view.ts";

export const kvKeys = {
  config: (team: string) => `team/${team}/config`,
  token: (team: string, tokenId: string) => `team/${team}/token/${tokenId}`,
  tokenPrefix: (team: string) => `team/${team}/token/`,
  secret: (team: string, name: string) => `team/${team}/secret/${name}`,
  secretPrefix: (team: string) => `team/${team}/secret/`,
  pin: (team: string, server: string, tool: string) => `team/${team}/pin/${server}/${encodeURIComponent(tool)}`,
  pinPrefix: (team: string, server?: string) => `team/${team}/pin/${server === undefined ? "" : `${server}/`}`,
  catalog: (team: string, server: string) => `team/${team}/catalog/${server}`,
  era: (team: string, server: string) => `team/${team}/era/${server}`,
  idp: (team: string) => `team/${team}/idp`,
  user: (team: string, userId: string) => `team/${team}/user/${userId}`,
  userPrefix: (team: string) => `team/${team}/user/`,
} as const;

/**
 * A stored token: only the hash of the secret is kept (label, time and view are also in the key's metadata). `view`
 * is the view its sessions get when the MCP URL names none (src/config/view.ts); absent means the default.
 */
export const TokenRecord = z.object({ hash: z.string(), label: z.string().optional(), createdAt: z.string(), view: View.optional() });
export type TokenRecord = z.output<typeof TokenRecord>;

/** Listed with the key, so a token list needs no reads. */
export interface TokenMetadata {
  label?: string;
  createdAt: string;
  view?: View;
}

/**
 * A member who signed in through the team's identity provider (issue 16): the provider's subject and issuer (what the
 * user id is derived from), the email it last gave, and when they first and last signed in (ISO dates; `lastSeen` is
 * written at most once a day). Also the key's metadata, so a user list needs no reads.
 */
export const UserRecord = z.object({
  sub: z.string(),
  issuer: z.string(),
  email: z.string().optional(),
  firstSeen: z.string(),
  lastSeen: z.string(),
});
export type UserRecord = z.output<typeof UserRecord>;

/** A pinned tool definition: the hash first seen (or last approved), and a changed one waiting for approval. */
export interface PinRecord {
  hash: string;
  pending?: string;
  pendingSince?: string;
}

/** A stored value as JSON, or undefined when it is not JSON (a schema then refuses it). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const unreadable = new Set<string>();
/** A stored record that did not parse: logged once per key and isolate, by its key, never its contents. */
export function logUnreadable(what: string, key: string): void {
  if (unreadable.has(key)) return;
  if (unreadable.size >= 1000) unreadable.clear();
  unreadable.add(key);
  log({ event: "misconfigured", reason: `stored ${what} at ${key} does not parse; ignored` });
}
