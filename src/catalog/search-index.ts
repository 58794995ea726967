// Pure: one upstream's tools as a search index, plain JSON (numbers, strings and arrays only), so it can be stored
// beside the catalog and read back (`readToolIndex`). Six fields: the tool name's parts, the description's first
// sentence, the rest of it, the parameters; the server's name and description, stored once per server and counted
// for each of its tools. Postings are packed (a tool-number gap and the four tool fields' counts in one number).
import * as z from "zod";
import { byCodePoint, oneLine } from "./render.ts";
import { DEFAULT_ANALYSIS, terms, type Analysis } from "./search-analysis.ts";

/** Bumped whenever the stored shape or the analysis changes: a stored index of another version is rebuilt. */
export const SEARCH_INDEX_VERSION = 2;

/** The fields of a tool itself, in the order of their counts in postings and lengths. */
export const TOOL_FIELDS = ["name", "summary", "description", "parameters"] as const;
/** The fields of a tool's server: stored once per server, counted for each of its tools. */
export const SERVER_FIELDS = ["server", "serverDescription"] as const;
export const SEARCH_FIELDS = [...TOOL_FIELDS, ...SERVER_FIELDS] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
export const TOOL_FIELD_COUNT = TOOL_FIELDS.length;
export const SERVER_FIELD_COUNT = SERVER_FIELDS.length;
/** A posting is two numbers: the tool's number less the previous posting's, and its field counts packed. */
export const POSTING = 2;
/** Bits of one field's count in a packed posting (a count is capped at 15: BM25 saturates long before). */
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

/** One upstream's tools, analysed: plain JSON (numbers, strings and arrays only). */
export interface ToolIndex {
  v: typeof SEARCH_INDEX_VERSION;
  /** How its text became terms; queries are analysed the same way. */
  analysis: Analysis;
  /** Per tool: its exposed name, its server and the one line a hit shows. */
  tools: Array<{ name: string; server: string; line: string }>;
  /**
   * Per server the tools name: its terms (sorted), their counts in each of SERVER_FIELDS (`SERVER_FIELD_COUNT`
   * numbers a term) and those fields' lengths. Stored once, counted for each of its tools.
   */
  servers: Array<{ name: string; lengths: number[]; terms: string[]; counts: number[] }>;
  /** Per tool, the number of terms in each of TOOL_FIELDS: `TOOL_FIELD_COUNT` numbers a tool. */
  lengths: number[];
  /** Every term of the tools' own fields, sorted by code point (so the same tools give the same JSON). */
  terms: string[];
  /**
   * Per term, its postings, tools ascending: `[gap, packed]` flattened, the gap the tool's number less the previous
   * posting's (the first: its number), packed the term's count in each of TOOL_FIELDS, COUNT_BITS bits each.
   */
  postings: number[][];
}

/** Reads a stored index; checked against `ToolIndex` at compile time. `readToolIndex` also checks consistency. */
export const toolIndexSchema: z.ZodType<ToolIndex> = z.object({
  v: z.literal(SEARCH_INDEX_VERSION),
  analysis: z.object({ stem: z.boolean(), aliases: z.boolean(), exact: z.boolean() }),
  tools: z.array(z.object({ name: z.string(), server: z.string(), line: z.string() })),
  servers: z.array(z.object({ name: z.string(), lengths: z.array(z.number()), terms: z.array(z.string()), counts: z.array(z.number()) })),
  lengths: z.array(z.number()),
  terms: z.array(z.string()),
  postings: z.array(z.array(z.number())),
});

const sortedStrictly = (list: readonly string[]): boolean => list.every((t, i) => i === 0 || list[i - 1]! < t);

/** A stored index if it parses and is consistent (counts match, terms sorted, postings in range), else undefined. */
export function readToolIndex(value: unknown): ToolIndex | undefined {
  const parsed = toolIndexSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const index = parsed.data;
  const n = index.tools.length;
  if (index.lengths.length !== n * TOOL_FIELD_COUNT || index.terms.length !== index.postings.length) return undefined;
  if (!sortedStrictly(index.terms)) return undefined;
  const names = new Set(index.servers.map((s) => s.name));
  if (names.size !== index.servers.length || index.tools.some((t) => !names.has(t.server))) return undefined;
  for (const s of index.servers) {
    if (s.lengths.length !== SERVER_FIELD_COUNT || s.counts.length !== s.terms.length * SERVER_FIELD_COUNT) return undefined;
    if (!sortedStrictly(s.terms)) return undefined;
  }
  for (const list of index.postings) {
    if (list.length === 0 || list.length % POSTING !== 0) return undefined;
    let tool = -1;
    for (let p = 0; p < list.length; p += POSTING) {
      const gap = list[p]!;
      const packed = list[p + 1]!;
      if (!Number.isInteger(gap) || (p === 0 ? gap < 0 : gap < 1)) return undefined;
      tool += p === 0 ? gap + 1 : gap;
      if (tool >= n || !Number.isInteger(packed) || packed <= 0 || packed >= 2 ** (COUNT_BITS * TOOL_FIELD_COUNT)) return undefined;
    }
  }
  return index;
}

/** Property names, titles and descriptions of a JSON Schema, nested objects and array items included (bounded). */
function schemaText(schema: unknown, depth = 0, out: string[] = []): string[] {
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

/** The index of one upstream's tools (or any set of tools), in the given order. */
export function indexTools(tools: readonly SearchInput[], analysis: Analysis = DEFAULT_ANALYSIS): ToolIndex {
  const byTerm = new Map<string, number[]>();
  const lengths: number[] = [];
  const memo = new Map<string, readonly string[]>();
  tools.forEach((tool, number) => {
    const counts = new Map<string, number>();
    toolFieldTexts(tool).forEach((text, field) => {
      const list = terms(text, analysis, memo);
      lengths.push(list.length);
      const shift = field * COUNT_BITS;
      for (const term of list) {
        const packed = counts.get(term) ?? 0;
        if (((packed >> shift) & COUNT_MAX) < COUNT_MAX) counts.set(term, packed + (1 << shift));
      }
    });
    for (const [term, packed] of counts) {
      let list = byTerm.get(term);
      if (!list) byTerm.set(term, (list = []));
      list.push(number, packed);
    }
  });
  const sorted = [...byTerm.keys()].sort(byCodePoint);
  const servers = new Map<string, string | undefined>();
  for (const t of tools) if (!servers.has(t.server)) servers.set(t.server, t.serverDescription);
  return {
    v: SEARCH_INDEX_VERSION,
    analysis: { stem: analysis.stem, aliases: analysis.aliases, exact: analysis.exact },
    tools: tools.map((t) => ({ name: t.name, server: t.server, line: oneLine(t.description) })),
    servers: [...servers].map(([name, description]) => serverEntry(name, description, analysis, memo)),
    lengths,
    terms: sorted,
    // Copied to their exact length: arrays grown by push keep spare room (half the heap at 20,000 tools).
    postings: sorted.map((term) => gaps(byTerm.get(term)!).slice()),
  };
}

/** `[tool, packed]…` with tools ascending → `[gap, packed]…`, the first entry keeping its own number. */
function gaps(list: number[]): number[] {
  let previous = -1;
  for (let p = 0; p < list.length; p += POSTING) {
    const tool = list[p]!;
    list[p] = p === 0 ? tool : tool - previous;
    previous = tool;
  }
  return list;
}

function serverEntry(name: string, description: string | undefined, analysis: Analysis, memo: Map<string, readonly string[]>): ToolIndex["servers"][number] {
  const fields = [terms(name, analysis, memo), terms(description ?? "", analysis, memo)];
  const counts = new Map<string, number[]>();
  fields.forEach((list, f) => {
    for (const term of list) {
      let c = counts.get(term);
      if (!c) counts.set(term, (c = new Array<number>(SERVER_FIELD_COUNT).fill(0)));
      c[f]! += 1;
    }
  });
  const sorted = [...counts.keys()].sort(byCodePoint);
  return { name, lengths: fields.map((l) => l.length), terms: sorted, counts: sorted.flatMap((t) => counts.get(t)!) };
}
