// Pure: one upstream's tools as a search index. Six fields: the tool name's parts, the description's first sentence,
// the rest of it, the parameters; the server's name and description, stored once per server and counted for each of
// its tools. The postings and lengths live in typed arrays over one buffer (a posting is a tool number and its four
// fields' counts in 16 bits), so a team's indexes hold about a quarter of the heap that arrays of numbers did, and an
// index is stored as bytes (search-index-bytes.ts) and read back without analysing any text again.
import { byCodePoint, oneLine } from "./render.ts";
import { DEFAULT_ANALYSIS, terms, termsOfWord, wordMemo, words, type Analysis } from "./search-analysis.ts";
import { internTerm, termIds, type TermIds, type TermTable } from "./search-terms.ts";
import { ShownTools, type ShownTool } from "./shown-tools.ts";

/** Bumped whenever the stored form or the analysis changes: a stored index of another version is rebuilt. */
export const SEARCH_INDEX_VERSION = 4;

/** The fields of a tool itself, in the order of their counts in postings and lengths. */
export const TOOL_FIELDS = ["name", "summary", "description", "parameters"] as const;
/** The fields of a tool's server: stored once per server, counted for each of its tools. */
export const SERVER_FIELDS = ["server", "serverDescription"] as const;
export const SEARCH_FIELDS = [...TOOL_FIELDS, ...SERVER_FIELDS] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
export const TOOL_FIELD_COUNT = TOOL_FIELDS.length;
export const SERVER_FIELD_COUNT = SERVER_FIELDS.length;
/** Bits of one field's count in a posting's counts (a count is capped at 15: BM25 saturates long before). */
export const COUNT_BITS = 4;
export const COUNT_MAX = (1 << COUNT_BITS) - 1;

/** What one tool brings to the index. */
export interface SearchInput {
  /** The name the host calls it by (`server/tool`, or the bare name in single-MCP mode); what a hit returns. */
  name: string;
  server: string;
  serverDescription?: string | undefined;
  /** The upstream's own tool name, split into words (`create_pull_request`, `getPullRequest`, `k8s-apply`). */
  tool: string;
  description?: string | undefined;
  /** The tool's JSON Schema: its property names, titles and descriptions are the parameters field. */
  inputSchema?: unknown;
}

/** A server the tools name: its terms (sorted), their counts in each of SERVER_FIELDS and those fields' lengths. */
export interface ServerEntry {
  name: string;
  lengths: number[];
  terms: string[];
  /** `SERVER_FIELD_COUNT` numbers a term. */
  counts: number[];
}

/** A server entry in memory: its counts in a typed array (a number each in a list takes four times the bytes). */
export interface IndexedServer extends Omit<ServerEntry, "counts"> {
  counts: Uint16Array;
}

/** The text part of an index: what is stored as JSON before the typed arrays' bytes. */
export interface IndexText {
  v: typeof SEARCH_INDEX_VERSION;
  /** How its text became terms; queries are analysed the same way. */
  analysis: Analysis;
  /** Per tool: its exposed name, its server and the one line a hit shows. */
  tools: ShownTool[];
  /** Per server the tools name, stored once and counted for each of its tools. */
  servers: ServerEntry[];
  /** Every term of the tools' own fields, sorted by code point (so the same tools give the same index). */
  terms: string[];
}

/**
 * One upstream's tools, analysed: the text part (its terms as numbers in the isolate's term table) and typed arrays
 * over one buffer (`buffer`).
 */
export interface ToolIndex extends Omit<IndexText, "terms" | "tools" | "servers"> {
  servers: IndexedServer[];
  /** Per tool, what a hit shows (held compactly). */
  tools: ShownTools;
  /** Term t is `table.strings[termIds[t]]`; in code-point order of the terms. */
  termIds: TermIds;
  table: TermTable;
  /** Per tool, the number of terms in each of TOOL_FIELDS: `TOOL_FIELD_COUNT` numbers a tool. */
  lengths: Uint32Array;
  /**
   * Term t's postings are positions starts[t] to starts[t + 1] (exclusive) of `postingTools`/`postingCounts` (16 bits
   * a position when there are fewer than SMALL postings).
   */
  starts: Uint16Array | Uint32Array;
  /**
   * Per posting, its tool's number; ascending within a term (8 bits a number when there are fewer than TINY tools, as
   * an upstream's index almost always has; 16 below SMALL).
   */
  postingTools: Uint8Array | Uint16Array | Uint32Array;
  /** Per posting, the term's count in each of TOOL_FIELDS, COUNT_BITS bits each (field 0 lowest). */
  postingCounts: Uint16Array;
  /** The one buffer the four arrays are views of, in the order lengths, starts, postingCounts, postingTools. */
  buffer: ArrayBuffer;
}

/** Below this count, positions and tool numbers take 16 bits. */
export const SMALL = 1 << 16;
/** Below this count, tool numbers take 8 bits. */
export const TINY = 1 << 8;

/**
 * Where each of the four typed arrays starts in their buffer (lengths, starts, postingCounts, postingTools), each at a
 * multiple of its numbers' size, and the buffer's size (a multiple of 4).
 */
function layout(tools: number, termCount: number, postings: number): { offsets: number[]; bytes: number } {
  const widths = [4, postings < SMALL ? 2 : 4, 2, tools < TINY ? 1 : tools < SMALL ? 2 : 4];
  const counts = [tools * TOOL_FIELD_COUNT, termCount + 1, postings, postings];
  let at = 0;
  const offsets = widths.map((w, k) => {
    const start = Math.ceil(at / w) * w;
    at = start + w * counts[k]!;
    return start;
  });
  return { offsets, bytes: Math.ceil(at / 4) * 4 };
}

/** The bytes `indexArrays` lays out for these counts. */
export const indexArraysBytes = (tools: number, termCount: number, postings: number): number => layout(tools, termCount, postings).bytes;

/** The four typed arrays of an index over one new buffer (or `from`, when reading stored bytes), each view aligned. */
export function indexArrays(tools: number, termCount: number, postings: number, from?: ArrayBuffer): Pick<ToolIndex, "lengths" | "starts" | "postingTools" | "postingCounts" | "buffer"> {
  const { offsets, bytes } = layout(tools, termCount, postings);
  const buffer = from ?? new ArrayBuffer(bytes);
  const [lengths, starts, counts, numbers] = offsets as [number, number, number, number];
  return {
    lengths: new Uint32Array(buffer, lengths, tools * TOOL_FIELD_COUNT),
    starts: postings < SMALL ? new Uint16Array(buffer, starts, termCount + 1) : new Uint32Array(buffer, starts, termCount + 1),
    postingCounts: new Uint16Array(buffer, counts, postings),
    postingTools: tools < TINY ? new Uint8Array(buffer, numbers, postings) : tools < SMALL ? new Uint16Array(buffer, numbers, postings) : new Uint32Array(buffer, numbers, postings),
    buffer,
  };
}

/** An index's terms, as numbers in the isolate's table. */
export function numberedTerms(sorted: readonly string[]): Pick<ToolIndex, "termIds" | "table"> {
  const { table, ids } = termIds(sorted);
  return { termIds: ids, table };
}

/** An index's terms as text, in order. */
export const termsOf = (index: ToolIndex): string[] => Array.from(index.termIds, (id) => index.table.strings[id]!);

/** Property names, titles and descriptions of a JSON Schema, nested objects and array items included (bounded). */
export function schemaText(schema: unknown, depth = 0, out: string[] = []): string[] {
  if (depth > 4 || typeof schema !== "object" || schema === null || Array.isArray(schema)) return out;
  const node = schema as Record<string, unknown>;
  if (depth > 0) {
    if (typeof node.title === "string") out.push(node.title);
    if (typeof node.description === "string") out.push(node.description);
  }
  const properties = node.properties;
  if (typeof properties === "object" && properties !== null && !Array.isArray(properties)) {
    for (const [name, child] of Object.entries(properties)) {
      out.push(name);
      schemaText(child, depth + 1, out);
    }
  }
  schemaText(node.items, depth + 1, out);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = node[key];
    if (Array.isArray(list)) for (const child of list) schemaText(child, depth + 1, out);
  }
  return out;
}

/** A description's first sentence and the rest (the first sentence is what it is; the rest, how and when). */
export function splitDescription(description: string | undefined): [string, string] {
  const text = (description ?? "").trim();
  const end = text.search(/[.!?](?=\s)|\n/);
  return end === -1 ? [text, ""] : [text.slice(0, end + 1), text.slice(end + 1)];
}

/** The text of each of TOOL_FIELDS of a tool. */
function toolFieldTexts(tool: SearchInput): string[] {
  const [summary, rest] = splitDescription(tool.description);
  return [tool.tool, summary, rest, schemaText(tool.inputSchema).join(" \n ")];
}

/** Postings as they are found: in tool order, each a term (by the build's own number), a tool and packed counts. */
interface Found {
  /** The build's terms, numbered in the order first found. */
  names: string[];
  lengths: Uint32Array;
  count: number;
  term: Int32Array<ArrayBuffer>;
  tool: Int32Array<ArrayBuffer>;
  counts: Int32Array<ArrayBuffer>;
}

const grown = (a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> => {
  if (a.length >= size) return a;
  const b = new Int32Array(Math.max(size, a.length * 2));
  b.set(a);
  return b;
};

/**
 * Every tool's terms and their packed counts in its fields, as flat arrays: a build makes no map or list per tool or
 * term (at 20,000 tools the garbage of those took longer than the analysis).
 */
function findPostings(tools: readonly SearchInput[], analysis: Analysis): Found {
  const memo = wordMemo(analysis);
  const numbers = new Map<string, number>();
  const found: Found = { names: [], lengths: new Uint32Array(tools.length * TOOL_FIELD_COUNT), count: 0, term: new Int32Array(256), tool: new Int32Array(256), counts: new Int32Array(256) };
  let packedOf = new Int32Array(256);
  const touched: number[] = [];
  tools.forEach((tool, number) => {
    toolFieldTexts(tool).forEach((text, field) => {
      const shift = field * COUNT_BITS;
      let length = 0;
      for (const word of words(text)) {
        let list = memo.get(word);
        if (list === undefined) memo.set(word, (list = termsOfWord(word, analysis)));
        for (const term of list) {
          length++;
          let id = numbers.get(term);
          if (id === undefined) {
            numbers.set(term, (id = found.names.length));
            found.names.push(term);
            packedOf = grown(packedOf, id + 1);
          }
          const packed = packedOf[id]!;
          if (packed === 0) touched.push(id);
          if (((packed >> shift) & COUNT_MAX) < COUNT_MAX) packedOf[id] = packed + (1 << shift);
        }
      }
      found.lengths[number * TOOL_FIELD_COUNT + field] = length;
    });
    const end = found.count + touched.length;
    [found.term, found.tool, found.counts] = [grown(found.term, end), grown(found.tool, end), grown(found.counts, end)];
    for (const id of touched) {
      found.term[found.count] = id;
      found.tool[found.count] = number;
      found.counts[found.count++] = packedOf[id]!;
      packedOf[id] = 0;
    }
    touched.length = 0;
  });
  return found;
}

/** The index of one upstream's tools (or any set of tools), in the given order. */
export function indexTools(tools: readonly SearchInput[], analysis: Analysis = DEFAULT_ANALYSIS): ToolIndex {
  const found = findPostings(tools, analysis);
  const order = found.names.map((_, id) => id).sort((a, b) => byCodePoint(found.names[a]!, found.names[b]!));
  const sorted = order.map((id) => found.names[id]!);
  const rank = new Int32Array(order.length);
  order.forEach((id, r) => (rank[id] = r));
  const arrays = indexArrays(tools.length, sorted.length, found.count);
  arrays.lengths.set(found.lengths);
  // A counting sort by term, stable: within a term, tools stay ascending.
  const next = new Uint32Array(sorted.length + 1);
  for (let p = 0; p < found.count; p++) next[rank[found.term[p]!]! + 1]!++;
  for (let t = 0; t < sorted.length; t++) next[t + 1]! += next[t]!;
  arrays.starts.set(next);
  for (let p = 0; p < found.count; p++) {
    const at = next[rank[found.term[p]!]!]!++;
    arrays.postingTools[at] = found.tool[p]!;
    arrays.postingCounts[at] = found.counts[p]!;
  }
  const servers = new Map<string, string | undefined>();
  for (const t of tools) if (!servers.has(t.server)) servers.set(t.server, t.serverDescription);
  return {
    v: SEARCH_INDEX_VERSION,
    analysis: { stem: analysis.stem, aliases: analysis.aliases, exact: analysis.exact },
    tools: shownTools(tools),
    servers: [...servers].map(([name, description]) => serverEntry(name, description, analysis, wordMemo(analysis))),
    ...numberedTerms(sorted),
    ...arrays,
  };
}

/**
 * Per tool what a hit shows. The names and lines are made fresh strings: a line cut from its description would
 * otherwise keep the whole description alive (a slice of a string refers to it), several times its own size.
 */
function shownTools(tools: readonly SearchInput[]): ShownTools {
  return new ShownTools(tools.map((t) => ({ name: t.name, server: t.server, line: oneLine(t.description) })));
}

function serverEntry(name: string, description: string | undefined, analysis: Analysis, memo: Map<string, readonly string[]>): IndexedServer {
  const fields = [terms(name, analysis, memo), terms(description ?? "", analysis, memo)];
  const counts = new Map<string, number[]>();
  fields.forEach((list, f) => {
    for (const term of list) {
      let c = counts.get(term);
      if (!c) counts.set(term, (c = new Array<number>(SERVER_FIELD_COUNT).fill(0)));
      c[f]! += 1;
    }
  });
  const sorted = [...counts.keys()].sort(byCodePoint).map(internTerm);
  const numbers = Uint16Array.from(sorted.flatMap((t) => counts.get(t)!), (n) => Math.min(n, 0xffff));
  return { name, lengths: fields.map((l) => l.length), terms: sorted, counts: numbers };
}
