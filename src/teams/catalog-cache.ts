// The team's last good catalog of each upstream, in KV, keyed by the upstream's name and checked against a hash
// of its config (a changed entry never sees a stale catalog). Written only when it changes: KV takes about one
// write per second per key, and many sessions of a team start at once. A cached catalog that does not parse is a
// cache miss (the upstream is read as if nothing were cached), logged once per key.
import * as z from "zod";
import type { Implementation, Prompt, Resource, ResourceTemplateType as ResourceTemplate, ServerCapabilities, Tool } from "@modelcontextprotocol/server";
import { sha256Hex } from "../bytes.ts";
import { jsonOrUndefined, kvKeys, logUnreadable } from "../config/keys.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { CatalogCache } from "../upstream/startup.ts";
import { accepted, type KvLike, type Same } from "./kv.ts";
import { canonicalJson } from "./pins.ts";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** An SDK item, checked by the string field that identifies it (its full shape is the upstream's business). */
const item = <T>(key: string) => z.custom<T>((v) => isObject(v) && typeof v[key] === "string", `not an item with a ${key}`);

/**
 * A stored `UpstreamCatalog` (KV catalog cache, session `upstream:<name>` records): the lists and their items'
 * identifying fields are checked, the items themselves are kept as stored.
 */
export const StoredCatalog = z.object({
  serverInfo: z.custom<Implementation>(isObject).optional(),
  protocolVersion: z.string().optional(),
  capabilities: z.custom<ServerCapabilities>(isObject),
  instructions: z.string().optional(),
  tools: z.array(item<Tool>("name")),
  resources: z.array(item<Resource>("uri")),
  resourceTemplates: z.array(item<ResourceTemplate>("uriTemplate")),
  prompts: z.array(item<Prompt>("name")),
  notes: z.array(z.string()),
});
const catalogMatches: Same<z.output<typeof StoredCatalog>, UpstreamCatalog> = true;
void catalogMatches;

/** `team/<team>/catalog/<server>`: the catalog, the hash of the entry's config it came from, when it was saved. */
const CachedCatalog = z.object({ config: z.string(), catalog: StoredCatalog, savedAt: z.string() });
type CachedCatalog = z.output<typeof CachedCatalog>;

/**
 * What identifies an entry's catalog: everything that could change what the upstream answers or we keep. The era
 * cache (era-cache.ts) keys its verdicts by it too.
 */
export async function configHash(spec: UpstreamSpec): Promise<string> {
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
      const entry = accepted(CachedCatalog, jsonOrUndefined(text));
      if (!entry) {
        logUnreadable("catalog cache", kvKeys.catalog(team, spec.name));
        return undefined;
      }
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
