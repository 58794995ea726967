// The semantic stage as the Worker runs it (src/views/tool-search.ts: searchTools with the query's meaning over each
// index's int8 tool vectors, src/catalog/semantic-*.ts), for bench/semantic.ts: its quality on the DEV queries against
// BM25F alone, int8 rows against float32 ones, the blend's weights around the chosen ones (how BLEND was chosen), and
// its cost per search at the corpus's 421 tools and the scale bench's 20,041 (the time it adds to BM25F's search).
import type { StaticEmbedder } from "../../src/catalog/embedder.ts";
import { SEARCH_LIMIT_MAX, searchTools, type ToolIndex } from "../../src/catalog/search.ts";
import { BLEND, type Blend } from "../../src/catalog/semantic-blend.ts";
import { blendCandidates, poolSize } from "../../src/catalog/semantic-blend.ts";
import { floatRows, quantise, toolText, type ToolVectors } from "../../src/catalog/semantic-vectors.ts";
import { median, quantile } from "./results.ts";
import { buildAll, corpusUpstreams, rankOf, scores, syntheticCopies, type Query, type Scores } from "../selection.ts";

export interface PathRow {
  ranking: string;
  scores: Scores;
}

export const vectorsOf = (indexes: readonly ToolIndex[], embedder: StaticEmbedder, rows = quantise): ToolVectors[] =>
  indexes.map((index) => rows(index.tools.list().map((t) => embedder.embedOne(toolText(t))), embedder.dimension, embedder.modelId));

/** The weights tried around BLEND: BM25F's share, and how many nearest tools join. */
const SHARES = [0.3, 0.4, 0.5, 0.6] as const;
const NEAREST = [0, 5, 10] as const;
/** BM25F's pool sizes tried with BLEND's weights (every match, unbounded, is the steering measurement's). */
const POOLS = [10, 25, 50, 100, Number.MAX_SAFE_INTEGER] as const;
/** The first pass's shares of the components tried (1: every one, the exact nearest). */
const FIRST_PASSES = [0.125, 0.25, 0.5, 1] as const;

/** One ranking's scores over `queries`: `rank` answers a query's names, best first. */
const scored = (queries: readonly Query[], rank: (q: Query) => string[]): Scores => scores(queries.map((q) => rankOf(rank(q), q)));

/** The production path against BM25F alone, int8 against float32, and the sweep around BLEND (dev queries only). */
export function pathQuality(queries: readonly Query[], embedder: StaticEmbedder): PathRow[] {
  const indexes = buildAll(corpusUpstreams());
  const int8 = vectorsOf(indexes, embedder);
  const float = vectorsOf(indexes, embedder, floatRows);
  const meaning = (q: Query, vectors: readonly ToolVectors[]) => ({ vector: embedder.embedOne(q.q), vectors });
  const names = (hits: ReadonlyArray<{ name: string }>) => hits.map((h) => h.name);
  const limit = SEARCH_LIMIT_MAX;
  const rows: PathRow[] = [
    { ranking: "BM25F alone (search.semantic off)", scores: scored(queries, (q) => names(searchTools(indexes, q.q, { limit }))) },
    { ranking: `static, as shipped: int8 rows, ${label(BLEND)}`, scores: scored(queries, (q) => names(searchTools(indexes, q.q, { limit, meaning: meaning(q, int8) }))) },
    { ranking: `static, float32 rows, ${label(BLEND)}`, scores: scored(queries, (q) => names(searchTools(indexes, q.q, { limit, meaning: meaning(q, float) }))) },
  ];
  // The sweep: BM25F's every match (its own ranking, unsorted scores), blended with other weights.
  const lexical = new Map(queries.map((q) => [q.q, lexicalCandidates(indexes, q.q)]));
  const sweep = (blend: Blend) => {
    const rank = (q: Query) => blendCandidates(indexes, lexical.get(q.q)!.slice(0, poolSize(blend, indexes.reduce((k, i) => k + i.tools.length, 0))), meaning(q, int8), undefined, limit, blend).map((c) => c.name);
    rows.push({ ranking: `sweep: ${label(blend)}`, scores: scored(queries, rank) });
  };
  for (const lexicalShare of SHARES) for (const nearest of NEAREST) sweep({ ...BLEND, lexical: lexicalShare, nearest });
  for (const pool of POOLS) sweep({ ...BLEND, pool });
  for (const firstPass of FIRST_PASSES) sweep({ ...BLEND, firstPass });
  return rows;
}

const label = (b: Blend): string =>
  `${b.lexical.toFixed(1)} BM25F / ${(1 - b.lexical).toFixed(1)} cosine, BM25F's best ${b.pool > 1e6 ? "every match" : b.pool}, ${b.nearest} nearest ` +
  `(first pass ${b.firstPass * 100}% of the components, ${b.shortlist} kept)`;

/** BM25F's matches of `query` as candidates (index, tool, score as a search answers it: 3 decimals), from its unlimited ranking. */
function lexicalCandidates(indexes: readonly ToolIndex[], query: string) {
  const where = new Map(indexes.flatMap((index, i) => index.tools.list().map((t, tool) => [t.name, { index: i, tool }] as const)));
  return searchTools(indexes, query, { limit: Number.MAX_SAFE_INTEGER }).map((h) => ({ ...where.get(h.name)!, score: h.score, name: h.name }));
}

export interface PathCost {
  tools: number;
  /** BM25F's search alone, p50 ms. */
  wordsP50: number;
  /** The same search with the stage: the query embedded, its cosines, the blend; p50 and p95 ms. */
  blendedP50: number;
  blendedP95: number;
  /** The time the stage adds to one search, p50 of the per-query differences, ms. */
  addedP50: number;
  /** Making the tool vectors of every index (once per content in the Worker), ms; their bytes. */
  vectorsMs: number;
  vectorBytes: number;
}

/** The stage's cost per search over the corpus (421 tools) or the scale bench's team (the corpus among copies). */
export function pathCost(queries: readonly Query[], embedder: StaticEmbedder, total: number | undefined, reps: number): PathCost {
  const corpus = corpusUpstreams();
  const indexes = buildAll(total === undefined ? corpus : [...corpus, ...syntheticCopies(corpus, total)]);
  const t = performance.now();
  const vectors = vectorsOf(indexes, embedder);
  const vectorsMs = performance.now() - t;
  const words: number[] = [];
  const blended: number[] = [];
  const added: number[] = [];
  for (let r = 0; r < reps; r++) {
    for (const q of queries) {
      const t0 = performance.now();
      searchTools(indexes, q.q);
      const t1 = performance.now();
      searchTools(indexes, q.q, { meaning: { vector: embedder.embedOne(q.q), vectors } });
      const t2 = performance.now();
      words.push(t1 - t0);
      blended.push(t2 - t1);
      added.push(t2 - t1 - (t1 - t0));
    }
  }
  return {
    tools: indexes.reduce((k, index) => k + index.tools.length, 0),
    wordsP50: median(words),
    blendedP50: median(blended),
    blendedP95: quantile(blended, 0.95),
    addedP50: median(added),
    vectorsMs,
    vectorBytes: vectors.reduce((k, v) => k + v.rows.byteLength + v.scales.byteLength, 0),
  };
}
