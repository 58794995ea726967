// The isolate's search indexes, one per catalog content: every session and toolset object of a team (and any team
// with the very same catalog) in one isolate searches ONE index of a catalog, built at the first search of any of
// them. An object's catalog is a fresh object (read from KV or from its upstream), so the key is made of digests of
// the texts the index is made of, not of the object; the digests travel with the catalog (catalog-digest.ts).
// Bounded by bytes, least recently used first out, so many teams cannot fill the isolate; an index pushed out is
// built again by whoever searches it next.
import { BoundedCache } from "../lib/bounded-cache.ts";
import { contentDigest } from "./catalog-digest.ts";
import { indexTools, type SearchInput, type ToolIndex } from "./search-index.ts";

/**
 * What the isolate keeps of all indexes together, in estimated bytes (typed arrays and strings): room for a team of
 * about 40,000 tools (20,041 tools are about 18 MiB by this estimate), a third of a Durable Object isolate's 128 MB. A
 * set of loaded catalogs larger than this builds some of its indexes at every search.
 */
export const SHARED_INDEX_BYTES = 40 * 1024 * 1024;

/** A kept index; `id` tells this build from any other kept under the same key before or after. */
export interface SharedEntry {
  index: ToolIndex;
  bytes: number;
  id: number;
}

/** The kept indexes by key, bounded by their estimated bytes; a use sets an entry again, so the least used go first. */
const keptBy = (bound: number) => new BoundedCache<string, SharedEntry>({ max: Infinity, maxWeight: bound, weigh: (e) => e.bytes });
let entries = keptBy(SHARED_INDEX_BYTES);
let builds = 0;

let loads = 0;
/** The last entry's id: builds and loads. */
let made = 0;

/** How many indexes this isolate has built (tests count a session's builds by it). */
export const sharedIndexBuilds = (): number => builds;

/** How many indexes this isolate has taken from their stored bytes instead of building them. */
export const sharedIndexLoads = (): number => loads;

/** Whether an index is kept under `key` (a stored one is then not worth reading). */
export const keptUnder = (key: string): boolean => entries.has(key);

/** The indexes kept and their estimated bytes. */
export const sharedIndexUse = (): { indexes: number; bytes: number } => ({ indexes: entries.size, bytes: entries.weight });

/** Forgets every kept index and bounds what is kept from now on (tests start from none, some with a small bound). */
export function clearSharedIndexes(bound = SHARED_INDEX_BYTES): void {
  entries = keptBy(bound);
}

/**
 * The key of the index of one upstream's tools: how they are shown (`shownAs`: the mode, the server's name and
 * description) and their digests in order (`toolDigests`, catalog-digest.ts), so it is made without reading their texts.
 */
export function indexKey(shownAs: readonly string[], digests: readonly string[]): string {
  return contentDigest([String(shownAs.length), ...shownAs, ...digests]);
}

/**
 * An index's estimated bytes: its buffer, its term numbers, what its hits show (shown-tools.ts), its servers' counts
 * and a reference per server term (terms are the isolate's, shared: search-terms.ts).
 */
function estimate(index: ToolIndex): number {
  const own = index.tools.bytes();
  let servers = 0;
  for (const s of index.servers) servers += 8 * s.terms.length + s.counts.byteLength;
  return index.buffer.byteLength + index.termIds.byteLength + own + servers;
}

/**
 * Whether a kept index shows the tools named `names` (in order) of `server`: a hit's name and server never come
 * from another catalog, whatever the key. Names only: a line is a fresh cut of its description, and cutting 20,000
 * of them takes longer than a search; the key (every text's digest) answers for the rest.
 */
export function showsTools(index: ToolIndex, server: string, names: readonly string[]): boolean {
  if (index.tools.length !== names.length) return false;
  return names.every((name, i) => index.tools.nameIs(i, name) && index.tools.server(i) === server);
}

/** The entry under `key` if it is build `id`, marked as just used; else undefined (pushed out or built anew). */
export function keptIndex(key: string, id: number): SharedEntry | undefined {
  const entry = entries.get(key);
  if (entry?.id !== id) return undefined;
  entries.set(key, entry);
  return entry;
}

/**
 * The index under `key` (`indexKey`): the kept one if `shows` it is the caller's, else built from `inputs()`. A build
 * is kept (the least recently used pushed out past SHARED_INDEX_BYTES) unless the key holds an index showing other
 * tools: then the new one is this caller's alone.
 */
export function sharedIndex(key: string, inputs: () => readonly SearchInput[], shows: (index: ToolIndex) => boolean): SharedEntry {
  const kept = entries.get(key);
  if (kept && shows(kept.index)) return keptIndex(key, kept.id)!;
  const index = indexTools(inputs());
  builds++;
  const entry = { index, bytes: estimate(index), id: ++made };
  if (kept) return entry;
  entries.set(key, entry);
  return entry;
}

/**
 * Keeps `index`, read back from its stored bytes (checked: search-index-bytes.ts) for a catalog whose key is `key`
 * and whose tools it `shows`, unless one is kept under that key already; says whether it was kept.
 */
export function adoptIndex(key: string, index: ToolIndex, shows: (index: ToolIndex) => boolean): boolean {
  if (entries.has(key) || !shows(index)) return false;
  loads++;
  entries.set(key, { index, bytes: estimate(index), id: ++made });
  return true;
}
