// A large team's search (src/catalog/search-score.ts's agreement shares, semantic-blend.ts's pool): a tool whose name
// or description shares nothing with the query keeps a share of its score, so among many servers with tools of the
// same name the one whose own name and description agree with the query ranks first; the semantic stage's pool of
// BM25F candidates grows with the catalog.
import { describe, expect, it } from "vitest";
import { buildAll, corpusUpstreams, syntheticMixed } from "../../bench/selection.ts";
import { DEFAULT_ANALYSIS, DEFAULT_RANKING, indexTools, rankTools, searchTools, type Ranking, type SearchInput, type ToolIndex } from "../../src/catalog/search.ts";
import { queryTerms } from "../../src/catalog/search-query.ts";
import { score } from "../../src/catalog/search-score.ts";
import { unionOf } from "../../src/catalog/search-union.ts";
import { BLEND, poolSize } from "../../src/catalog/semantic-blend.ts";

const tool = (server: string, name: string, description: string, serverDescription?: string): SearchInput => ({
  name: `${server}/${name}`,
  server,
  tool: name,
  description,
  serverDescription,
});

describe("agreement of a tool's own fields with the query", () => {
  it("keeps a share of the score of a tool whose name or description shares no word with the query", () => {
    const indexes: ToolIndex[] = [
      indexTools([
        tool("review", "resolve_thread", "Resolve a discussion thread on a merge request."),
        tool("review", "merge_request_thread", "Send an email message to a recipient."),
        tool("review", "send_message", "Resolve a discussion thread on a merge request."),
      ]),
    ];
    const query = "resolve the merge request thread";
    const plain = { ...DEFAULT_RANKING, undescribed: 1, unnamed: 1 };
    const scoreOf = (ranking: Ranking) => new Map(searchTools(indexes, query, { ranking }).map((h) => [h.name, h.score]));
    const before = scoreOf(plain);
    const after = scoreOf(DEFAULT_RANKING);
    expect(after.get("review/resolve_thread")).toBe(before.get("review/resolve_thread"));
    expect(after.get("review/merge_request_thread")).toBeCloseTo(before.get("review/merge_request_thread")! * DEFAULT_RANKING.undescribed, 2);
    expect(after.get("review/send_message")).toBeCloseTo(before.get("review/send_message")! * DEFAULT_RANKING.unnamed, 2);
    expect(DEFAULT_RANKING.undescribed).toBeLessThan(1);
    expect(DEFAULT_RANKING.unnamed).toBeLessThan(1);
  });

  it("among the corpus and 3,000 mixed tools (namesakes with other descriptions and servers), finds these dev queries' tools first", () => {
    const corpus = corpusUpstreams();
    const indexes = buildAll([...corpus, ...syntheticMixed(corpus, 3_000, 14)]);
    const first = (q: string) => searchTools(indexes, q, { limit: 1 })[0]?.name;
    expect(first("spit out TS typings from my supabase schema")).toBe("supabase/generate_typescript_types");
    expect(first("start a fake slow task with progress notifications so I can test my client's progress bar")).toBe(
      "everything/trigger-long-running-operation",
    );
  });
});

describe("the semantic stage's candidates at scale", () => {
  it("grows BM25F's pool with the catalog: 50 at least, 1% of the tools past 5,000", () => {
    expect(poolSize(BLEND, 421)).toBe(50);
    expect(poolSize(BLEND, 20_041)).toBe(201);
  });

  it("gives a pool as the first of BM25F's whole ranking, in order", () => {
    const indexes = buildAll(corpusUpstreams());
    for (const query of ["list the open merge requests", "create a new issue in the repository", "read a file"]) {
      const weighted = queryTerms(query, DEFAULT_RANKING, DEFAULT_ANALYSIS, () => unionOf(indexes).serverWords);
      const whole = rankTools(indexes, query).map((h) => h.name);
      expect(whole.length).toBeGreaterThan(120);
      expect(score(indexes, weighted, DEFAULT_RANKING, undefined, 120).map((c) => c.name)).toEqual(whole.slice(0, 120));
    }
  });
});
