// src/catalog/search.ts: analysis (words, terms), BM25F ranking, options, determinism and the stored form.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ANALYSIS,
  DEFAULT_RANKING,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  indexTools,
  rankTools,
  SEARCH_INDEX_VERSION,
  readToolIndex,
  searchLimit,
  searchTools,
  splitDescription,
  terms,
  toolIndexBytes,
  words,
  type SearchHit,
  type SearchInput,
  type ToolIndex,
} from "../../src/catalog/search.ts";
import { termsOf } from "../../src/catalog/search-index.ts";

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

  it("reads common abbreviations as their words, and nothing else as another word", () => {
    const t = (w: string) => terms(w, { ...DEFAULT_ANALYSIS, exact: false });
    expect(t("MR")).toEqual(t("merge request"));
    expect(t("PRs")).toEqual(t("pull request"));
    expect(t("repos")).toEqual(t("repository"));
    expect(t("k8s")).toEqual(expect.arrayContaining(t("kubernetes")));
    expect(terms("MR", { ...DEFAULT_ANALYSIS, aliases: false, exact: false })).toEqual(["mr"]);
    // Verbs stay themselves in the index: equivalents only widen queries (see searchTools).
    expect(t("remove")).not.toEqual(t("delete"));
  });

  it("splits a description into its first sentence and the rest", () => {
    expect(splitDescription("Delete a branch. Needs maintainer rights.\nIrreversible.")).toEqual([
      "Delete a branch.",
      " Needs maintainer rights.\nIrreversible.",
    ]);
    expect(splitDescription("List v1.2 tags")).toEqual(["List v1.2 tags", ""]);
    expect(splitDescription("First line\nsecond line")).toEqual(["First line\n", "second line"]);
    expect(splitDescription(undefined)).toEqual(["", ""]);
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
    expect(hits[0]?.name).toBe("git/get_file_contents");
    expect(hits.every((h) => h.server === "git")).toBe(true);
    expect(searchTools(both(), "read file", { server: "nowhere" })).toEqual([]);
  });

  it("weighs the first sentence of a description above the rest", () => {
    const index = indexTools([
      tool("s", "alpha", "Archive a project. Projects can be restored later."),
      tool("s", "beta", "Restore an archived project. Works for a year."),
    ]);
    expect(searchTools(index, "restore project")[0]?.name).toBe("s/beta");
    const flat = { ...DEFAULT_RANKING, fields: { ...DEFAULT_RANKING.fields, summary: DEFAULT_RANKING.fields.description } };
    const hits = searchTools(index, "restore project", { ranking: flat });
    // With the first sentence no heavier, only the name and length tell them apart; the default's margin is larger.
    const margin = (h: SearchHit[]) => h[0]!.score - h[1]!.score;
    expect(margin(searchTools(index, "restore project"))).toBeGreaterThan(margin(hits));
  });

  it("widens a query with general verb equivalents, below the query's own words", () => {
    const index = indexTools([
      tool("s", "delete_branch", "Delete a branch."),
      tool("s", "remove_label", "Remove a label from a branch."),
      tool("s", "rename_branch", "Give a branch a new name."),
    ]);
    // "remove" finds delete_branch through the equivalence…
    const hits = searchTools(index, "remove the branch").map((h) => h.name);
    expect(hits).toContain("s/delete_branch");
    expect(hits.indexOf("s/delete_branch")).toBeLessThan(hits.indexOf("s/rename_branch"));
    // …but a tool with the user's own word stays first, and turning the widening off loses the equivalent.
    expect(searchTools(index, "remove label")[0]?.name).toBe("s/remove_label");
    const off = { ...DEFAULT_RANKING, synonyms: 0 };
    expect(searchTools(index, "erase", { ranking: off })).toEqual([]);
    expect(searchTools(index, "erase")[0]?.name).toBe("s/delete_branch");
  });

  it("drops the filler of a request from queries", () => {
    const asked = searchTools(both(), "hey, can you just quickly tell me the branches right now? thanks");
    expect(asked.map((h) => h.name)).toEqual(searchTools(both(), "branches").map((h) => h.name));
    const off = { ...DEFAULT_RANKING, filler: false };
    const index = indexTools([...GIT, tool("x", "right_now", "Tell the time right now.")]);
    expect(searchTools(index, "tell me the branches right now", { ranking: off })[0]?.name).toBe("x/right_now");
    expect(searchTools(index, "tell me the branches right now")[0]?.name).toBe("git/list_branches");
  });

  it("reads a word that begins a server's name, or that a server's name begins, as that name", () => {
    const db = indexTools([tool("mongodb", "find", "Query documents."), tool("mongodb", "count", "Count documents.")]);
    const pg = indexTools([tool("postgres", "query", "Run SQL.")]);
    expect(searchTools([db, pg], "mongo").map((h) => h.server)).toEqual(["mongodb", "mongodb"]);
    expect(searchTools([db, pg], "postgresql").map((h) => h.name)).toEqual(["postgres/query"]);
    const off = { ...DEFAULT_RANKING, serverPrefixes: false };
    expect(searchTools([db, pg], "mongo", { ranking: off })).toEqual([]);
    // Short words are no server's prefix.
    expect(searchTools([db, pg], "mon")).toEqual([]);
  });

  it("keeps a server's fields once per server, counted for each of its tools", () => {
    const index = indexTools(GIT);
    expect(index.servers.map((s) => s.name)).toEqual(["git"]);
    expect(index.servers[0]!.terms).toContain("host");
    expect(termsOf(index)).not.toContain("host");
    // A tool with the word in its own fields and its server's ranks above its siblings with it only in the server's.
    const hits = searchTools(index, "hosting branches");
    expect(hits[0]?.name).toBe("git/list_branches");
    expect(hits.length).toBe(GIT.length);
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

  it("keeps each searched set's statistics apart, whatever was searched before", () => {
    const git = indexTools(GIT);
    const files = indexTools(FILES);
    const fresh = (list: ToolIndex[]) => searchTools(list.map((i) => readToolIndex(toolIndexBytes(i))!), "read file path", { limit: 25 });
    // Sets sharing their first index, searched in turn: each answers as if it were the only one ever searched.
    for (const list of [[git, files], [git], [git, files], [files, git], [files]]) {
      expect(searchTools(list, "read file path", { limit: 25 })).toEqual(fresh(list));
    }
    // More sets than are kept, then the first again.
    const others = Array.from({ length: 6 }, (_, n) => indexTools([tool("o", `other_${n}`, "Read another file.")]));
    for (const o of others) searchTools([git, o], "file");
    expect(searchTools([git, files], "read file path", { limit: 25 })).toEqual(fresh([git, files]));
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
  it("is bytes that give identical results after a round trip", () => {
    const indexes = both();
    const read = indexes.map((i) => readToolIndex(toolIndexBytes(i)));
    expect(read.every((r) => r !== undefined)).toBe(true);
    read.forEach((r, k) => {
      expect(toolIndexBytes(r!)).toEqual(toolIndexBytes(indexes[k]!));
      expect([...r!.postingTools]).toEqual([...indexes[k]!.postingTools]);
    });
    for (const q of ["merge", "read file", "list directory entries", "repository issues"]) {
      expect(searchTools(read as ToolIndex[], q, { limit: 25 })).toEqual(searchTools(indexes, q, { limit: 25 }));
    }
  });

  it("takes 8-, 16- and 32-bit tool numbers and 32-bit positions past 65,536, in memory and stored", () => {
    const many = Array.from({ length: 65_600 }, (_, n) => tool("big", `item_${n}`, n === 65_599 ? "The last needle." : "An item."));
    const index = indexTools(many);
    expect(index.postingTools).toBeInstanceOf(Uint32Array);
    expect(index.starts).toBeInstanceOf(Uint32Array);
    expect(searchTools(index, "needle").map((h) => h.name)).toEqual(["big/item_65599"]);
    const read = readToolIndex(toolIndexBytes(index))!;
    expect(read.postingTools).toBeInstanceOf(Uint32Array);
    expect(searchTools(read, "needle 65598", { limit: 25 })).toEqual(searchTools(index, "needle 65598", { limit: 25 }));
    // Fewer than 256 tools (an upstream's index, almost always): a byte a tool number; fewer than 65,536: two.
    expect(indexTools(FILES).postingTools).toBeInstanceOf(Uint8Array);
    expect(indexTools(FILES).starts).toBeInstanceOf(Uint16Array);
    const some = indexTools(many.slice(65_300));
    expect(some.postingTools).toBeInstanceOf(Uint16Array);
    expect(searchTools(readToolIndex(toolIndexBytes(some))!, "needle").map((h) => h.name)).toEqual(["big/item_65599"]);
  });

  /** The stored bytes with their text part changed by `edit`, the arrays kept. */
  const withText = (index: ToolIndex, edit: (text: Record<string, unknown>) => Record<string, unknown>): Uint8Array => {
    const bytes = toolIndexBytes(index);
    const length = new DataView(bytes.buffer).getUint32(4, true);
    const text = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))) as Record<string, unknown>;
    const json = new TextEncoder().encode(JSON.stringify(edit(text)));
    const at = (8 + json.length + 3) & ~3;
    const out = new Uint8Array(at + index.buffer.byteLength);
    new DataView(out.buffer).setUint32(0, SEARCH_INDEX_VERSION, true);
    new DataView(out.buffer).setUint32(4, json.length, true);
    out.set(json, 8);
    out.set(new Uint8Array(index.buffer), at);
    return out;
  };
  /** A fresh index of FILES with its arrays changed by `edit`, as bytes. */
  const withArrays = (edit: (index: ToolIndex) => void): Uint8Array => {
    const index = indexTools(FILES);
    edit(index);
    return toolIndexBytes(index);
  };

  it("rejects another version, a wrong shape, a wrong size or inconsistent arrays", () => {
    const good = indexTools(FILES);
    expect(readToolIndex(withText(good, (t) => t))).toBeDefined();
    const other = toolIndexBytes(good);
    new DataView(other.buffer).setUint32(0, 999, true);
    expect(readToolIndex(other)).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, v: 999 })))).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, terms: "nope" })))).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, terms: [...(t.terms as string[])].reverse() })))).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, postings: (t.postings as number) + 1 })))).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, servers: [] })))).toBeUndefined();
    const servers = (t: Record<string, unknown>): Array<Record<string, unknown>> => t.servers as Array<Record<string, unknown>>;
    expect(readToolIndex(withText(good, (t) => ({ ...t, servers: [{ ...servers(t)[0], lengths: [1] }] })))).toBeUndefined();
    expect(readToolIndex(withText(good, (t) => ({ ...t, servers: [...servers(t), ...servers(t)] })))).toBeUndefined();
    expect(readToolIndex(withArrays((i) => i.postingTools.fill(99)))).toBeUndefined();
    expect(readToolIndex(withArrays((i) => i.postingTools.fill(0)))).toBeUndefined();
    expect(readToolIndex(withArrays((i) => i.postingCounts.fill(0)))).toBeUndefined();
    expect(readToolIndex(withArrays((i) => i.starts.fill(0)))).toBeUndefined();
    expect(readToolIndex(toolIndexBytes(good).subarray(0, 100))).toBeUndefined();
    expect(readToolIndex(new Uint8Array([1, 2, 3]))).toBeUndefined();
    expect(readToolIndex(new Uint8Array(0))).toBeUndefined();
  });
});
