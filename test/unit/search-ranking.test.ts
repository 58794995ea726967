// The search's ranking over the corpus (20 upstreams, 421 tools) for every query of the dev and holdout sets, held
// against the ranking recorded before the index's in-memory layout changed: the same tools in the same order with
// the same scores. The holdout is read only to compare two rankings, never to tune. A deliberate change of the
// ranking records it again: `WRITE_SEARCH_RANKING=1` with this file.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOLDOUT_FILE, QUERIES_FILE, corpusUpstreams, searchInputs } from "../../bench/selection.ts";
import { indexTools } from "../../src/catalog/search-index.ts";
import { queryTerms } from "../../src/catalog/search-query.ts";
import { DEFAULT_RANKING, score } from "../../src/catalog/search-score.ts";
import { unionOf } from "../../src/catalog/search-union.ts";
import { DEFAULT_ANALYSIS } from "../../src/catalog/search-analysis.ts";

const RECORDED = join(import.meta.dirname, "fixtures", "search-ranking.json");
/** How deep each query's ranking is compared. */
const DEPTH = 10;

/** Per query, its best DEPTH tools as `name score`, the score unrounded (to 1e-9). */
function rankings(): Record<string, string[]> {
  const indexes = corpusUpstreams().map((u) => indexTools(searchInputs(u)));
  const out: Record<string, string[]> = {};
  for (const file of [QUERIES_FILE, HOLDOUT_FILE]) {
    const { queries } = JSON.parse(readFileSync(file, "utf8")) as { queries: Array<{ q: string }> };
    for (const { q } of queries) {
      const weighted = queryTerms(q, DEFAULT_RANKING, DEFAULT_ANALYSIS, () => unionOf(indexes).serverWords);
      out[q] = score(indexes, weighted, DEFAULT_RANKING, undefined, DEPTH).map((c) => `${c.name} ${c.score.toFixed(9)}`);
    }
  }
  return out;
}

describe("the ranking over the corpus", () => {
  it("is the recorded one for every dev and holdout query: same tools, same order, same scores", () => {
    const now = rankings();
    if (process.env.WRITE_SEARCH_RANKING) writeFileSync(RECORDED, `${JSON.stringify(now, null, 1)}\n`);
    const recorded = JSON.parse(readFileSync(RECORDED, "utf8")) as Record<string, string[]>;
    expect(Object.keys(now)).toEqual(Object.keys(recorded));
    for (const [q, list] of Object.entries(recorded)) {
      const got = now[q]!;
      expect(got.map((e) => e.split(" ")[0]), q).toEqual(list.map((e) => e.split(" ")[0]));
      got.forEach((e, i) => expect(Number(e.split(" ")[1]), q).toBeCloseTo(Number(list[i]!.split(" ")[1]), 6));
    }
  });
});
