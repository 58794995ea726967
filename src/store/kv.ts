// The few KV operations team management needs, so the Worker (a KV binding) and the CLI (wrangler) share one store;
// and what reading stored records through schemas needs (with `jsonOrUndefined` and `logUnreadable` in config/keys.ts).
import type * as z from "zod";

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

/** Both types the same (each assignable to the other): checks a record's schema against the type it reads. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * The stored value itself when the schema accepts it, else undefined. The value is kept as stored (no keys
 * reordered or dropped, no defaults filled in), so it still compares equal, as JSON, to what was written.
 */
export function accepted<S extends z.ZodType>(schema: S, value: unknown): z.output<S> | undefined {
  return schema.safeParse(value).success ? (value as z.output<S>) : undefined;
}
