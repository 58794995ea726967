// Pure: the semantic stage's blend with BM25F. The candidates are BM25F's best matches and the few tools nearest the
// query by meaning (so a query sharing no word with its tool can still find it); each is scored by a linear blend of
// BM25F and the cosine, each normalised by the query's best (0 where BM25F does not match, or the cosine is below 0).
// Chosen on the dev queries only (bench/semantic.ts): the steering measurement found reciprocal-rank fusion below
// BM25F alone and a linear blend of normalised scores above it; BLEND's comment says what was tried and what it gave.
// The nearest are found in two passes (a share of the components over every tool, then whole cosines for a
// shortlist), so a search of 20,041 tools reads a quarter of their vectors' bytes.
import type { Candidate } from "./search-score.ts";
import type { ToolIndex } from "./search-index.ts";
import { cosineOf, cosinesInto, type ToolVectors } from "./semantic-vectors.ts";

/** A query's meaning: its unit vector and the tool vectors of each searched index, in the list's order. */
export interface QueryMeaning {
  vector: Float32Array;
  vectors: readonly ToolVectors[];
}

export interface Blend {
  /** BM25F's share of a candidate's score (the cosine has the rest). */
  lexical: number;
  /** How many of BM25F's best matches are candidates at least (its every match costs milliseconds at 20,000 tools). */
  pool: number;
  /**
   * At least this share of the searched tools are candidates: a team with many instances of one server (gitlab-prod,
   * gitlab-staging, ...) has as many matches of one tool, which would fill a fixed pool and leave the tool meant out.
   */
  poolShare: number;
  /** How many of the tools nearest the query by meaning join BM25F's matches. */
  nearest: number;
  /**
   * A tool BM25F does not match joins only with at least this cosine. With the static model it keeps the faintest
   * out but does not tell nonsense from a paraphrase (a made-up word's best is about 0.35, a right tool's 0.3 to 0.5);
   * a query with no known word (the zero vector) finds nothing by meaning.
   */
  minCosine: number;
  /**
   * The first pass over every tool reads only this share of the leading components (a Model2Vec model's come in the
   * order of the variance they carry), and keeps the `shortlist` best; only those and BM25F's candidates get their
   * whole cosine.
   */
  firstPass: number;
  shortlist: number;
}

/**
 * The blend discover_tool and the code view's search use, chosen on bench/selection's dev queries only with the static
 * embedder (`npm run bench:semantic`, "The stage as the Worker runs it"): 0.5 BM25F / 0.5 cosine, each normalised by
 * the query's best (0.3 to 0.6 tried; min-max over all tools, the steering measurement's, needs every tool's whole
 * cosine), BM25F's best 50 (25 to every match gave the same) and the 5 nearest by meaning as candidates. The first
 * pass over a quarter of the components (an eighth to all gave the same) keeps the cost at 20,041 tools within
 * 2 ms a search. Dev figures in BENCHMARKS.md and the report of bench/semantic.ts.
 */
export const BLEND: Blend = { lexical: 0.5, pool: 50, poolShare: 0.01, nearest: 5, minCosine: 0.25, firstPass: 0.25, shortlist: 50 };

/** How many of BM25F's best matches are candidates among `tools` searched tools. */
export const poolSize = (blend: Blend, tools: number): number => Math.max(blend.pool, Math.ceil(blend.poolShare * tools));

/** Scratch space for one search's first pass, grown to the largest set searched. */
let scratch = new Float32Array(0);

/** The best `keep` tool numbers (over the whole list) by `values` among `allowed`, best first. */
function bestTools(values: Float32Array, count: number, allowed: ((k: number) => boolean) | undefined, keep: number): number[] {
  const best: number[] = [];
  for (let k = 0; k < count; k++) {
    const c = values[k]!;
    if ((best.length === keep && c <= values[best[best.length - 1]!]!) || (allowed && !allowed(k))) continue;
    let at = best.length;
    while (at > 0 && c > values[best[at - 1]!]!) at--;
    best.splice(at, 0, k);
    if (best.length > keep) best.pop();
  }
  return best;
}

/** Where each list member's tools start in the list's numbering, and the member a number is of. */
function numbering(list: readonly ToolIndex[]): { offsets: number[]; count: number; owner: (k: number) => number } {
  const offsets: number[] = [];
  let count = 0;
  for (const index of list) {
    offsets.push(count);
    count += index.tools.length;
  }
  // The last member whose offset is at most k (members with no tools share the next one's offset).
  const owner = (k: number): number => {
    let lo = 0;
    let hi = list.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid]! <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  return { offsets, count, owner };
}

/**
 * BM25F's `lexical` candidates (its best `blend.pool` matches) blended with the query's meaning: sorted by the blended
 * score then name, the best `limit` (all without one). Only tools of `onlyServer` when given.
 */
export function blendCandidates(
  list: readonly ToolIndex[],
  lexical: readonly Candidate[],
  meaning: QueryMeaning,
  onlyServer: string | undefined,
  limit: number | undefined,
  blend: Blend = BLEND,
): Candidate[] {
  const { offsets, count, owner } = numbering(list);
  const toolOf = (k: number) => {
    const i = owner(k);
    return { i, tool: k - offsets[i]! };
  };
  const allowed = onlyServer === undefined ? undefined : (k: number) => {
    const { i, tool } = toolOf(k);
    return list[i]!.tools.server(tool) === onlyServer;
  };
  if (scratch.length < count) scratch = new Float32Array(count);
  list.forEach((_, i) => {
    const vectors = meaning.vectors[i]!;
    cosinesInto(vectors, meaning.vector, scratch, offsets[i]!, Math.max(1, Math.round(blend.firstPass * vectors.dimension)));
  });
  const cosines = new Map<number, number>();
  const cosineAt = (k: number): number => {
    let c = cosines.get(k);
    if (c === undefined) {
      const { i, tool } = toolOf(k);
      cosines.set(k, (c = cosineOf(meaning.vectors[i]!, tool, meaning.vector)));
    }
    return c;
  };
  const words = new Map(lexical.map((c) => [offsets[c.index]! + c.tool, c.score]));
  const shortlist = bestTools(scratch, count, allowed, blend.shortlist);
  const high = Math.max(0, ...shortlist.map(cosineAt), ...[...words.keys()].map(cosineAt));
  const top = lexical.reduce((m, c) => Math.max(m, c.score), 0);
  // A query with no known word (the zero vector) is near nothing: BM25F's ranking stands.
  const near = high > 0 ? shortlist.filter((k) => cosineAt(k) >= blend.minCosine).sort((a, b) => cosineAt(b) - cosineAt(a)).slice(0, blend.nearest) : [];
  const out: Candidate[] = [];
  for (const k of new Set([...words.keys(), ...near])) {
    const { i, tool } = toolOf(k);
    const lex = words.get(k);
    const meant = high > 0 ? Math.max(0, cosineAt(k)) / high : 0;
    const score = blend.lexical * (lex !== undefined && top > 0 ? lex / top : 0) + (1 - blend.lexical) * meant;
    out.push({ index: i, tool, score, name: list[i]!.tools.name(tool) });
  }
  out.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return limit === undefined ? out : out.slice(0, limit);
}
