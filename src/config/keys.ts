// The layout of the TEAMS KV namespace (documented in docs/storage.md); shared by the Worker and the team CLI.

export const kvKeys = {
  config: (team: string) => `team/${team}/config`,
  token: (team: string, tokenId: string) => `team/${team}/token/${tokenId}`,
  tokenPrefix: (team: string) => `team/${team}/token/`,
  secret: (team: string, name: string) => `team/${team}/secret/${name}`,
  secretPrefix: (team: string) => `team/${team}/secret/`,
  pin: (team: string, server: string, tool: string) => `team/${team}/pin/${server}/${encodeURIComponent(tool)}`,
  pinPrefix: (team: string, server?: string) => `team/${team}/pin/${server === undefined ? "" : `${server}/`}`,
  catalog: (team: string, server: string) => `team/${team}/catalog/${server}`,
} as const;

/** A stored token: only the hash of the secret is kept (label and time are also in the key's metadata). */
export interface TokenRecord {
  hash: string;
  label?: string;
  createdAt: string;
}

/** Listed with the key, so a token list needs no reads. */
export interface TokenMetadata {
  label?: string;
  createdAt: string;
}

/** A pinned tool definition: the hash first seen (or last approved), and a changed one waiting for approval. */
export interface PinRecord {
  hash: string;
  pending?: string;
  pendingSince?: string;
}
