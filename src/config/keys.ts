// The layout of the TEAMS KV namespace (documented in docs/storage.md); shared by the Worker and the team CLI.

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
