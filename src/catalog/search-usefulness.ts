// Pure: whether a search's best hits are worth an agent's call, or nothing searched does what the query asks. A
// ranking always has a best hit, however weak: a query of made-up words gets the tools nearest by meaning, a query for
// something no server does gets whatever shares one word. Two signals tell them apart (bench/nothing.ts measured them
// on the dev queries, with and without their right tools' servers): how much of the query's content the best hits
// match (each content word weighted by its IDF over the searched tools, so a rare word left unmatched costs more than
// a common one), and with the semantic stage the best raw cosine among them.
import type { Analysis } from "./search-analysis.ts";
import { STOP_WORDS, words } from "./search-analysis.ts";
import type { Candidate, Ranking } from "./search-score.ts";
import { queryTerms } from "./search-query.ts";
import type { ToolIndex } from "./search-index.ts";
import { unionOf, type Union } from "./search-union.ts";
import type { QueryMeaning } from "./semantic-blend.ts";
import { cosineOf } from "./semantic-vectors.ts";

/** What a search's best hits say of the query. */
export interface Usefulness {
  /** Whether the best hits are worth calling: false when nothing searched does what the query asks. */
  useful: boolean;
  /** The IDF-weighted share (0 to 1) of the query's content words the best of the top hits has in its fields. */
  coverage: number;
  /** The best raw cosine of the query and the top hits (with the semantic stage; undefined without it). */
  cosine: number | undefined;
}

export interface UsefulnessRule {
  /** How many of the best hits are looked at. */
  top: number;
  /** With the semantic stage, a search is useful when one of them covers at least this share of the query's content… */
  coverage: number;
  /** …or one of them is at least this near by meaning. */
  cosine: number;
  /** Without the stage, a search is useful when one of them covers at least this share. */
  coverageAlone: number;
}

/**
 * The rule the searches use, chosen on the dev queries only (`npm run bench:nothing`, BENCHMARKS.md "Nothing useful"):
 * the pair of thresholds with the most detections of queries whose right tools were taken out, among those that flag
 * at most 5% of the queries whose right tool is there. The figures are in docs/architecture.md. Judging the top 3
 * hits instead of 5 detected as many in all (more dev queries with their servers out, fewer of nothing.json's); the
 * top 1, 2 or 8 fewer.
 */
export const USEFULNESS: UsefulnessRule = { top: 5, coverage: 0.26, cosine: 0.385, coverageAlone: 0.14 };

/** How many tools have `term` in their own fields or their server's (a tool with both counted twice: an estimate). */
function frequency(u: Union, list: readonly ToolIndex[], term: string): number {
  let df = 0;
  const postings = u.terms.get(term);
  if (postings) {
    for (let k = 0; k < postings.length; k += 2) {
      const index = list[postings[k]!]!;
      const at = postings[k + 1]!;
      df += index.starts[at + 1]! - index.starts[at]!;
    }
  }
  const servers = u.serverTerms.get(term);
  if (servers) for (let k = 0; k < servers.length; k += 3) df += u.preps[servers[k]!]!.serverSize[servers[k + 1]!]!;
  return Math.min(df, u.count);
}

/** Whether tool `tool` of member `i` has `term` in its own fields or its server's. */
function hasTerm(u: Union, list: readonly ToolIndex[], i: number, tool: number, term: string): boolean {
  const postings = u.terms.get(term);
  if (postings) {
    for (let k = 0; k < postings.length; k += 2) {
      if (postings[k] !== i) continue;
      const index = list[i]!;
      const at = postings[k + 1]!;
      let lo = index.starts[at]!;
      let hi = index.starts[at + 1]! - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const t = index.postingTools[mid]!;
        if (t === tool) return true;
        if (t < tool) lo = mid + 1;
        else hi = mid - 1;
      }
    }
  }
  const servers = u.serverTerms.get(term);
  const server = u.preps[i]!.toolServer[tool];
  if (servers) for (let k = 0; k < servers.length; k += 3) if (servers[k] === i && servers[k + 1] === server) return true;
  return false;
}

/** A query's content words, each with its terms as the query widens it (weights) and its IDF over the union. */
function contentWords(u: Union, list: readonly ToolIndex[], query: string, ranking: Ranking, analysis: Analysis) {
  const idfOf = (df: number) => Math.log(1 + (u.count - df + 0.5) / (df + 0.5));
  const seen = new Set<string>();
  const out: Array<{ terms: Map<string, number>; idf: number }> = [];
  for (const word of words(query)) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue;
    seen.add(word);
    const terms = queryTerms(word, ranking, analysis, () => u.serverWords);
    if (terms.size === 0) continue;
    // A word's own terms (weight 1) say how rare it is: a word no tool has is the rarest of all.
    const own = [...terms].filter(([, w]) => w >= 1).map(([t]) => frequency(u, list, t));
    out.push({ terms, idf: idfOf(Math.min(...own)) });
  }
  return out;
}

/** The IDF-weighted share of the query's content words tool `tool` of member `i` has (a widened term at its weight). */
function coverageOf(u: Union, list: readonly ToolIndex[], content: ReturnType<typeof contentWords>, i: number, tool: number): number {
  let total = 0;
  let found = 0;
  for (const { terms, idf } of content) {
    total += idf;
    let best = 0;
    for (const [term, weight] of terms) if (weight > best && hasTerm(u, list, i, tool, term)) best = weight;
    found += idf * best;
  }
  return total > 0 ? found / total : 0;
}

/**
 * Whether the best of `hits` (candidates of `list` for `query`, best first) are worth calling, by `rule`. No hits, or a
 * query with no content word, is never useful.
 */
export function judgeHits(
  list: readonly ToolIndex[],
  query: string,
  hits: readonly Candidate[],
  ranking: Ranking,
  analysis: Analysis,
  meaning: QueryMeaning | undefined,
  rule: UsefulnessRule = USEFULNESS,
): Usefulness {
  const top = hits.slice(0, rule.top);
  if (top.length === 0 || list.length === 0) return { useful: false, coverage: 0, cosine: meaning ? 0 : undefined };
  const u = unionOf(list);
  const content = contentWords(u, list, query, ranking, analysis);
  const coverage = Math.max(0, ...top.map((c) => coverageOf(u, list, content, c.index, c.tool)));
  const cosine = meaning ? Math.max(0, ...top.map((c) => cosineOf(meaning.vectors[c.index]!, c.tool, meaning.vector))) : undefined;
  return { useful: usefulBy(rule, coverage, cosine), coverage, cosine };
}

/** The rule applied to a search's two signals. */
export const usefulBy = (rule: UsefulnessRule, coverage: number, cosine: number | undefined): boolean =>
  cosine === undefined ? coverage >= rule.coverageAlone : coverage >= rule.coverage || cosine >= rule.cosine;
