// Pure: the semantic stage's blend with BM25F. The candidates are every tool BM25F matches and the few nearest the
// query by meaning (so a query sharing no word with its tool can still find it); each is scored by a linear blend of
// BM25F normalised by the query's best score (0 where it does not match) and the cosine min-max normalised over the
// tools searched. Chosen on the dev queries only (bench/semantic.ts, "the production path"): the steering measurement
// found reciprocal-rank fusion below BM25F alone and a linear blend of normalised scores above it; the weights below
// are the best of that sweep, and BLEND's comment says what they gave.
import type { Candidate } from "./search-score.ts";
import type { ToolIndex } from "./search-index.ts";
import { cosinesInto, type ToolVectors } from "./semantic-vectors.ts";

/** A query's meaning: its unit vector and the tool vectors of each searched index, in the list's order. */
export interface QueryMeaning {
  vector: Float32Array;
  vectors: readonly ToolVectors[];
}

export interface Blend {
  /** BM25F's share of a candidate's score (the cosine has the rest). */
  lexical: number;
  /** How many of the tools nearest the query by meaning join BM25F's matches. */
  nearest: number;
  /** A tool BM25F does not match joins only with at least this cosine (a query of unknown words finds nothing). */
  minCosine: number;
}

/**
 * The blend discover_tool and the code view's search use, chosen on bench/selection's dev queries with the static
 * embedder (`npm run bench:semantic`): 0.4 BM25F / 0.6 cosine, the 5 nearest tools added; dev hit@1 / hit@5 43.2 /
 * 70.4 with BM25F alone, 48.2 / 75.0 blended.
 */
export const BLEND: Blend = { lexical: 0.4, nearest: 5, minCosine: 0.25 };

/** Scratch space for one search's cosines, grown to the largest set searched. */
let scratch = new Float32Array(0);

/** The best `nearest` tool numbers (over the whole list) by cosine among `allowed`, at or above `floor`. */
function nearestTools(cosines: Float32Array, count: number, allowed: (k: number) => boolean, nearest: number, floor: number): number[] {
  const best: number[] = [];
  for (let k = 0; k < count; k++) {
    const c = cosines[k]!;
    if (c < floor || (best.length === nearest && c <= cosines[best[best.length - 1]!]!) || !allowed(k)) continue;
    let at = best.length;
    while (at > 0 && c > cosines[best[at - 1]!]!) at--;
    best.splice(at, 0, k);
    if (best.length > nearest) best.pop();
  }
  return best;
}

/**
 * BM25F's `lexical` candidates (every match, unsorted) blended with the query's meaning: sorted by the blended score
 * then name, the best `limit` (all without one). Only tools of `onlyServer` when given.
 */
export function blendCandidates(
  list: readonly ToolIndex[],
  lexical: readonly Candidate[],
  meaning: QueryMeaning,
  onlyServer: string | undefined,
  limit: number | undefined,
  blend: Blend = BLEND,
): Candidate[] {
  const offsets: number[] = [];
  let count = 0;
  for (const index of list) {
    offsets.push(count);
    count += index.tools.length;
  }
  if (scratch.length < count) scratch = new Float32Array(count);
  const cosines = scratch;
  list.forEach((_, i) => cosinesInto(meaning.vectors[i]!, meaning.vector, cosines, offsets[i]!));
  // The list member tool k (over the whole list) is of: the last whose offset is at most k.
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
  const serverOf = (k: number): string => {
    const i = owner(k);
    return list[i]!.tools[k - offsets[i]!]!.server;
  };
  const allowed = onlyServer === undefined ? () => true : (k: number) => serverOf(k) === onlyServer;
  let low = Infinity;
  let high = -Infinity;
  for (let k = 0; k < count; k++) {
    if (onlyServer !== undefined && !allowed(k)) continue;
    low = Math.min(low, cosines[k]!);
    high = Math.max(high, cosines[k]!);
  }
  const span = high - low;
  const top = lexical.reduce((m, c) => Math.max(m, c.score), 0);
  const words = new Map(lexical.map((c) => [offsets[c.index]! + c.tool, c.score]));
  // A query with no known word (the zero vector) or a set of one tool has no spread: BM25F's ranking stands.
  const near = span > 0 ? nearestTools(cosines, count, allowed, blend.nearest, blend.minCosine) : [];
  const keys = new Set([...words.keys(), ...near]);
  const out: Candidate[] = [];
  for (const k of keys) {
    const i = owner(k);
    const tool = k - offsets[i]!;
    const lex = words.get(k);
    const meant = span > 0 ? (cosines[k]! - low) / span : 0;
    const score = blend.lexical * (lex !== undefined && top > 0 ? lex / top : 0) + (1 - blend.lexical) * meant;
    out.push({ index: i, tool, score, name: list[i]!.tools[tool]!.name });
  }
  out.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return limit === undefined ? out : out.slice(0, limit);
}
