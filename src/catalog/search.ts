// Pure: full-text search over the tools of one or more upstreams, for discover_tool's `query`. An index is built once
// per upstream catalog (`indexTools`), is plain JSON (so it can be stored beside the catalog, `toolIndexSchema`
// reads it back), and any number of them are searched together (`searchTools`) with statistics over their union:
// BM25F over six fields (the tool name's parts, the description's first sentence, the rest of it, the parameters,
// the server's name, the server's description), English stemming (Porter2), a short stop-word list, and a query
// widened by general equivalences (a software-verb list at lower weight, partial server names). The same indexes
// and query give the same answer, byte for byte.
import { stem } from "porter2";
import * as z from "zod";
import { byCodePoint, oneLine } from "./render.ts";

/** Bumped whenever the stored shape or the analysis changes: a stored index of another version is rebuilt. */
export const SEARCH_INDEX_VERSION = 2;

/** The fields of a tool itself, in the order of their counts in postings and lengths. */
export const TOOL_FIELDS = ["name", "summary", "description", "parameters"] as const;
/** The fields of a tool's server: stored once per server, counted for each of its tools. */
export const SERVER_FIELDS = ["server", "serverDescription"] as const;
export const SEARCH_FIELDS = [...TOOL_FIELDS, ...SERVER_FIELDS] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
const TOOL_FIELD_COUNT = TOOL_FIELDS.length;
const SERVER_FIELD_COUNT = SERVER_FIELDS.length;
/** A posting is two numbers: the tool's number less the previous posting's, and its field counts packed. */
const POSTING = 2;
/** Bits of one field's count in a packed posting (a count is capped at 15: BM25 saturates long before). */
const COUNT_BITS = 4;
const COUNT_MAX = (1 << COUNT_BITS) - 1;

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

// ---------------------------------------------------------------------------------------------------------------
// Analysis: text → terms.

/** Words that carry no meaning for choosing a tool (articles, pronouns, auxiliaries, the commonest prepositions). */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about an and are as at be been being by can could did do does for from had has have how i if in into is it " +
    "its me my of on or our please should so than that the their them then there these they this those to us was " +
    "we were what when where which while who whom why will with would you your"
  ).split(" "),
);

/**
 * Words of a request rather than of a task, dropped from queries only: how people ask ("can you just show me…",
 * "I'd like to…", "right now"). Verbs a tool name may start with (get, list, show…) are not among them.
 */
const FILLER_WORDS: ReadonlySet<string> = new Set(
  (
    "am anything actually also any currently d give going here hey hi just kindly know let lets like ll m maybe mine " +
    "need needs now ok okay pls quick quickly re really right s some somebody someone something still sure t tell " +
    "thanks thing things today ve want wanna wants way whether yes"
  ).split(" "),
);

/**
 * One word: a run of capitals ending in a plural s (`IDs`, `PRs`), a run of capitals before a capitalised word
 * (`HTML` of `HTMLParser`), a capitalised or lowercase word, a run of capitals, digits, other letters.
 */
const WORD = /\p{Lu}{2,}s(?!\p{Ll})|\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|\p{L}+/gu;

/**
 * The words of a text, lowercased, before stop words and stemming: anything not a letter or digit separates
 * words, and so do a change from lowercase to uppercase (`getPullRequest`), the last capital of a run followed by
 * lowercase (`HTMLParser` → html, parser) and a change between letters and digits (`base64` → base, 64).
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const chunk of text.split(/[^\p{L}\p{N}]+/u)) {
    if (!chunk) continue;
    let parts = 0;
    for (const match of chunk.matchAll(WORD)) {
      const word = match[0];
      // `PRs` → pr: the plural s of an acronym is no part of it.
      out.push((word.length > 2 && word.endsWith("s") && /^\p{Lu}+s$/u.test(word) ? word.slice(0, -1) : word).toLowerCase());
      parts++;
    }
    // A name written as one (`GitLab`, `k8s`) is also the whole word, as others write it (`gitlab`).
    if (parts > 1) out.push(chunk.toLowerCase());
  }
  return out;
}

/**
 * Abbreviations written for words, the same at index and query time: the common short forms of software
 * vocabulary, each read as its full words. Kept short and general, none particular to one product or catalog
 * (a change bumps SEARCH_INDEX_VERSION); bench/selection.ts reports the search with and without it.
 */
const ALIASES: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    mr: "merge request",
    pr: "pull request",
    repo: "repository",
    db: "database",
    dir: "directory",
    org: "organization",
    config: "configuration",
    env: "environment",
    info: "information",
    doc: "documentation",
    docs: "documentation",
    auth: "authentication",
    msg: "message",
    param: "parameter",
    params: "parameter",
    stats: "statistics",
    k8s: "kubernetes",
  }).map(([word, to]) => [word, to.split(" ")]),
);

/**
 * General equivalences of software vocabulary, used to widen a query at a lower weight (never at index time): the
 * verbs of the usual operations on anything (create, read, list, search, update, delete, run, stop…) and a few
 * nouns every catalog names several ways. Written from the common vocabulary of APIs and CLIs, not from any query
 * set; a word may sit in several groups.
 */
const SYNONYM_GROUPS: readonly string[] = [
  "create add new make generate setup build",
  "delete remove drop erase destroy wipe purge discard clear",
  "get fetch retrieve read show view display open",
  "list show enumerate browse all",
  "search find query lookup locate grep filter",
  "update edit change modify alter set patch adjust",
  "rename retitle",
  "run execute exec start launch trigger invoke kick",
  "stop cancel abort terminate kill halt end",
  "restart rerun retry",
  "close shut",
  "copy duplicate clone",
  "move relocate",
  "write save store put",
  "upload attach",
  "download save export",
  "send post publish submit",
  "connect link attach join",
  "disconnect detach unlink",
  "approve accept confirm",
  "reject decline deny refuse",
  "comment note remark reply",
  "issue bug ticket",
  "error exception crash failure fault",
  "log output",
  "user member account person people",
  "folder directory",
  "file document",
  "image picture screenshot",
  "webpage page site",
  "url link address",
];

/** How text becomes terms; an index and the queries run against it must agree (bench/selection.ts turns parts off). */
export interface Analysis {
  /** Porter2 stemming of ASCII words. */
  stem: boolean;
  /** The ALIASES table. */
  aliases: boolean;
  /** Each word's own form as a term too (marked `=word`), so an exact match counts beside the stem's. */
  exact: boolean;
}

export const DEFAULT_ANALYSIS: Analysis = { stem: true, aliases: true, exact: true };

/** The terms of one word: stemmed, aliased, none for a stop word or a single letter. */
function termsOfWord(word: string, analysis: Analysis): readonly string[] {
  if (STOP_WORDS.has(word)) return [];
  if (word.length === 1) return word >= "0" && word <= "9" ? [word] : [];
  const alias = analysis.aliases ? (ALIASES.get(word) ?? ALIASES.get(word.endsWith("s") ? word.slice(0, -1) : "")) : undefined;
  if (alias) return alias.flatMap((w) => termsOfWord(w, { ...analysis, aliases: false }));
  if (!analysis.stem || !/^[a-z]+$/.test(word)) return [word];
  const stemmed = stem(word);
  return analysis.exact ? [stemmed, `=${word}`] : [stemmed];
}

/**
 * The index terms of a text: its words without stop words and single letters, aliased and stemmed (Porter2).
 * `memo` keeps each word's terms for the rest of one build.
 */
export function terms(text: string, analysis: Analysis = DEFAULT_ANALYSIS, memo?: Map<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    let t = memo?.get(word);
    if (t === undefined) {
      t = termsOfWord(word, analysis);
      memo?.set(word, t);
    }
    for (const x of t) out.push(x);
  }
  return out;
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

// ---------------------------------------------------------------------------------------------------------------
// Building.

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

// ---------------------------------------------------------------------------------------------------------------
// Searching.

export interface FieldRanking {
  /** How much a term in this field counts against one in another. */
  weight: number;
  /** Length normalisation (0: none, 1: full), as BM25's b. */
  b: number;
}

export interface Ranking {
  /** Term-frequency saturation, as BM25's k1. */
  k1: number;
  fields: Record<SearchField, FieldRanking>;
  /** How much a word's SYNONYM_GROUPS equivalents weigh against the query's own words (0: not used). */
  synonyms: number;
  /** Query words that name a server only in part (`mongo`, `postgresql`) count as its name (4 letters or more). */
  serverPrefixes: boolean;
  /** Drop FILLER_WORDS from queries. */
  filler: boolean;
}

/** The ranking discover_tool uses, chosen on bench/selection's dev queries (`node bench/selection.ts`, BENCHMARKS.md). */
export const DEFAULT_RANKING: Ranking = {
  k1: 2,
  fields: {
    name: { weight: 3, b: 0.5 },
    summary: { weight: 1.5, b: 0.75 },
    description: { weight: 0.5, b: 0.75 },
    parameters: { weight: 0.3, b: 0.75 },
    server: { weight: 1.5, b: 0.75 },
    serverDescription: { weight: 1.5, b: 0.75 },
  },
  synonyms: 0.5,
  serverPrefixes: true,
  filler: true,
};

export const SEARCH_LIMIT_DEFAULT = 8;
export const SEARCH_LIMIT_MAX = 25;

export interface SearchOptions {
  /** How many hits at most: default 8, clamped to 1..25. */
  limit?: number | undefined;
  /** Only tools of this server. */
  server?: string | undefined;
  /** Another ranking than DEFAULT_RANKING (the benchmark's tuning). */
  ranking?: Ranking | undefined;
}

export interface SearchHit {
  name: string;
  server: string;
  /** The tool's catalog line: the first sentence of its description, at most 100 characters. */
  description: string;
  /** BM25F score, rounded to 3 decimals (the order is by the unrounded score, then by name). */
  score: number;
}

/** The clamped limit: an integer in 1..25, the default for anything not a finite number. */
export function searchLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return SEARCH_LIMIT_DEFAULT;
  return Math.min(SEARCH_LIMIT_MAX, Math.max(1, Math.floor(limit)));
}

/** What a search needs of an index beyond its JSON, derived on its first search and kept while the index lives. */
interface Prepared {
  /** Per SEARCH_FIELDS field, the sum of its length over the index's tools (a server's counted once per tool). */
  totals: number[];
  /** Per server entry, its tools. */
  serverTools: number[][];
  /** Per tool, its server entry. */
  toolServer: Int32Array;
}

const prepared = new WeakMap<ToolIndex, Prepared>();

function prepare(index: ToolIndex): Prepared {
  let p = prepared.get(index);
  if (p) return p;
  const entry = new Map(index.servers.map((s, i) => [s.name, i]));
  const toolServer = new Int32Array(index.tools.length);
  const serverTools: number[][] = index.servers.map(() => []);
  const totals = new Array<number>(SEARCH_FIELDS.length).fill(0);
  index.tools.forEach((t, tool) => {
    const s = entry.get(t.server) ?? -1;
    toolServer[tool] = s;
    if (s >= 0) {
      serverTools[s]!.push(tool);
      const lengths = index.servers[s]!.lengths;
      for (let f = 0; f < SERVER_FIELD_COUNT; f++) totals[TOOL_FIELD_COUNT + f]! += lengths[f]!;
    }
    for (let f = 0; f < TOOL_FIELD_COUNT; f++) totals[f]! += index.lengths[tool * TOOL_FIELD_COUNT + f]!;
  });
  p = { totals, serverTools, toolServer };
  prepared.set(index, p);
  return p;
}

/**
 * A set of indexes searched together, with one lookup table for all their terms: a query term is one lookup,
 * however many upstreams there are. Kept for the last few sets searched (a session searches the same loaded set
 * again and again), keyed by the set's first index and checked member by member.
 */
interface Union {
  members: readonly ToolIndex[];
  preps: Prepared[];
  /** Tool t of member i is number offsets[i] + t in the union. */
  offsets: number[];
  count: number;
  totals: number[];
  /** Per term, where it has postings: `[member, term position]` flattened. */
  terms: Map<string, number[]>;
  /** Per term, the servers having it: `[member, server entry, term position]` flattened. */
  serverTerms: Map<string, number[]>;
  /** The words of every server's name (for `serverPrefixes`). */
  serverWords: string[];
}

const UNIONS_KEPT = 4;
const unions = new WeakMap<ToolIndex, Union[]>();

function unionOf(list: readonly ToolIndex[]): Union {
  const first = list[0];
  const kept = first ? (unions.get(first) ?? []) : [];
  const found = kept.find((u) => u.members.length === list.length && u.members.every((m, i) => m === list[i]));
  if (found) return found;
  const push = <K>(map: Map<K, number[]>, key: K, ...values: number[]): void => {
    let entry = map.get(key);
    if (!entry) map.set(key, (entry = []));
    entry.push(...values);
  };
  const terms = new Map<string, number[]>();
  const serverTerms = new Map<string, number[]>();
  const offsets: number[] = [];
  const totals = new Array<number>(SEARCH_FIELDS.length).fill(0);
  const serverWords = new Set<string>();
  let count = 0;
  const preps = list.map((index, i) => {
    const p = prepare(index);
    offsets.push(count);
    count += index.tools.length;
    p.totals.forEach((t, f) => (totals[f]! += t));
    index.terms.forEach((term, at) => push(terms, term, i, at));
    index.servers.forEach((server, s) => {
      server.terms.forEach((term, at) => push(serverTerms, term, i, s, at));
      for (const w of words(server.name)) serverWords.add(w);
    });
    return p;
  });
  const union: Union = { members: [...list], preps, offsets, count, totals, terms, serverTerms, serverWords: [...serverWords] };
  if (first) unions.set(first, [union, ...kept].slice(0, UNIONS_KEPT));
  return union;
}

let synonyms: Map<string, string[]> | undefined;

/** A word's SYNONYM_GROUPS equivalents, found by its stem (`removing` → delete, drop…); the table is made at first use. */
function synonymsOf(word: string): readonly string[] {
  if (!synonyms) {
    synonyms = new Map();
    for (const group of SYNONYM_GROUPS) {
      const members = group.split(" ");
      for (const m of members) {
        const key = stem(m);
        const list = synonyms.get(key) ?? [];
        for (const other of members) if (other !== m && !list.includes(other)) list.push(other);
        synonyms.set(key, list);
      }
    }
  }
  return synonyms.get(/^[a-z]+$/.test(word) ? stem(word) : word) ?? [];
}

/** The weighted terms of a query: its own words' (weight 1), then each widening's at its weight, the highest kept. */
function queryTerms(list: readonly ToolIndex[], query: string, ranking: Ranking): Map<string, number> {
  const analysis = list[0]?.analysis ?? DEFAULT_ANALYSIS;
  const out = new Map<string, number>();
  const add = (termList: readonly string[], weight: number): void => {
    if (weight <= 0) return;
    for (const t of termList) if ((out.get(t) ?? 0) < weight) out.set(t, weight);
  };
  const content = words(query).filter((w) => !STOP_WORDS.has(w) && !(ranking.filler && FILLER_WORDS.has(w)));
  for (const w of content) add(termsOfWord(w, analysis), 1);
  if (out.size === 0) return out;
  for (const w of content) {
    if (!/^[a-z]+$/.test(w) || w.length < 3) continue;
    if (ranking.synonyms > 0) for (const s of synonymsOf(w)) add(termsOfWord(s, { ...analysis, exact: false }), ranking.synonyms);
    if (ranking.serverPrefixes && w.length >= 4) {
      for (const name of unionOf(list).serverWords) {
        if (name !== w && name.length >= 4 && (name.startsWith(w) || w.startsWith(name))) add(termsOfWord(name, analysis), 1);
      }
    }
  }
  return out;
}

interface Candidate {
  index: number;
  tool: number;
  score: number;
  name: string;
}

const better = (a: Candidate, b: Candidate): boolean => a.score > b.score || (a.score === b.score && a.name < b.name);

/** Scratch space of `score`, grown to the largest union searched and cleared after each search. */
let scratchScores = new Float64Array(0);
let scratchSeen = new Int32Array(0);

/**
 * The tools of `list` sharing a term with the weighted query, scored: the best `limit` sorted (score, then name),
 * or with no limit every one, unsorted. See searchTools.
 */
function score(list: readonly ToolIndex[], query: ReadonlyMap<string, number>, options: SearchOptions, ranking: Ranking, limit: number | undefined): Candidate[] {
  if (query.size === 0 || list.length === 0) return [];
  const u = unionOf(list);
  const count = u.count;
  if (count === 0) return [];
  // The union's statistics: each field's average length.
  const fields = SEARCH_FIELDS.map((f) => ranking.fields[f]);
  const average = u.totals.map((total) => Math.max(total / count, 1e-9));
  if (scratchScores.length < count) {
    scratchScores = new Float64Array(count);
    scratchSeen = new Int32Array(count);
  }
  const scores = scratchScores;
  // The last query term that credited each tool (0: none yet), so a server's share is not counted twice.
  const seen = scratchSeen;
  const touched: number[] = [];
  const owner: number[] = [];
  const onlyServer = options.server;
  let q = 0;
  for (const [term, weight] of query) {
    q++;
    const postingsAt = u.terms.get(term) ?? [];
    const serversAt = u.serverTerms.get(term) ?? [];
    if (postingsAt.length === 0 && serversAt.length === 0) continue;
    // The term's server-field tf for each server having it, by member; and its document frequency.
    const serverTf = new Map<number, Float64Array>();
    let df = 0;
    for (let k = 0; k < serversAt.length; k += 3) {
      const i = serversAt[k]!;
      const s = serversAt[k + 1]!;
      const at = serversAt[k + 2]!;
      const server = list[i]!.servers[s]!;
      let tf = 0;
      for (let f = 0; f < SERVER_FIELD_COUNT; f++) {
        const n = server.counts[at * SERVER_FIELD_COUNT + f]!;
        if (n === 0) continue;
        const { weight: w, b } = fields[TOOL_FIELD_COUNT + f]!;
        tf += (w * n) / (1 - b + (b * server.lengths[f]!) / average[TOOL_FIELD_COUNT + f]!);
      }
      if (tf <= 0) continue;
      let tfs = serverTf.get(i);
      if (!tfs) serverTf.set(i, (tfs = new Float64Array(list[i]!.servers.length)));
      tfs[s] = tf;
      df += u.preps[i]!.serverTools[s]!.length;
    }
    for (let k = 0; k < postingsAt.length; k += 2) {
      const i = postingsAt[k]!;
      const postings = list[i]!.postings[postingsAt[k + 1]!]!;
      const tfs = serverTf.get(i);
      if (!tfs) {
        df += postings.length / POSTING;
        continue;
      }
      // Tools with the term in their own fields and their server's are counted once.
      const toolServer = u.preps[i]!.toolServer;
      let tool = -1;
      for (let p = 0; p < postings.length; p += POSTING) {
        tool += p === 0 ? postings[p]! + 1 : postings[p]!;
        const s = toolServer[tool]!;
        if (!(s >= 0 && tfs[s]! > 0)) df++;
      }
    }
    if (df === 0) continue;
    const idf = weight * Math.log(1 + (count - df + 0.5) / (df + 0.5));
    const credit = (key: number, i: number, tf: number): void => {
      if (tf <= 0) return;
      if (seen[key] === 0) {
        touched.push(key);
        owner.push(i);
      }
      seen[key] = q;
      scores[key] = scores[key]! + (idf * tf) / (ranking.k1 + tf);
    };
    for (let k = 0; k < postingsAt.length; k += 2) {
      const i = postingsAt[k]!;
      const index = list[i]!;
      const postings = index.postings[postingsAt[k + 1]!]!;
      const base = u.offsets[i]!;
      const tfs = serverTf.get(i);
      const toolServer = u.preps[i]!.toolServer;
      const lengths = index.lengths;
      let tool = -1;
      for (let p = 0; p < postings.length; p += POSTING) {
        tool += p === 0 ? postings[p]! + 1 : postings[p]!;
        if (onlyServer !== undefined && index.tools[tool]!.server !== onlyServer) continue;
        const packed = postings[p + 1]!;
        let tf = 0;
        for (let f = 0; f < TOOL_FIELD_COUNT; f++) {
          const n = (packed >> (f * COUNT_BITS)) & COUNT_MAX;
          if (n === 0) continue;
          const { weight: w, b } = fields[f]!;
          tf += (w * n) / (1 - b + (b * lengths[tool * TOOL_FIELD_COUNT + f]!) / average[f]!);
        }
        const s = toolServer[tool]!;
        if (tfs && s >= 0) tf += tfs[s]!;
        credit(base + tool, i, tf);
      }
    }
    for (const [i, tfs] of serverTf) {
      const base = u.offsets[i]!;
      const servers = list[i]!.servers;
      tfs.forEach((tf, s) => {
        if (tf <= 0 || (onlyServer !== undefined && servers[s]!.name !== onlyServer)) return;
        // Tools with the term in their own fields were credited above, with their server's share.
        for (const tool of u.preps[i]!.serverTools[s]!) if (seen[base + tool] !== q) credit(base + tool, i, tf);
      });
    }
  }
  const candidate = (k: number): Candidate => {
    const key = touched[k]!;
    const i = owner[k]!;
    const tool = key - u.offsets[i]!;
    return { index: i, tool, score: scores[key]!, name: list[i]!.tools[tool]!.name };
  };
  const out: Candidate[] = [];
  if (limit === undefined) {
    touched.forEach((key, k) => {
      if (scores[key]! > 0) out.push(candidate(k));
    });
  } else {
    // The best `limit`, kept sorted by insertion (limit ≤ 25): a candidate is made only for a tool that enters.
    touched.forEach((key, k) => {
      const value = scores[key]!;
      if (!(value > 0)) return;
      const last = out[out.length - 1];
      if (out.length === limit && last && value < last.score) return;
      const c = candidate(k);
      if (out.length === limit && last && !better(c, last)) return;
      let at = out.length;
      while (at > 0 && better(c, out[at - 1]!)) at--;
      out.splice(at, 0, c);
      if (out.length > limit) out.pop();
    });
  }
  for (const key of touched) {
    scores[key] = 0;
    seen[key] = 0;
  }
  return out;
}

const asList = (indexes: ToolIndex | readonly ToolIndex[]): readonly ToolIndex[] =>
  Array.isArray(indexes) ? indexes : [indexes as ToolIndex];

function hit(list: readonly ToolIndex[], c: Candidate): SearchHit {
  const entry = list[c.index]!.tools[c.tool]!;
  return { name: entry.name, server: entry.server, description: entry.line, score: Math.round(c.score * 1000) / 1000 };
}

/** The candidates for `query`: the best `limit` in order, or every one unsorted (see score). */
function candidates(list: readonly ToolIndex[], query: string, options: SearchOptions, limit: number | undefined): Candidate[] {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  return score(list, queryTerms(list, query, ranking), options, ranking, limit);
}

/**
 * The best tools for a free-text query over the union of `indexes`: document frequencies and field lengths are
 * those of the union, so scores compare across upstreams. Sorted by score, then name. Tools sharing no term with
 * the (widened) query are never returned; a query of stop words or punctuation only returns nothing.
 */
export function searchTools(indexes: ToolIndex | readonly ToolIndex[], query: string, options: SearchOptions = {}): SearchHit[] {
  const list = asList(indexes);
  return candidates(list, query, options, searchLimit(options.limit)).map((c) => hit(list, c));
}

/** Every matching tool in searchTools' order, without a limit: for benchmarks and tests. */
export function rankTools(indexes: ToolIndex | readonly ToolIndex[], query: string, options: Omit<SearchOptions, "limit"> = {}): SearchHit[] {
  const list = asList(indexes);
  return candidates(list, query, options, undefined)
    .sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
    .map((c) => hit(list, c));
}
