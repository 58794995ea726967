// The tool search's parts on their own (src/catalog/search-query.ts, search-union.ts, search-score.ts): what the
// search as a whole (search.test.ts) shows only through its hits.
import { describe, expect, it } from "vitest";
import { DEFAULT_ANALYSIS } from "../../src/catalog/search-analysis.ts";
import { indexTools, type SearchInput } from "../../src/catalog/search-index.ts";
import { queryTerms } from "../../src/catalog/search-query.ts";
import { DEFAULT_RANKING, score } from "../../src/catalog/search-score.ts";
import { unionOf } from "../../src/catalog/search-union.ts";

const tool = (server: string, name: string, description: string): SearchInput => ({ name: `${server}/${name}`, server, tool: name, description });

const GIT = indexTools([
  tool("git", "delete_branch", "Delete a branch."),
  tool("git", "list_branches", "List the branches."),
  tool("git", "create_issue", "Open an issue."),
]);
const FILES = indexTools([tool("files", "delete_file", "Delete a file."), tool("files", "read_file", "Read a file.")]);

describe("queryTerms", () => {
  const noServers = (): readonly string[] => [];

  it("weighs the query's own words 1 and their equivalents at the ranking's weight, the highest kept", () => {
    const terms = queryTerms("remove branches", DEFAULT_RANKING, DEFAULT_ANALYSIS, noServers);
    expect(terms.get("remov")).toBe(1);
    expect(terms.get("=remove")).toBe(1);
    expect(terms.get("branch")).toBe(1);
    // An equivalent of "remove" comes in by its stem only, at half weight…
    expect(terms.get("delet")).toBe(DEFAULT_RANKING.synonyms);
    expect(terms.has("=delete")).toBe(false);
    // …and a word that is both the query's own and an equivalent keeps weight 1.
    expect(queryTerms("remove delete", DEFAULT_RANKING, DEFAULT_ANALYSIS, noServers).get("delet")).toBe(1);
    expect(queryTerms("remove", { ...DEFAULT_RANKING, synonyms: 0 }, DEFAULT_ANALYSIS, noServers).has("delet")).toBe(false);
  });

  it("drops filler and stop words, unless the ranking keeps filler", () => {
    expect([...queryTerms("can you just show me", DEFAULT_RANKING, DEFAULT_ANALYSIS, noServers).keys()]).not.toContain("just");
    const kept = queryTerms("just", { ...DEFAULT_RANKING, filler: false }, DEFAULT_ANALYSIS, noServers);
    expect(kept.get("just")).toBe(1);
    expect(queryTerms("the of and", DEFAULT_RANKING, DEFAULT_ANALYSIS, noServers).size).toBe(0);
  });

  it("asks for the servers' words only when a word of four letters or more may be part of one", () => {
    let asked = 0;
    const servers = () => {
      asked++;
      return ["mongodb", "git"];
    };
    expect(queryTerms("", DEFAULT_RANKING, DEFAULT_ANALYSIS, servers).size).toBe(0);
    queryTerms("mon git", DEFAULT_RANKING, DEFAULT_ANALYSIS, servers);
    expect(asked).toBe(0);
    const terms = queryTerms("mongo", DEFAULT_RANKING, DEFAULT_ANALYSIS, servers);
    expect(asked).toBe(1);
    expect(terms.get("mongodb")).toBe(1);
    queryTerms("mongo", { ...DEFAULT_RANKING, serverPrefixes: false }, DEFAULT_ANALYSIS, servers);
    expect(asked).toBe(1);
  });

  it("analyses the query as the indexes were analysed", () => {
    const plain = { stem: false, aliases: false, exact: false };
    expect([...queryTerms("repos branches", { ...DEFAULT_RANKING, synonyms: 0 }, plain, noServers).keys()]).toEqual(["repos", "branches"]);
  });
});

describe("unionOf", () => {
  it("numbers the tools of a set one after another and adds up their statistics", () => {
    const u = unionOf([GIT, FILES]);
    expect(u.count).toBe(5);
    expect(u.offsets).toEqual([0, 3]);
    expect(u.serverWords).toEqual(["git", "files"]);
    // "delet" has postings in both members: [member, term position] for each.
    const at = u.terms.get("delet")!;
    expect([...at].filter((_, k) => k % 2 === 0)).toEqual([0, 1]);
    const single = unionOf([GIT]);
    expect(u.totals.every((total, f) => total >= single.totals[f]!)).toBe(true);
  });

  it("keeps the last four sets, told apart member by member and by order", () => {
    const first = unionOf([GIT, FILES]);
    expect(unionOf([GIT, FILES])).toBe(first);
    expect(unionOf([FILES, GIT])).not.toBe(first);
    expect(unionOf([GIT])).not.toBe(first);
    const others = [indexTools([tool("a", "x", "X.")]), indexTools([tool("b", "y", "Y.")]), indexTools([tool("c", "z", "Z.")])];
    for (const other of others) unionOf([GIT, other]);
    // Four newer sets starting with GIT were kept since: the first is gone.
    unionOf([GIT, FILES, others[0]!]);
    expect(unionOf([GIT, FILES])).not.toBe(first);
  });

  it("answers an empty set with no tools", () => {
    expect(unionOf([]).count).toBe(0);
  });
});

describe("score", () => {
  const query = queryTerms("delete", DEFAULT_RANKING, DEFAULT_ANALYSIS, () => []);

  it("keeps the best `limit` in order, or every match unsorted without a limit", () => {
    const all = score([GIT, FILES], query, DEFAULT_RANKING, undefined, undefined);
    expect(all.map((c) => c.name).sort()).toEqual(["files/delete_file", "git/delete_branch"]);
    const best = score([GIT, FILES], query, DEFAULT_RANKING, undefined, 1);
    expect(best).toHaveLength(1);
    const top = [...all].sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1))[0]!;
    expect(best[0]).toEqual(top);
    expect(best[0]!.index).toBe(best[0]!.name.startsWith("git/") ? 0 : 1);
  });

  it("counts only the named server's tools, under the whole set's statistics", () => {
    const only = score([GIT, FILES], query, DEFAULT_RANKING, "files", undefined);
    expect(only.map((c) => c.name)).toEqual(["files/delete_file"]);
    const unfiltered = score([GIT, FILES], query, DEFAULT_RANKING, undefined, undefined).find((c) => c.name === "files/delete_file");
    expect(only[0]!.score).toBe(unfiltered!.score);
  });

  it("leaves nothing behind for the next scoring", () => {
    const once = score([GIT, FILES], query, DEFAULT_RANKING, undefined, undefined);
    expect(score([GIT, FILES], query, DEFAULT_RANKING, undefined, undefined)).toEqual(once);
    expect(score([GIT, FILES], new Map(), DEFAULT_RANKING, undefined, undefined)).toEqual([]);
    expect(score([], query, DEFAULT_RANKING, undefined, 8)).toEqual([]);
  });
});
