// The layout of the TEAMS KV namespace (documented in docs/storage.md); shared by the Worker and the team CLI.
import * as z from "zod";
import { log } from "../lib/log.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { View } from "./view.ts";

export const kvKeys = {
  config: (team: string) => `team/${team}/config`,
  /** Every key of every team starts so. */
  teamsPrefix: "team/",
  token: (team: string, tokenId: string) => `team/${team}/token/${tokenId}`,
  tokenPrefix: (team: string) => `team/${team}/token/`,
  secret: (team: string, name: string) => `team/${team}/secret/${name}`,
  secretPrefix: (team: string) => `team/${team}/secret/`,
  pin: (team: string, server: string, tool: string) => `team/${team}/pin/${server}/${encodeURIComponent(tool)}`,
  pinPrefix: (team: string, server?: string) => `team/${team}/pin/${server === undefined ? "" : `${server}/`}`,
  /** `variant`: of the client capabilities the proxy declared upstream (none: the key without it). */
  catalog: (team: string, server: string, variant = "") => `team/${team}/catalog/${server}${variant && `/${variant}`}`,
  era: (team: string, server: string) => `team/${team}/era/${server}`,
  /** One of the buckets of the semantic search's tool vectors of one embedding model (src/store/vector-cache.ts). */
  vectors: (team: string, model: string, bucket: number) => `team/${team}/vectors/${encodeURIComponent(model)}/${bucket}`,
  idp: (team: string) => `team/${team}/idp`,
  user: (team: string, userId: string) => `team/${team}/user/${userId}`,
  userPrefix: (team: string) => `team/${team}/user/`,
  /** The proxy's registration at an OAuth upstream's authorization server (dynamic registration, RFC 7591). */
  upstreamClient: (team: string, server: string) => `team/${team}/upstream-client/${server}`,
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
 * A member who signed in through the team's identity provider: the provider's subject and issuer (what the
 * user id is derived from), the email it last gave, and when they first and last signed in (ISO dates; `lastSeen` is
 * written at most once a day). Also the key's metadata, so a user list needs no reads.
 */
export const UserRecord = z.object({
  sub: z.string(),
  issuer: z.string(),
  email: z.string().optional(),
  /** Whether the provider verified that email (`user:` and `domain:` selectors match verified emails only). */
  emailVerified: z.boolean().optional(),
  /** The groups of the team's groups claim at the last sign-in, bounded as grants keep them (never in the key's metadata). */
  groups: z.array(z.string()).optional(),
  firstSeen: z.string(),
  lastSeen: z.string(),
});
export type UserRecord = z.output<typeof UserRecord>;

/**
 * The proxy's client at an OAuth upstream's authorization server, from dynamic registration (RFC 7591): reused while
 * the server's issuer and the proxy's redirect URI stay the same. A client secret the server issued is kept sealed
 * (AES-GCM under SECRETS_KEY, bound to the team and `oauth-client:<server>`), never in clear.
 */
export const UpstreamClientRecord = z.object({
  issuer: z.string(),
  redirectUri: z.string(),
  clientId: z.string(),
  clientSecret: z.object({ v: z.literal(1), iv: z.string(), data: z.string() }).optional(),
  /** When the issued secret stops working (ms since the epoch); absent when it does not expire. */
  clientSecretExpiresAt: z.number().optional(),
  authMethod: z.enum(["none", "client_secret_basic", "client_secret_post"]),
  registeredAt: z.string(),
});
export type UpstreamClientRecord = z.output<typeof UpstreamClientRecord>;

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

const unreadable = new BoundedCache<string, true>({ max: 1000 });
/** A stored record that did not parse: logged once per key and isolate, by its key, never its contents. */
export function logUnreadable(what: string, key: string): void {
  if (unreadable.has(key)) return;
  unreadable.set(key, true);
  log({ event: "misconfigured", reason: `stored ${what} at ${key} does not parse; ignored` });
}
