// The isolate's search indexes, one per catalog content: every session and toolset object of a team (and any team
// with the very same catalog) in one isolate searches ONE index of a catalog, built at the first search of any of
// them. An object's catalog is a fresh object (read from KV or from its upstream), so the key is a digest of the
// text the index is made of, not the object. Bounded by bytes, least recently used first out, so many teams cannot
// fill the isolate; an index pushed out is built again by whoever searches it next.
import { BoundedCache } from "../lib/bounded-cache.ts";
import { oneLine } from "./render.ts";
import { indexTools, schemaText, type SearchInput, type ToolIndex } from "./search-index.ts";

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

/** How many indexes this isolate has built (tests count a session's builds by it). */
export const sharedIndexBuilds = (): number => builds;

/** The indexes kept and their estimated bytes. */
export const sharedIndexUse = (): { indexes: number; bytes: number } => ({ indexes: entries.size, bytes: entries.weight });

/** Forgets every kept index and bounds what is kept from now on (tests start from none, some with a small bound). */
export function clearSharedIndexes(bound = SHARED_INDEX_BYTES): void {
  entries = keptBy(bound);
}

/**
 * Two 32-bit FNV-1a hashes of different offsets over the texts' UTF-16 units, each text ended by a unit no text
 * has, with the total length: the content key.
 */
export function contentDigest(texts: readonly string[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  let length = 0;
  for (const text of texts) {
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 0x1ffff;
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
    }
    length += text.length + 1;
  }
  return `${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}.${length.toString(36)}`;
}

/**
 * The key of the index of `inputs`: every text an index is made of (names, server, descriptions, the schema's
 * words), not the schemas' other parts, which no index reads (so no JSON of the whole catalog is made to key it).
 */
export function indexKey(inputs: readonly SearchInput[]): string {
  const texts: string[] = [];
  for (const t of inputs) {
    texts.push(t.name, t.server, t.serverDescription ?? "\u0000", t.tool, t.description ?? "\u0000");
    const schema = schemaText(t.inputSchema);
    texts.push(String(schema.length), ...schema);
  }
  return contentDigest(texts);
}

/**
 * An index's estimated bytes: its buffer, its own strings (two bytes a character, a header each) and a reference per
 * term (terms are the isolate's, shared: `internTerm`). Within a fifth of the heap measured at 20,041 tools.
 */
function estimate(index: ToolIndex): number {
  let own = 0;
  for (const t of index.tools) own += 2 * (t.name.length + t.line.length) + 2 * 24 + 32;
  let terms = index.terms.length;
  for (const s of index.servers) terms += s.terms.length * 3;
  return index.buffer.byteLength + own + 8 * terms;
}

/**
 * Whether a kept index shows exactly what `inputs` would: its hits' names, servers and lines. A digest is not
 * proof, and what a hit shows must never come from a catalog other than the searched one.
 */
function shows(index: ToolIndex, inputs: readonly SearchInput[]): boolean {
  if (index.tools.length !== inputs.length) return false;
  return inputs.every((t, i) => {
    const shown = index.tools[i]!;
    return shown.name === t.name && shown.server === t.server && shown.line === oneLine(t.description);
  });
}

/** The entry under `key` if it is build `id`, marked as just used; else undefined (pushed out or built anew). */
export function keptIndex(key: string, id: number): SharedEntry | undefined {
  const entry = entries.get(key);
  if (entry?.id !== id) return undefined;
  entries.set(key, entry);
  return entry;
}

/**
 * The index of `inputs` under `key` (`indexKey(inputs)`): the kept one if it shows these tools, else built. A build
 * is kept (the least recently used pushed out past SHARED_INDEX_BYTES) unless the key holds an index showing other
 * tools: then the new one is this caller's alone.
 */
export function sharedIndex(key: string, inputs: readonly SearchInput[]): SharedEntry {
  const kept = entries.get(key);
  if (kept && shows(kept.index, inputs)) return keptIndex(key, kept.id)!;
  const index = indexTools(inputs);
  builds++;
  const entry = { index, bytes: estimate(index), id: builds };
  if (kept) return entry;
  entries.set(key, entry);
  return entry;
}
