// Pure: full-text search over the tools of one or more upstreams, for discover_tool's `query`. An index is built once
// per upstream catalog (`indexTools`, search-index.ts), holds its postings in typed arrays, is stored as bytes
// (`toolIndexBytes`, `readToolIndex`: search-index-bytes.ts), and any number of them are searched together
// (`searchTools`) with statistics over their union (search-union.ts): BM25F over six fields (search-score.ts), English
// stemming (Porter2), a short stop-word list (search-analysis.ts), and a query widened by general equivalences
// (search-query.ts). With the query's meaning (a vector, and each index's tool vectors: semantic-vectors.ts), BM25F's
// matches and the tools nearest by meaning are blended (semantic-blend.ts). The same indexes and query give the same
// answer, byte for byte.
import { DEFAULT_ANALYSIS } from "./search-analysis.ts";
import type { ToolIndex } from "./search-index.ts";
import { queryTerms } from "./search-query.ts";
import { DEFAULT_RANKING, better, score, type Candidate, type Ranking } from "./search-score.ts";
import { unionOf } from "./search-union.ts";
import { BLEND, blendCandidates, poolSize, type Blend, type QueryMeaning } from "./semantic-blend.ts";
import { USEFULNESS, judgeHits, type Usefulness, type UsefulnessRule } from "./search-usefulness.ts";

// The parts callers build and tune a search with (views/tool-search.ts, bench/selection.ts), from one place.
export { DEFAULT_ANALYSIS, terms, words, type Analysis } from "./search-analysis.ts";
export { SEARCH_FIELDS, SEARCH_INDEX_VERSION, indexTools, splitDescription, type SearchInput, type ToolIndex } from "./search-index.ts";
export { readToolIndex, toolIndexBytes } from "./search-index-bytes.ts";
export { DEFAULT_RANKING, type Ranking } from "./search-score.ts";
export { USEFULNESS, usefulBy, type Usefulness, type UsefulnessRule } from "./search-usefulness.ts";

export const SEARCH_LIMIT_DEFAULT = 8;
export const SEARCH_LIMIT_MAX = 25;

export interface SearchOptions {
  /** How many hits at most: default 8, clamped to 1..25. */
  limit?: number | undefined;
  /** Only tools of this server. */
  server?: string | undefined;
  /** Another ranking than DEFAULT_RANKING (the benchmark's tuning). */
  ranking?: Ranking | undefined;
  /** How a judged search tells useful hits from weak ones (USEFULNESS unless a benchmark tries another). */
  usefulness?: UsefulnessRule | undefined;
  /** The query's meaning: BM25F's matches and the tools nearest by meaning, blended (semantic-blend.ts). Without it, BM25F alone. */
  meaning?: QueryMeaning | undefined;
  /** Another blend than BLEND (the benchmark's sweep). */
  blend?: Blend | undefined;
}

export interface SearchHit {
  name: string;
  server: string;
  /** The tool's catalog line: the first sentence of its description, at most 100 characters. */
  description: string;
  /**
   * BM25F score, or with the query's meaning the blended score (0 to 1), rounded to 3 decimals (the order is by the
   * unrounded score, then by name).
   */
  score: number;
}

/** The clamped limit: an integer in 1..25, the default for anything not a finite number. */
export function searchLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return SEARCH_LIMIT_DEFAULT;
  return Math.min(SEARCH_LIMIT_MAX, Math.max(1, Math.floor(limit)));
}

const asList = (indexes: ToolIndex | readonly ToolIndex[]): readonly ToolIndex[] =>
  Array.isArray(indexes) ? indexes : [indexes as ToolIndex];

function hit(list: readonly ToolIndex[], c: Candidate): SearchHit {
  const tools = list[c.index]!.tools;
  return { name: c.name, server: tools.server(c.tool), description: tools.line(c.tool), score: Math.round(c.score * 1000) / 1000 };
}

/** The candidates for `query`: the best `limit` in order, or every one unsorted (see score). */
function candidates(list: readonly ToolIndex[], query: string, options: SearchOptions, limit: number | undefined): Candidate[] {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  const weighted = queryTerms(query, ranking, list[0]?.analysis ?? DEFAULT_ANALYSIS, () => unionOf(list).serverWords);
  if (options.meaning === undefined || list.length === 0) return score(list, weighted, ranking, options.server, limit);
  const blend = options.blend ?? BLEND;
  const pool = poolSize(blend, unionOf(list).count);
  return blendCandidates(list, score(list, weighted, ranking, options.server, pool), options.meaning, options.server, limit, blend);
}

/**
 * The best tools for a free-text query over the union of `indexes`: document frequencies and field lengths are
 * those of the union, so scores compare across upstreams. Sorted by score, then name. Tools sharing no term with
 * the (widened) query are never returned without its meaning; a query of stop words or punctuation only returns nothing.
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

/**
 * searchTools' hits with the judgement of them (search-usefulness.ts): whether they are worth calling or nothing
 * searched does what the query asks, and the two signals that say so.
 */
export function judgedSearch(indexes: ToolIndex | readonly ToolIndex[], query: string, options: SearchOptions = {}): { hits: SearchHit[]; judged: Usefulness } {
  const list = asList(indexes);
  const rule = options.usefulness ?? USEFULNESS;
  const limit = searchLimit(options.limit);
  // Judged on the rule's top hits whatever the limit, so `limit: 1` is judged as the default is.
  const found = candidates(list, query, options, Math.max(limit, rule.top));
  const judged = judgeHits(list, query, found, options.ranking ?? DEFAULT_RANKING, list[0]?.analysis ?? DEFAULT_ANALYSIS, options.meaning, rule);
  return { hits: found.slice(0, limit).map((c) => hit(list, c)), judged };
}
