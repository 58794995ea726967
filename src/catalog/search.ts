// Pure: full-text search over the tools of one or more upstreams, for discover_tool's `query`. An index is built once
// per upstream catalog (`indexTools`), is plain JSON (so it can be stored beside the catalog, `toolIndexSchema`
// reads it back), and any number of them are searched together (`searchTools`) with statistics over their union:
// BM25F over four fields (the tool name's parts, its description, its parameters, its server), English stemming
// (Porter2) and a short stop-word list. The same indexes and query give the same answer, byte for byte.
import { stem } from "porter2";
import * as z from "zod";
import { byCodePoint, oneLine } from "./render.ts";

/** Bumped whenever the stored shape or the analysis changes: a stored index of another version is rebuilt. */
export const SEARCH_INDEX_VERSION = 1;

/** The fields of a tool, in the order of their counts in postings and lengths. */
export const SEARCH_FIELDS = ["name", "description", "parameters", "server"] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
const FIELD_COUNT = SEARCH_FIELDS.length;
/** A posting: the tool's number in its index, then the term's count in each field. */
const POSTING = 1 + FIELD_COUNT;

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
  /** Per tool, the number of terms in each field (SEARCH_FIELDS order): `FIELD_COUNT` numbers a tool. */
  lengths: number[];
  /** Every term, sorted by code point (so the same tools give the same JSON). */
  terms: string[];
  /** Per term, its postings: `[tool, count in each field]` flattened, tools ascending. */
  postings: number[][];
}

/** Reads a stored index; checked against `ToolIndex` at compile time. `readToolIndex` also checks consistency. */
export const toolIndexSchema: z.ZodType<ToolIndex> = z.object({
  v: z.literal(SEARCH_INDEX_VERSION),
  analysis: z.object({ stem: z.boolean(), aliases: z.boolean(), exact: z.boolean() }),
  tools: z.array(z.object({ name: z.string(), server: z.string(), line: z.string() })),
  lengths: z.array(z.number()),
  terms: z.array(z.string()),
  postings: z.array(z.array(z.number())),
});

/** A stored index if it parses and is consistent (counts match, terms sorted, postings in range), else undefined. */
export function readToolIndex(value: unknown): ToolIndex | undefined {
  const parsed = toolIndexSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const index = parsed.data;
  const n = index.tools.length;
  if (index.lengths.length !== n * FIELD_COUNT || index.terms.length !== index.postings.length) return undefined;
  for (let t = 1; t < index.terms.length; t++) if (!(index.terms[t - 1]! < index.terms[t]!)) return undefined;
  for (const list of index.postings) {
    if (list.length === 0 || list.length % POSTING !== 0) return undefined;
    for (let p = 0; p < list.length; p += POSTING) {
      const tool = list[p]!;
      if (!Number.isInteger(tool) || tool < 0 || tool >= n) return undefined;
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
 * Words written for other words, the same at index and query time: common abbreviations of the tools' domain and
 * verbs for the same action, each mapped to the word tool names use most. Kept short and general (a change bumps
 * SEARCH_INDEX_VERSION); bench/selection.ts reports the search with and without it.
 */
const ALIASES: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    // Abbreviations.
    mr: "merge request",
    mrs: "merge request",
    pr: "pull request",
    prs: "pull request",
    repo: "repository",
    repos: "repository",
    db: "database",
    dbs: "database",
    dir: "directory",
    dirs: "directory",
    folder: "directory",
    folders: "directory",
    org: "organization",
    orgs: "organization",
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
    mongo: "mongodb",
    postgresql: "postgres",
    psql: "postgres",
    ado: "azure devops",
    ticket: "issue",
    tickets: "issue",
    // Verbs for one action.
    remove: "delete",
    erase: "delete",
    destroy: "delete",
    wipe: "delete",
    purge: "delete",
    fetch: "get",
    retrieve: "get",
    modify: "update",
    edit: "update",
    alter: "update",
    find: "search",
    locate: "search",
    lookup: "search",
    grep: "search",
    execute: "run",
    exec: "run",
    invoke: "run",
    launch: "run",
    trigger: "run",
    cancel: "stop",
    abort: "stop",
    terminate: "stop",
    kill: "stop",
    halt: "stop",
    make: "create",
  }).map(([word, to]) => [word, to.split(" ")]),
);

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
  const alias = analysis.aliases ? ALIASES.get(word) : undefined;
  if (alias) return alias.flatMap((w) => termsOfWord(w, { ...analysis, aliases: false }));
  if (!analysis.stem || !/^[a-z]+$/.test(word)) return [word];
  const stemmed = stem(word);
  // A word's stem may be an alias's (`removing` → remov, as `remove`).
  const again = analysis.aliases ? STEMMED_ALIASES.get(stemmed) : undefined;
  const base = again ?? [stemmed];
  return analysis.exact ? [...base, `=${word}`] : base;
}

/** ALIASES by the stem of their word, so inflected forms (`removed`, `tickets`) follow them. */
const STEMMED_ALIASES: ReadonlyMap<string, readonly string[]> = new Map(
  [...ALIASES].map(([word, to]) => [stem(word), to.map((w) => stem(w))]),
);

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

/** The text of each field of a tool, SEARCH_FIELDS order. */
function fieldTexts(tool: SearchInput): string[] {
  return [
    tool.tool,
    tool.description ?? "",
    schemaText(tool.inputSchema).join(" \n "),
    `${tool.server} \n ${tool.serverDescription ?? ""}`,
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Building.

/** The index of one upstream's tools (or any set of tools), in the given order. */
export function indexTools(tools: readonly SearchInput[], analysis: Analysis = DEFAULT_ANALYSIS): ToolIndex {
  const byTerm = new Map<string, number[]>();
  const lengths: number[] = [];
  const memo = new Map<string, readonly string[]>();
  tools.forEach((tool, number) => {
    const counts = new Map<string, number[]>();
    fieldTexts(tool).forEach((text, field) => {
      const list = terms(text, analysis, memo);
      lengths.push(list.length);
      for (const term of list) {
        let c = counts.get(term);
        if (!c) counts.set(term, (c = new Array<number>(FIELD_COUNT).fill(0)));
        c[field]! += 1;
      }
    });
    for (const [term, c] of counts) {
      let list = byTerm.get(term);
      if (!list) byTerm.set(term, (list = []));
      list.push(number, ...c);
    }
  });
  const sorted = [...byTerm.keys()].sort(byCodePoint);
  return {
    v: SEARCH_INDEX_VERSION,
    analysis: { stem: analysis.stem, aliases: analysis.aliases, exact: analysis.exact },
    tools: tools.map((t) => ({ name: t.name, server: t.server, line: oneLine(t.description) })),
    lengths,
    terms: sorted,
    postings: sorted.map((term) => byTerm.get(term)!),
  };
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
}

/** The ranking discover_tool uses, chosen on bench/selection (`node bench/selection.ts`, BENCHMARKS.md). */
export const DEFAULT_RANKING: Ranking = {
  k1: 1.2,
  fields: {
    name: { weight: 3, b: 0.5 },
    description: { weight: 1, b: 0.75 },
    parameters: { weight: 0.3, b: 0.75 },
    server: { weight: 1.5, b: 0.75 },
  },
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

/**
 * Each index's terms by position, built on an index's first search and kept as long as the index object lives
 * (a search over 20,000 tools looks each query term up in every upstream's index).
 */
const positions = new WeakMap<ToolIndex, Map<string, number>>();

function termsOf(index: ToolIndex): Map<string, number> {
  let map = positions.get(index);
  if (!map) {
    map = new Map(index.terms.map((term, at) => [term, at]));
    positions.set(index, map);
  }
  return map;
}

interface Candidate {
  index: number;
  tool: number;
  score: number;
  name: string;
}

const better = (a: Candidate, b: Candidate): boolean => a.score > b.score || (a.score === b.score && a.name < b.name);

/** Every tool of `indexes` sharing a term with the query, scored (unsorted); see searchTools. */
function score(list: readonly ToolIndex[], query: string, options: SearchOptions): Candidate[] {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  // Analysed as the indexes were (they are built alike: see Analysis).
  const queryTerms = [...new Set(terms(query, list[0]?.analysis ?? DEFAULT_ANALYSIS))];
  if (queryTerms.length === 0) return [];

  // The union's statistics: tool count and each field's average length.
  let count = 0;
  const totals = new Array<number>(FIELD_COUNT).fill(0);
  for (const index of list) {
    count += index.tools.length;
    const lengths = index.lengths;
    for (let i = 0; i < lengths.length; i += FIELD_COUNT) {
      for (let f = 0; f < FIELD_COUNT; f++) totals[f]! += lengths[i + f]!;
    }
  }
  if (count === 0) return [];
  const fields = SEARCH_FIELDS.map((f) => ranking.fields[f]);
  const average = totals.map((total) => Math.max(total / count, 1e-9));

  // Each query term's postings in each index, and its document frequency over all of them.
  const found = queryTerms.map(() => [] as Array<{ index: number; postings: readonly number[] }>);
  const frequency = queryTerms.map(() => 0);
  list.forEach((index, i) => {
    const map = termsOf(index);
    queryTerms.forEach((term, q) => {
      const at = map.get(term);
      if (at === undefined) return;
      const postings = index.postings[at]!;
      found[q]!.push({ index: i, postings });
      frequency[q]! += postings.length / POSTING;
    });
  });

  // Scores per tool: Σ over terms of idf · tf̃ / (k1 + tf̃), tf̃ the weighted, length-normalised field counts.
  // Tool t of index i is number offsets[i] + t in the union.
  const offsets: number[] = [];
  let offset = 0;
  for (const index of list) {
    offsets.push(offset);
    offset += index.tools.length;
  }
  const scores = new Float64Array(count);
  const touched: number[] = [];
  const owner: number[] = [];
  queryTerms.forEach((_, q) => {
    const df = frequency[q]!;
    if (df === 0) return;
    const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
    for (const { index: i, postings } of found[q]!) {
      const index = list[i]!;
      const base = offsets[i]!;
      for (let p = 0; p < postings.length; p += POSTING) {
        const tool = postings[p]!;
        if (options.server !== undefined && index.tools[tool]!.server !== options.server) continue;
        let tf = 0;
        for (let f = 0; f < FIELD_COUNT; f++) {
          const n = postings[p + 1 + f]!;
          if (n === 0) continue;
          const { weight, b } = fields[f]!;
          tf += (weight * n) / (1 - b + (b * index.lengths[tool * FIELD_COUNT + f]!) / average[f]!);
        }
        if (tf <= 0) continue;
        const key = base + tool;
        if (scores[key] === 0) {
          touched.push(key);
          owner.push(i);
        }
        scores[key] = scores[key]! + (idf * tf) / (ranking.k1 + tf);
      }
    }
  });
  const out: Candidate[] = [];
  touched.forEach((key, k) => {
    const score = scores[key]!;
    if (!(score > 0)) return;
    const i = owner[k]!;
    const tool = key - offsets[i]!;
    out.push({ index: i, tool, score, name: list[i]!.tools[tool]!.name });
  });
  return out;
}

const asList = (indexes: ToolIndex | readonly ToolIndex[]): readonly ToolIndex[] =>
  Array.isArray(indexes) ? indexes : [indexes as ToolIndex];

function hit(list: readonly ToolIndex[], c: Candidate): SearchHit {
  const entry = list[c.index]!.tools[c.tool]!;
  return { name: entry.name, server: entry.server, description: entry.line, score: Math.round(c.score * 1000) / 1000 };
}

/**
 * The best tools for a free-text query over the union of `indexes`: document frequencies and field lengths are
 * those of the union, so scores compare across upstreams. Sorted by score, then name. Tools sharing no term with
 * the query are never returned; a query of stop words or punctuation only returns nothing.
 */
export function searchTools(indexes: ToolIndex | readonly ToolIndex[], query: string, options: SearchOptions = {}): SearchHit[] {
  const list = asList(indexes);
  const limit = searchLimit(options.limit);
  // The best `limit`, kept sorted by insertion (limit ≤ 25).
  const top: Candidate[] = [];
  for (const candidate of score(list, query, options)) {
    if (top.length === limit && !better(candidate, top[top.length - 1]!)) continue;
    let at = top.length;
    while (at > 0 && better(candidate, top[at - 1]!)) at--;
    top.splice(at, 0, candidate);
    if (top.length > limit) top.pop();
  }
  return top.map((c) => hit(list, c));
}

/** Every matching tool in searchTools' order, without a limit: for benchmarks and tests. */
export function rankTools(indexes: ToolIndex | readonly ToolIndex[], query: string, options: Omit<SearchOptions, "limit"> = {}): SearchHit[] {
  const list = asList(indexes);
  return score(list, query, options)
    .sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
    .map((c) => hit(list, c));
}
