// The team's last good catalog of each upstream, in KV, keyed by the upstream's name and the client capabilities the
// proxy declared to it (some upstreams list tools only for clients that can answer elicitation or sampling), and
// checked against a hash of its config (a changed entry never sees a stale catalog). Every object of the team (a 2025
// session, a 2026 principal's or toolset's object) writes what it reads anew from an eager upstream, and a 2026 list
// takes the team's latest reading from here, so the objects of a team agree. A catalog is current for
// CATALOG_FRESH_MS after it was last read from its upstream (`checkedAt`); past that, the object about to list it
// reads it anew. Written only when the catalog changed or its stamp is half as old as that: KV takes about one write
// per second per key, and many sessions of a team start at once. A changed tool list is told (`toolsChanged`). A
// cached catalog that does not parse is a cache miss (the upstream is read as if nothing were cached), logged once.
// An entry carries its tools' digests, made once as it is written, which key the isolate's search indexes.
import * as z from "zod";
import type { ClientCapabilities, Implementation, Prompt, Resource, ResourceTemplateType as ResourceTemplate, ServerCapabilities, Tool } from "@modelcontextprotocol/server";
import { sha256Hex } from "../lib/bytes.ts";
import { jsonOrUndefined, kvKeys, logUnreadable } from "../config/keys.ts";
import type { ConfigMode, UpstreamSpec } from "../config/validate.ts";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import { TOOL_DIGEST_VERSION, keepToolDigests, toolDigests } from "../catalog/catalog-digest.ts";
import type { CatalogCache, TeamReading } from "../upstream/startup.ts";
import { accepted, type KvLike, type Same } from "./kv.ts";
import { canonicalJson } from "./pins.ts";
import { StoredIndex, indexToStore, loadStoredIndex } from "./stored-index.ts";

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

/**
 * How long a catalog read from its upstream is taken as current: 5 minutes. A 2026 tools/list's `ttlMs` is no longer
 * (src/modern/server.ts), so a host holds a catalog at most about twice this long.
 */
export const CATALOG_FRESH_MS = 300_000;
/** An unchanged catalog read anew renews its stamp at most this often (the rest of the reads write nothing). */
const STAMP_MS = CATALOG_FRESH_MS / 2;

/**
 * `team/<team>/catalog/<server>`: the catalog, the hash of the entry's config it came from, when it was saved (this
 * content), and when the team last read it from the upstream (absent in entries written before: `savedAt`).
 */
const CachedCatalog = z.object({
  config: z.string(),
  catalog: StoredCatalog,
  savedAt: z.string(),
  checkedAt: z.string().optional(),
  /** The catalog's tool digests (`toolDigests`, catalog-digest.ts) of TOOL_DIGEST_VERSION, made once where it was written. */
  digests: z.object({ v: z.number(), tools: z.array(z.string()) }).optional(),
  /** The catalog's search index as the team's filters show it (stored-index.ts), when the writer knew the mode. */
  index: StoredIndex.optional(),
});
type CachedCatalog = z.output<typeof CachedCatalog>;

/**
 * What a reading holds, by version: 2, readings cleaned of the team's secrets as they arrived (upstream/withheld.ts).
 * Readings written before may hold a secret an upstream echoed: with another version they are never used again.
 */
const READING_FORMAT = 2;

/**
 * What identifies an entry's catalog: everything that could change what the upstream answers or we keep. The era
 * cache (era-cache.ts) keys its verdicts by it too.
 */
export async function configHash(spec: UpstreamSpec): Promise<string> {
  const text = canonicalJson({ transport: spec.transport, url: spec.url, headers: spec.headers, tools: spec.tools, format: READING_FORMAT });
  return sha256Hex(text);
}

/** An upstream's tools changed, as this object read them anew: the server, and a digest of its new tools. */
export type ToolsChanged = (server: string, digest: string) => void;

export interface CatalogCacheOptions {
  /** The client capabilities the proxy declares to upstreams (each set its own entries); none by default. */
  capabilities?: () => ClientCapabilities;
  toolsChanged?: ToolsChanged;
  /** The mode the team's config names tools in: each entry then carries its search index (stored-index.ts). */
  searchMode?: ConfigMode;
}

/** The key part of a set of declared client capabilities: none for none (the key of entries written before). */
async function variantOf(capabilities: ClientCapabilities): Promise<string> {
  const text = canonicalJson(capabilities);
  return text === "{}" ? "" : (await sha256Hex(text)).slice(0, 16);
}

/** A cache entry of this very config, with its catalog's JSON and when it was last read from the upstream. */
interface Current {
  entry: CachedCatalog;
  json: string;
  checkedAt: number;
}

/**
 * What an entry read anew brings the search: its tools' digests, by which every object that searches the catalog keys
 * its index (no text hashed again), and its stored index, taken by an isolate that has none for it (no build).
 */
function takeSearchParts(spec: UpstreamSpec, entry: CachedCatalog, searchMode: ConfigMode | undefined): void {
  if (entry.digests?.v === TOOL_DIGEST_VERSION) keepToolDigests(entry.catalog.tools, entry.digests.tools);
  if (entry.index && searchMode) loadStoredIndex(spec, entry.catalog, searchMode, entry.index);
}

export function kvCatalogCache(kv: KvLike, team: string, { capabilities = () => ({}), toolsChanged, searchMode }: CatalogCacheOptions = {}): CatalogCache {
  /** What this cache last saw at each key (read or written): the catalog's JSON, when the team last read it. */
  const seen = new Map<string, { json: string; checkedAt: number }>();
  /** The text last read at each key and what it holds, so an entry read again unchanged is not parsed again. */
  const texts = new Map<string, { text: string; current: Current | undefined }>();
  const keyOf = async (spec: UpstreamSpec) => kvKeys.catalog(team, spec.name, await variantOf(capabilities()));

  async function read(spec: UpstreamSpec, key: string): Promise<Current | undefined> {
    const text = await kv.get(key);
    if (text === null) return undefined;
    const last = texts.get(key);
    if (last?.text === text) return last.current;
    const entry = accepted(CachedCatalog, jsonOrUndefined(text));
    if (!entry) logUnreadable("catalog cache", key);
    const current =
      entry && entry.config === (await configHash(spec))
        ? { entry, json: JSON.stringify(entry.catalog), checkedAt: Date.parse(entry.checkedAt ?? entry.savedAt) || 0 }
        : undefined;
    if (current) takeSearchParts(spec, current.entry, searchMode);
    texts.set(key, { text, current });
    return current;
  }

  return {
    async get(spec) {
      const key = await keyOf(spec);
      const current = await read(spec, key);
      if (!current) return undefined;
      seen.set(key, { json: current.json, checkedAt: current.checkedAt });
      return current.entry.catalog;
    },

    async latest(spec): Promise<TeamReading> {
      const key = await keyOf(spec);
      const current = await read(spec, key);
      const mine = seen.get(key);
      if (!current) return mine ? { checkedAt: mine.checkedAt } : {};
      // Newer: another object read something else since (an older entry is KV's propagation lagging behind our write).
      const newer = mine === undefined || (current.json !== mine.json && current.checkedAt > mine.checkedAt);
      const checkedAt = Math.max(current.checkedAt, mine?.checkedAt ?? 0);
      seen.set(key, newer ? { json: current.json, checkedAt } : { json: mine.json, checkedAt });
      return newer ? { newer: current.entry.catalog, checkedAt } : { checkedAt };
    },

    async put(spec, catalog, readAt) {
      const key = await keyOf(spec);
      const json = JSON.stringify(catalog);
      const mine = seen.get(key);
      if (mine?.json === json && readAt - mine.checkedAt < STAMP_MS) return undefined;
      // Compared with what the team holds now, not with what this object saw: another object may have written since.
      const current = await read(spec, key);
      const same = current?.json === json;
      if (current && !same && current.checkedAt >= readAt) {
        // Read anew by a read begun after this one: this reading is outdated (the upstream changed meanwhile).
        seen.set(key, { json: current.json, checkedAt: current.checkedAt });
        return current.entry.catalog;
      }
      if (current && same && readAt - current.checkedAt < STAMP_MS) {
        seen.set(key, { json, checkedAt: Math.max(current.checkedAt, readAt) });
        return undefined;
      }
      const stamp = new Date(readAt).toISOString();
      const entry: CachedCatalog = {
        config: await configHash(spec),
        catalog,
        savedAt: current && same ? current.entry.savedAt : stamp,
        checkedAt: stamp,
        digests: { v: TOOL_DIGEST_VERSION, tools: [...toolDigests(catalog.tools)] },
        ...(searchMode ? { index: indexToStore(spec, catalog, searchMode, current?.entry.index) } : {}),
      };
      seen.set(key, { json, checkedAt: readAt });
      await kv.put(key, JSON.stringify(entry));
      const tools = JSON.stringify(catalog.tools);
      if (current && !same && toolsChanged && tools !== JSON.stringify(current.entry.catalog.tools)) toolsChanged(spec.name, await sha256Hex(tools));
      return undefined;
    },
  };
}
