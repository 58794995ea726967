// src/catalog/search.ts: analysis (words, terms), BM25F ranking, options, determinism and the stored form.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ANALYSIS,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  indexTools,
  rankTools,
  readToolIndex,
  searchLimit,
  searchTools,
  terms,
  words,
  type SearchInput,
  type ToolIndex,
} from "../../src/catalog/search.ts";

const tool = (server: string, name: string, description: string, properties: Record<string, string> = {}): SearchInput => ({
  name: `${server}/${name}`,
  server,
  tool: name,
  description,
  inputSchema: {
    type: "object",
    properties: Object.fromEntries(Object.entries(properties).map(([k, d]) => [k, { type: "string", description: d }])),
  },
});

const GIT: SearchInput[] = [
  tool("git", "merge_pull_request", "Merge a pull request into its base branch.", { number: "Pull request number" }),
  tool("git", "list_branches", "List the branches of a repository.", { repo: "Repository name" }),
  tool("git", "create_issue", "Open a new issue in a repository.", { title: "Issue title", body: "Issue text" }),
  tool("git", "get_file_contents", "Read a file of a repository at a ref.", { path: "File path", ref: "Branch or commit" }),
].map((t) => ({ ...t, serverDescription: "A Git hosting service: repositories, branches, pull requests and issues." }));

const FILES: SearchInput[] = [
  tool("files", "read_file", "Read a local file's text.", { path: "Absolute path" }),
  tool("files", "write_file", "Write text to a local file, replacing it.", { path: "Absolute path", content: "New text" }),
  tool("files", "list_directory", "List the entries of a local directory.", { path: "Directory path" }),
  tool("files", "move_file", "Move or rename a file.", { source: "From", destination: "To" }),
];

const both = (): ToolIndex[] => [indexTools(GIT), indexTools(FILES)];

describe("words and terms", () => {
  it("splits snake_case, kebab-case, camelCase, acronyms and digits", () => {
    expect(words("create_pull_request")).toEqual(["create", "pull", "request"]);
    expect(words("kubectl-apply")).toEqual(["kubectl", "apply"]);
    expect(words("getPullRequest")).toEqual(["get", "pull", "request", "getpullrequest"]);
    expect(words("HTMLParser")).toEqual(["html", "parser", "htmlparser"]);
    expect(words("base64 v2")).toEqual(["base", "64", "base64", "v", "2", "v2"]);
    expect(words("list IDs")).toEqual(["list", "id"]);
  });

  it("keeps a name written as one word whole too, so GitLab meets gitlab", () => {
    expect(terms("GitLab")).toContain("gitlab");
    expect(terms("gitlab")).toContain("gitlab");
  });

  it("stems inflections to one term", () => {
    const stemOf = (w: string) => terms(w, { ...DEFAULT_ANALYSIS, exact: false, aliases: false });
    expect(stemOf("merging")).toEqual(stemOf("merge"));
    expect(stemOf("merged")).toEqual(stemOf("merges"));
    expect(stemOf("repositories")).toEqual(stemOf("repository"));
    expect(stemOf("deployments")).toEqual(stemOf("deploy"));
    expect(stemOf("branch")).not.toEqual(stemOf("brand"));
  });

  it("drops stop words and single letters, keeps single digits", () => {
    expect(terms("the a of to I 7", { ...DEFAULT_ANALYSIS, exact: false })).toEqual(["7"]);
  });

  it("reads common abbreviations and verbs as the tools' words", () => {
    const t = (w: string) => terms(w, { ...DEFAULT_ANALYSIS, exact: false });
    expect(t("MR")).toEqual(t("merge request"));
    expect(t("repos")).toEqual(t("repository"));
    expect(t("remove")).toEqual(t("delete"));
    expect(t("removing")).toEqual(t("delete"));
  });
});

describe("searchTools", () => {
  it("finds a tool by a stemmed form of its words", () => {
    expect(searchTools(both(), "merging pull requests")[0]?.name).toBe("git/merge_pull_request");
    expect(searchTools(both(), "directories")[0]?.name).toBe("files/list_directory");
  });

  it("ranks a hit in the tool's name above the same word in another tool's description", () => {
    const index = indexTools([
      tool("s", "rename_thing", "Change the label shown for an item."),
      tool("s", "update_label", "Rename an item's label or rename its colour."),
    ]);
    expect(searchTools(index, "rename").map((h) => h.name)).toEqual(["s/rename_thing", "s/update_label"]);
  });

  it("uses parameters and the server's description", () => {
    expect(searchTools(both(), "destination")[0]?.name).toBe("files/move_file");
    const hits = searchTools(both(), "hosting");
    expect(hits.length).toBe(GIT.length);
    expect(hits.every((h) => h.server === "git")).toBe(true);
  });

  it("answers names, servers, one-line descriptions and scores, best first, ties by name", () => {
    const hits = searchTools(both(), "file");
    expect(hits.length).toBeGreaterThan(2);
    for (let i = 1; i < hits.length; i++) {
      const [a, b] = [hits[i - 1]!, hits[i]!];
      expect(a.score > b.score || (a.score === b.score && a.name < b.name)).toBe(true);
    }
    expect(hits.find((h) => h.name === "files/read_file")).toEqual({
      name: "files/read_file",
      server: "files",
      description: "Read a local file's text",
      score: expect.any(Number),
    });
    // Identical tools under two names tie: the name decides.
    const twins = [indexTools([tool("b", "same", "Identical text.")]), indexTools([tool("a", "same", "Identical text.")])];
    expect(searchTools(twins, "identical").map((h) => h.name)).toEqual(["a/same", "b/same"]);
  });

  it("filters by server", () => {
    const hits = searchTools(both(), "read file", { server: "git" });
    expect(hits.map((h) => h.name)).toEqual(["git/get_file_contents"]);
    expect(searchTools(both(), "read file", { server: "nowhere" })).toEqual([]);
  });

  it("returns 8 by default and at most 25, at least 1", () => {
    const many = indexTools(Array.from({ length: 40 }, (_, i) => tool("m", `widget_${String(i).padStart(2, "0")}`, "A widget tool.")));
    expect(searchTools(many, "widget")).toHaveLength(SEARCH_LIMIT_DEFAULT);
    expect(searchTools(many, "widget", { limit: 100 })).toHaveLength(SEARCH_LIMIT_MAX);
    expect(searchTools(many, "widget", { limit: 0 })).toHaveLength(1);
    expect(searchTools(many, "widget", { limit: 3.9 })).toHaveLength(3);
    expect(searchTools(many, "widget", { limit: Number.NaN })).toHaveLength(SEARCH_LIMIT_DEFAULT);
    expect(searchLimit(-5)).toBe(1);
    // The top of a longer list is the shorter list.
    expect(searchTools(many, "widget", { limit: 5 })).toEqual(searchTools(many, "widget", { limit: 25 }).slice(0, 5));
    expect(searchTools(many, "widget", { limit: 25 })).toEqual(rankTools(many, "widget").slice(0, 25));
  });

  it("computes statistics over the union of indexes, whatever their split", () => {
    const split = searchTools(both(), "read the file path");
    const one = searchTools(indexTools([...GIT, ...FILES]), "read the file path");
    expect(split.map((h) => h.name)).toEqual(one.map((h) => h.name));
    expect(split.map((h) => h.score)).toEqual(one.map((h) => h.score));
    // A word common in one index but rare overall weighs as rare.
    expect(searchTools([indexTools(FILES)], "local").length).toBe(3);
  });

  it("is deterministic", () => {
    const query = "list the branches of a repository or read a file";
    const first = searchTools(both(), query, { limit: 25 });
    for (let i = 0; i < 3; i++) expect(searchTools(both(), query, { limit: 25 })).toEqual(first);
    expect(JSON.stringify(indexTools(GIT))).toBe(JSON.stringify(indexTools(GIT)));
  });

  it("returns nothing for empty, stop-word, punctuation or unknown queries", () => {
    for (const q of ["", "   ", "the of and", "?!…", "zzzqqq", "🙂", "a"]) expect(searchTools(both(), q)).toEqual([]);
    expect(searchTools([], "file")).toEqual([]);
    expect(searchTools(indexTools([]), "file")).toEqual([]);
  });

  it("takes odd schemas and descriptions in its stride", () => {
    const odd = indexTools([
      { name: "x/none", server: "x", tool: "none" },
      { name: "x/weird", server: "x", tool: "weird", description: "", inputSchema: { properties: [1, 2] } },
      { name: "x/deep", server: "x", tool: "deep", inputSchema: { properties: { outer: { items: { properties: { needle: {} } } } } } },
    ]);
    expect(searchTools(odd, "needle").map((h) => h.name)).toEqual(["x/deep"]);
    expect(searchTools(odd, "none")[0]).toEqual({ name: "x/none", server: "x", description: "", score: expect.any(Number) });
  });
});

describe("the stored form", () => {
  it("is plain JSON and gives identical results after a round trip", () => {
    const indexes = both();
    const stored = indexes.map((i) => JSON.parse(JSON.stringify(i)) as unknown);
    const read = stored.map((s) => readToolIndex(s));
    expect(read.every((r) => r !== undefined)).toBe(true);
    expect(read).toEqual(indexes);
    for (const q of ["merge", "read file", "list directory entries", "repository issues"]) {
      expect(searchTools(read as ToolIndex[], q, { limit: 25 })).toEqual(searchTools(indexes, q, { limit: 25 }));
    }
  });

  it("rejects another version, a wrong shape or inconsistent counts", () => {
    const good = JSON.parse(JSON.stringify(indexTools(FILES))) as Record<string, unknown>;
    expect(readToolIndex({ ...good, v: 999 })).toBeUndefined();
    expect(readToolIndex({ ...good, terms: "nope" })).toBeUndefined();
    expect(readToolIndex({ ...good, lengths: [1, 2, 3] })).toBeUndefined();
    expect(readToolIndex({ ...good, terms: [...(good.terms as string[])].reverse() })).toBeUndefined();
    expect(readToolIndex({ ...good, postings: (good.postings as number[][]).map(() => [99, 1, 0, 0, 0]) })).toBeUndefined();
    expect(readToolIndex(null)).toBeUndefined();
    expect(readToolIndex(good)).toEqual(good);
  });
});
