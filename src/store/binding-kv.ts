// A Workers KV binding as the KvLike the team store takes (the CLI's is wrangler-backed: scripts/lib/kv.ts).
import type { KvEntry, KvLike } from "./kv.ts";

/** A Workers KV binding as a KvLike. */
export function bindingKv(kv: KVNamespace): KvLike {
  return {
    get: (key) => kv.get(key),
    put: (key, value, metadata) => kv.put(key, value, metadata === undefined ? undefined : { metadata }),
    delete: (key) => kv.delete(key),
    async list(prefix) {
      const out: KvEntry[] = [];
      let cursor: string | undefined;
      do {
        const page: KVNamespaceListResult<unknown> = await kv.list({ prefix, ...(cursor ? { cursor } : {}) });
        out.push(...page.keys.map((k) => ({ name: k.name, metadata: k.metadata })));
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return out;
    },
  };
}
