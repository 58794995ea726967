// The session's semantic stage (src/views/semantic-stage.ts) over the committed embedding table served as the ASSETS
// binding would serve it: which embedder each setting gives, workers-ai falling back to the static model without an
// AI binding (said once), the workers-ai maker used where there is one, and an embedder that fails leaving the search
// to BM25F with one log line that quotes neither the query nor a tool.
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EMBEDDING_TABLE_PATH } from "../../scripts/build-embedder.ts";
import type { Embedder } from "../../src/catalog/embedder.ts";
import { indexTools } from "../../src/catalog/search.ts";
import { queryMeaning, searchEmbedder } from "../../src/views/semantic-stage.ts";

const assets = { fetch: async () => new Response(readFileSync(EMBEDDING_TABLE_PATH)) };
const index = indexTools([{ name: "payments/create_refund", server: "payments", tool: "create_refund", description: "Refund a charge." }]);
let lines: string[];

beforeEach(() => {
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

describe("the session's semantic stage", () => {
  it("is none when off, the static model when static", async () => {
    expect(searchEmbedder("off", { assets })).toBeUndefined();
    const stage = searchEmbedder("static", { assets })!;
    expect(stage.stage).toBe("static");
    expect((await stage.load()).modelId).toBe("potion-base-4M-int8");
  });

  it("answers workers-ai with the static model where the Worker has no AI binding, said once per isolate", async () => {
    const first = searchEmbedder("workers-ai", { assets, ai: undefined })!;
    searchEmbedder("workers-ai", { assets, ai: undefined });
    expect([first.stage, (await first.load()).modelId]).toEqual(["static", "potion-base-4M-int8"]);
    expect(lines.filter((l) => l.includes('"outcome":"static_instead"'))).toHaveLength(1);
  });

  it("makes the workers-ai embedder over the binding where there is one", async () => {
    const remote: Embedder = { modelId: "remote", dimension: 4, embed: async (texts) => texts.map(() => new Float32Array([1, 0, 0, 0])) };
    const binding = { name: "AI" };
    const made: unknown[] = [];
    const stage = searchEmbedder("workers-ai", { assets, ai: binding, workersAi: (ai) => (made.push(ai), remote) })!;
    expect([stage.stage, (await stage.load()).modelId, made]).toEqual(["workers-ai", "remote", [binding]]);
  });

  it("leaves a search to BM25F when its embedder fails, with one log line quoting no text", async () => {
    const failing = { stage: "workers-ai" as const, load: async (): Promise<Embedder> => ({ modelId: "down", dimension: 4, embed: () => Promise.reject(new TypeError("cannot embed: hand the money back")) }) };
    expect(await queryMeaning([index], "hand the money back", failing)).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"outcome":"words_only"');
    expect(lines[0]).toContain('"reason":"TypeError"');
    expect(lines[0]).not.toContain("money");
  });

  it("gives the query's vector and each index's tool vectors with a working embedder", async () => {
    const meaning = await queryMeaning([index], "hand the money back", searchEmbedder("static", { assets })!);
    expect([meaning?.vector.length, meaning?.vectors.length, meaning?.vectors[0]?.scales.length]).toEqual([128, 1, 1]);
  });
});
