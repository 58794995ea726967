// The team's last good catalog of each upstream, in KV, keyed by the upstream's name and checked against a hash
// of its config (a changed entry never sees a stale catalog). Written only when it changes: KV takes about one
// write per second per key, and many sessions of a team start at once.
import { sha256Hex } from "../bytes.ts";
import { kvKeys } from "../config/keys.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { CatalogCache } from "../upstream/startup.ts";
import type { KvLike } from "./kv.ts";
import { canonicalJson } from "./pins.ts";

interface CachedCatalog {
  config: string;
  catalog: UpstreamCatalog;
  savedAt: string;
}

/** What identifies an entry's catalog: everything that could change what the upstream answers or we keep. */
async function configHash(spec: UpstreamSpec): Promise<string> {
  const text = canonicalJson({ transport: spec.transport, url: spec.url, headers: spec.headers, tools: spec.tools });
  return sha256Hex(text);
}

export function kvCatalogCache(kv: KvLike, team: string): CatalogCache {
  /** What this session read, so an unchanged catalog is not written back. */
  const seen = new Map<string, string>();
  return {
    async get(spec) {
      const text = await kv.get(kvKeys.catalog(team, spec.name));
      if (text === null) return undefined;
      const entry = JSON.parse(text) as CachedCatalog;
      if (entry.config !== (await configHash(spec))) return undefined;
      seen.set(spec.name, JSON.stringify(entry.catalog));
      return entry.catalog;
    },
    async put(spec, catalog) {
      const json = JSON.stringify(catalog);
      if (seen.get(spec.name) === json) return;
      const entry: CachedCatalog = { config: await configHash(spec), catalog, savedAt: new Date().toISOString() };
      seen.set(spec.name, json);
      await kv.put(kvKeys.catalog(team, spec.name), JSON.stringify(entry));
    },
  };
}
