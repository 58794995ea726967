// Pure: the digests a shared search index is keyed by (src/catalog/shared-indexes.ts), one per tool, kept beside the
// tools they were made of for as long as those live. Made where a catalog comes in (read from the team's catalog
// cache, which stores them with the catalog, or from the upstream) and handed on through the views that only drop or
// copy tools, so a new session's first search keys its catalogs without reading their texts again: hashing 20,000
// tools' texts takes longer than the search itself.
import type { UpstreamCatalog } from "./catalog.ts";
import { schemaText } from "./search-index.ts";

/** What a tool's digest is made of, as far as an index reads it. */
export interface DigestedTool {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
}

/** Bumped whenever a digest is made of other texts or another way: a stored digest of another version is unused. */
export const TOOL_DIGEST_VERSION = 1;

/**
 * Two 32-bit FNV-1a hashes of different offsets over the texts' UTF-16 units, each text ended by a unit no text
 * has, with the total length.
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

let made = 0;

/** How many tool digests this isolate has made from texts (tests count a session's hashing by it). */
export const toolDigestsMade = (): number => made;

/**
 * The digest of every text an index reads of a tool: its name, description and the schema's words (property names,
 * titles, descriptions), not the schema's other parts, which no index reads.
 */
export function toolDigest(tool: DigestedTool): string {
  made++;
  const schema = schemaText(tool.inputSchema);
  return contentDigest([tool.name, tool.description ?? "\u0000", String(schema.length), ...schema]);
}

/** Per tools list (the array object), the digests of its tools in order. */
const kept = new WeakMap<readonly DigestedTool[], readonly string[]>();

/** The digests of `tools`, in order: the ones kept with this very list, else made now (and kept). */
export function toolDigests(tools: readonly DigestedTool[]): readonly string[] {
  const known = kept.get(tools);
  if (known?.length === tools.length) return known;
  const digests = tools.map(toolDigest);
  kept.set(tools, digests);
  return digests;
}

/**
 * Keeps `digests` (read with the catalog from the team's catalog cache, which made them when it stored it) with the
 * tools they were made of; a list of another length is ignored.
 */
export function keepToolDigests(tools: readonly DigestedTool[], digests: readonly string[]): void {
  if (digests.length === tools.length) kept.set(tools, digests);
}

/**
 * `to`'s tools given the digests of `from`'s wherever a tool is one of `from`'s or a copy with the very same name,
 * description and schema object (a view that drops tools or copies them with their text unchanged); any other tool's
 * made from its texts. Tools are matched in order, as views keep it. Returns `to`.
 */
export function handOnDigests(from: UpstreamCatalog, to: UpstreamCatalog): UpstreamCatalog {
  if (to.tools === from.tools || kept.has(to.tools)) return to;
  const known = toolDigests(from.tools);
  let j = 0;
  const digests = to.tools.map((tool) => {
    while (j < from.tools.length && from.tools[j]!.name !== tool.name) j++;
    const source = from.tools[j];
    if (source && (source === tool || (source.description === tool.description && source.inputSchema === tool.inputSchema))) return known[j++]!;
    // Not found from here on: the next one is looked for from the start again.
    j = source ? j + 1 : 0;
    return toolDigest(tool);
  });
  kept.set(to.tools, digests);
  return to;
}
