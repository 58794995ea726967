// Pure: a search index as bytes, to store beside the catalog, and read back checked. The layout: the version (u32,
// little-endian), the byte length of the text part (u32), the text part as UTF-8 JSON (`IndexText` and the posting
// count), zero padding to a multiple of 4, then the typed arrays' buffer as it is in memory (`indexArrays`). A
// reader trusts nothing: another version, a wrong shape or an inconsistent array gives undefined, and the caller
// builds the index anew.
import * as z from "zod";
import {
  COUNT_BITS,
  SEARCH_INDEX_VERSION,
  SERVER_FIELD_COUNT,
  TOOL_FIELD_COUNT,
  indexArrays,
  indexArraysBytes,
  numberedTerms,
  termsOf,
  type IndexText,
  type ToolIndex,
} from "./search-index.ts";
import { internTerm } from "./search-terms.ts";
import { ShownTools } from "./shown-tools.ts";

const HEADER = 8;

/** The text part as stored: checked against `IndexText` at compile time. */
const indexTextSchema: z.ZodType<IndexText & { postings: number }> = z.object({
  v: z.literal(SEARCH_INDEX_VERSION),
  analysis: z.object({ stem: z.boolean(), aliases: z.boolean(), exact: z.boolean() }),
  tools: z.array(z.object({ name: z.string(), server: z.string(), line: z.string() })),
  servers: z.array(z.object({ name: z.string(), lengths: z.array(z.number()), terms: z.array(z.string()), counts: z.array(z.number().int().min(0).max(0xffff)) })),
  terms: z.array(z.string()),
  postings: z.number().int().nonnegative(),
});

const pad4 = (n: number): number => (n + 3) & ~3;

/** The index as bytes (`readToolIndex` reads them back). */
export function toolIndexBytes(index: ToolIndex): Uint8Array {
  const text: IndexText & { postings: number } = {
    v: index.v,
    analysis: index.analysis,
    tools: index.tools.list(),
    servers: index.servers.map((s) => ({ ...s, counts: Array.from(s.counts) })),
    terms: termsOf(index),
    postings: index.postingTools.length,
  };
  const json = new TextEncoder().encode(JSON.stringify(text));
  const at = pad4(HEADER + json.length);
  const out = new Uint8Array(at + index.buffer.byteLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, SEARCH_INDEX_VERSION, true);
  view.setUint32(4, json.length, true);
  out.set(json, HEADER);
  out.set(new Uint8Array(index.buffer), at);
  return out;
}

const sortedStrictly = (list: readonly string[]): boolean => list.every((t, i) => i === 0 || list[i - 1]! < t);

/** The text part of stored bytes, if it parses and its servers are consistent. */
function readText(bytes: Uint8Array): { text: IndexText & { postings: number }; at: number } | undefined {
  if (bytes.length < HEADER) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== SEARCH_INDEX_VERSION) return undefined;
  const length = view.getUint32(4, true);
  if (HEADER + length > bytes.length) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes.subarray(HEADER, HEADER + length)));
  } catch {
    return undefined;
  }
  const parsed = indexTextSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const text = parsed.data;
  if (!sortedStrictly(text.terms)) return undefined;
  const names = new Set(text.servers.map((s) => s.name));
  if (names.size !== text.servers.length || text.tools.some((t) => !names.has(t.server))) return undefined;
  for (const s of text.servers) {
    if (s.lengths.length !== SERVER_FIELD_COUNT || s.counts.length !== s.terms.length * SERVER_FIELD_COUNT) return undefined;
    if (!sortedStrictly(s.terms)) return undefined;
  }
  return { text, at: pad4(HEADER + length) };
}

/** Whether every term has postings, tools ascending and in range, each with a count in some field. */
function consistent(index: ToolIndex): boolean {
  const { starts, postingTools, postingCounts } = index;
  const n = index.tools.length;
  if (starts[0] !== 0 || starts[starts.length - 1] !== postingTools.length) return false;
  for (let t = 0; t < index.termIds.length; t++) {
    if (starts[t + 1]! <= starts[t]!) return false;
    for (let p = starts[t]!; p < starts[t + 1]!; p++) {
      if (postingTools[p]! >= n || (p > starts[t]! && postingTools[p]! <= postingTools[p - 1]!)) return false;
      if (postingCounts[p] === 0 || postingCounts[p]! >= 2 ** (COUNT_BITS * TOOL_FIELD_COUNT)) return false;
    }
  }
  return true;
}

/** A stored index if its version is this one, it parses and it is consistent; else undefined (build it anew). */
export function readToolIndex(bytes: Uint8Array): ToolIndex | undefined {
  const read = readText(bytes);
  if (!read) return undefined;
  const { text, at } = read;
  const size = indexArraysBytes(text.tools.length, text.terms.length, text.postings);
  if (bytes.length - at !== size) return undefined;
  const arrays = indexArrays(text.tools.length, text.terms.length, text.postings, bytes.slice(at).buffer);
  const servers = text.servers.map((s) => ({ ...s, terms: s.terms.map(internTerm), counts: Uint16Array.from(s.counts) }));
  const index: ToolIndex = { v: text.v, analysis: text.analysis, tools: new ShownTools(text.tools), servers, ...numberedTerms(text.terms), ...arrays };
  return consistent(index) ? index : undefined;
}
