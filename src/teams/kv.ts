// The few KV operations team management needs, so the Worker (a KV binding) and the CLI (wrangler) share one store.

export interface KvEntry {
  name: string;
  metadata?: unknown;
}

export interface KvLike {
  get(key: string): Promise<string | null>;
  put(key: string, value: string, metadata?: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  /** Every key under the prefix, with its metadata (all pages). */
  list(prefix: string): Promise<KvEntry[]>;
}
