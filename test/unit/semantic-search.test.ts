// The semantic stage's blend (src/catalog/semantic-blend.ts, semantic-vectors.ts) with the static embedder over the
// committed table: a query sharing no word with its tool finds it with the stage and not without; int8 rows rank as
// float rows do; a search without a query vector is today's ranking (the recorded one); tool vectors are made once
// per index however many searches ask; a search narrowed to a server stays in it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { QUERIES_FILE, corpusUpstreams, searchInputs } from "../../bench/selection.ts";
import { EMBEDDING_TABLE_PATH } from "../../scripts/build-embedder.ts";
import { staticEmbedder, type StaticEmbedder } from "../../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../../src/catalog/embedding-table.ts";
import { indexTools, searchTools, type SearchInput, type ToolIndex } from "../../src/catalog/search.ts";
import { floatRows, quantise, toolText, toolVectorBuilds, vectorsOf, type ToolVectors } from "../../src/catalog/semantic-vectors.ts";

let embedder: StaticEmbedder;
let corpus: ToolIndex[];

beforeAll(() => {
  embedder = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  corpus = corpusUpstreams().map((u) => indexTools(searchInputs(u)));
});

const tool = (server: string, name: string, description: string): SearchInput => ({ name: `${server}/${name}`, server, tool: name, description });

/** A small shop's tools: the refund shares no word with "give the money back to the buyer who complained". */
const SHOP = [
  tool("payments", "create_refund", "Refund a charge, in whole or in part."),
  tool("payments", "list_charges", "List the charges of an account."),
  tool("payments", "create_invoice", "Create an invoice for a customer."),
  tool("mail", "send_email", "Send an email to a recipient."),
  tool("files", "read_file", "Read a file from the disk."),
  tool("files", "write_file", "Write text to a file."),
];

const vectorsFor = (indexes: readonly ToolIndex[], rows = quantise): ToolVectors[] =>
  indexes.map((index) => rows(index.tools.list().map((t) => embedder.embedOne(toolText(t))), embedder.dimension, embedder.modelId));
const meaningOf = (query: string, vectors: readonly ToolVectors[]) => ({ vector: embedder.embedOne(query), vectors });
const names = (hits: ReadonlyArray<{ name: string }>) => hits.map((h) => h.name);

describe("the semantic stage's blend", () => {
  it("finds a tool that shares no word with the query, which BM25F alone does not", () => {
    const indexes = [indexTools(SHOP.filter((t) => t.server === "payments")), indexTools(SHOP.filter((t) => t.server !== "payments"))];
    const query = "give the money back";
    expect(names(searchTools(indexes, query, { limit: 3 }))).not.toContain("payments/create_refund");
    const on = searchTools(indexes, query, { limit: 3, meaning: meaningOf(query, vectorsFor(indexes)) });
    expect(names(on)[0]).toBe("payments/create_refund");
  });

  it("finds the dev queries' tools with int8 rows as with float32 rows (hit@1, hit@5 within a query; top 1 the same)", () => {
    const int8 = vectorsFor(corpus);
    const float = vectorsFor(corpus, floatRows);
    const { queries } = JSON.parse(readFileSync(QUERIES_FILE, "utf8")) as { queries: Array<{ q: string; expect: string[]; also: string[] }> };
    const hits = { int8: [0, 0], float: [0, 0] };
    let sameFirst = 0;
    for (const { q, expect: meant, also } of queries) {
      const right = new Set([...meant, ...also]);
      const a = names(searchTools(corpus, q, { limit: 5, meaning: meaningOf(q, int8) }));
      const b = names(searchTools(corpus, q, { limit: 5, meaning: meaningOf(q, float) }));
      if (a[0] === b[0]) sameFirst++;
      for (const [key, list] of [["int8", a], ["float", b]] as const) {
        if (right.has(list[0]!)) hits[key][0]!++;
        if (list.some((name) => right.has(name))) hits[key][1]!++;
      }
    }
    // Rounding a component to 1/127 of its row's largest moves a cosine by about 0.002: only near ties may swap.
    expect(Math.abs(hits.int8[0]! - hits.float[0]!)).toBeLessThanOrEqual(1);
    expect(Math.abs(hits.int8[1]! - hits.float[1]!)).toBeLessThanOrEqual(1);
    expect(sameFirst / queries.length).toBeGreaterThan(0.97);
    expect(hits.int8[1]! / queries.length).toBeGreaterThan(0.72);
  });

  it("without a query vector is the recorded BM25F ranking (the dev queries)", () => {
    const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "search-ranking.json"), "utf8")) as Record<string, string[]>;
    const { queries } = JSON.parse(readFileSync(QUERIES_FILE, "utf8")) as { queries: Array<{ q: string }> };
    for (const { q } of queries) {
      const expected = recorded[q]!.map((line) => {
        const [name, score] = line.split(" ");
        return `${name} ${Math.round(Number(score) * 1000) / 1000}`;
      });
      expect(searchTools(corpus, q, { limit: 10 }).map((h) => `${h.name} ${h.score}`), q).toEqual(expected);
    }
  });

  it("keeps BM25F's order when the query has no known word (the zero vector)", () => {
    const vectors = vectorsFor(corpus);
    const query = "list issues";
    const zero = { vector: new Float32Array(embedder.dimension), vectors };
    expect(names(searchTools(corpus, query, { limit: 8, meaning: zero }))).toEqual(names(searchTools(corpus, query, { limit: 8 })));
  });

  it("stays in the server a search is narrowed to", () => {
    const query = "give the customer their money back";
    const hits = searchTools(corpus, query, { server: "github", limit: 10, meaning: meaningOf(query, vectorsFor(corpus)) });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.server === "github")).toBe(true);
  });
});

describe("tool vectors", () => {
  it("are made once per index and model, however many searches ask at once or later", async () => {
    const index = indexTools(SHOP);
    const before = toolVectorBuilds();
    const asked = await Promise.all(Array.from({ length: 5 }, () => vectorsOf(index, embedder)));
    const later = await vectorsOf(index, embedder);
    expect(toolVectorBuilds() - before).toBe(1);
    expect(asked.every((v) => v === later)).toBe(true);
    expect([later.rows.length, later.scales.length, later.rows instanceof Int8Array]).toEqual([SHOP.length * 128, SHOP.length, true]);
    // Another index of the same tools is another object: its own vectors (the isolate shares the index itself).
    await vectorsOf(indexTools(SHOP), embedder);
    expect(toolVectorBuilds() - before).toBe(2);
  });

  it("are made again after a failed embedding", async () => {
    const index = indexTools(SHOP);
    let calls = 0;
    const flaky = {
      modelId: "flaky",
      dimension: 128,
      embed: (texts: readonly string[]) => (++calls === 1 ? Promise.reject(new Error("down")) : embedder.embed(texts)),
    };
    await expect(vectorsOf(index, flaky)).rejects.toThrow("down");
    await expect(vectorsOf(index, flaky)).resolves.toMatchObject({ modelId: "flaky" });
  });

  it("embed a tool as its server, its own name's words and its line", () => {
    expect(toolText({ name: "github/create_pull_request", server: "github", line: "Create a pull request" })).toBe("github create pull request: Create a pull request");
    expect(toolText({ name: "getPullRequest", server: "gh", line: "" })).toBe("gh get Pull Request: ");
  });
});
