// The workers-ai embedder and its vector cache inside workerd, with the real KV binding (env.TEAMS) and a stand-in of
// the Workers AI binding backed by the static model (ai-stand-in.ts: Workers AI cannot be reached from tests). The
// stand-in counts what it is asked to embed: a tool text once across sessions and isolates, again when it changes, a
// query every search and never stored; a failing or malformed answer is a typed error that quotes no text.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cosine } from "../../src/catalog/embedder.ts";
import { cachedEmbedder, createIsolateVectors, type VectorStore } from "../../src/catalog/cached-embedder.ts";
import { QWEN3_QUERY_INSTRUCTION, workersAiEmbedder } from "../../src/catalog/workers-ai-embedder.ts";
import { EmbedderError } from "../../src/lib/errors.ts";
import { sha256Hex } from "../../src/lib/bytes.ts";
import { kvVectorStore, teamWorkersAiEmbedder, type VectorKv } from "../../src/store/vector-cache.ts";
import { aiStandIn, answerOf } from "./ai-stand-in.ts";

const TOOLS = Array.from({ length: 70 }, (_, i) => `server${i % 7} tool_${i}: lists the open pull requests of repository number ${i}`);
const norm = (v: Float32Array) => Math.sqrt(cosine(v, v));
let teams = 0;
const team = () => `wai-${Date.now().toString(36)}-${teams++}`;

/** A store that counts its reads and writes (the real KV store under it). */
function counted(store: VectorStore) {
  const counts = { reads: 0, writes: 0 };
  const wrapped: VectorStore = {
    scope: store.scope,
    read: (model, digests) => (counts.reads++, store.read(model, digests)),
    write: (model, vectors) => (counts.writes++, store.write(model, vectors)),
  };
  return { store: wrapped, counts };
}

afterEach(() => vi.restoreAllMocks());

describe("workers-ai embedder", () => {
  it("embeds in batches within the model's limit, as unit vectors with the model's cosines; a query with its instruction", async () => {
    const ai = aiStandIn();
    const embedder = workersAiEmbedder(ai);
    expect([embedder.modelId, embedder.dimension]).toEqual(["workers-ai/@cf/qwen/qwen3-embedding-0.6b", 1024]);
    const vectors = await embedder.embed([...TOOLS, "create a github issue", "", "open a new bug report in the repository"]);
    // 72 texts sent (the empty one is not: the model refuses it), at most 32 a call.
    expect(ai.calls.map((c) => [c.field, c.texts.length])).toEqual([["documents", 32], ["documents", 32], ["documents", 8]]);
    expect(vectors).toHaveLength(73);
    for (const v of vectors.filter((_, i) => i !== 71)) expect(norm(v)).toBeCloseTo(1, 5);
    expect(norm(vectors[71]!)).toBe(0);
    expect(cosine(vectors[70]!, vectors[72]!)).toBeCloseTo(0.5795, 3);

    const query = await embedder.embedQuery!("open pull requests");
    expect(ai.calls.at(-1)).toEqual({ model: "@cf/qwen/qwen3-embedding-0.6b", field: "queries", texts: ["open pull requests"], instruction: QWEN3_QUERY_INSTRUCTION });
    expect(norm(query)).toBeCloseTo(1, 5);
  });

  it("a Matryoshka model's vectors cut to fewer dimensions, named apart; a model without that refuses", () => {
    const ai = aiStandIn();
    expect(workersAiEmbedder(ai, { dimensions: 256 })).toMatchObject({ modelId: "workers-ai/@cf/qwen/qwen3-embedding-0.6b@256", dimension: 256 });
    expect(() => workersAiEmbedder(ai, { model: "@cf/baai/bge-m3", dimensions: 256 })).toThrow(RangeError);
  });

  it("a failed or malformed answer is an EmbedderError whose words hold none of the texts", async () => {
    const ai = aiStandIn();
    const embedder = workersAiEmbedder(ai);
    const secret = "refund the charge of customer 4242 in the ledger";
    ai.failWith = new Error(`3040: Capacity temporarily exceeded while reading "${secret}"`);
    // 141 texts are five batches, four calls at a time: the first fails, and no call is made after it.
    ai.failingCall = 1;
    const failed = await embedder.embed([secret, ...TOOLS, ...TOOLS.map((t) => `${t}.`)]).catch((err: unknown) => err);
    expect(ai.calls).toHaveLength(4);
    ai.failingCall = undefined;
    expect(failed).toBeInstanceOf(EmbedderError);
    expect(failed).toMatchObject({ kind: "embedder_failed", model: "@cf/qwen/qwen3-embedding-0.6b" });
    expect((failed as Error).message).toContain("error 3040");
    expect((failed as Error).message).not.toContain("4242");

    ai.failWith = undefined;
    const malformed = [
      { response: "no vectors" },
      answerOf("@cf/qwen/qwen3-embedding-0.6b", []),
      answerOf("@cf/qwen/qwen3-embedding-0.6b", [[1, 2, 3]]),
      { shape: [1, 1024], data: [new Array(1024).fill("x")] },
    ];
    for (const answer of malformed) {
      ai.answerWith = answer;
      const err = await embedder.embed([secret]).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "EmbedderError", kind: "embedder_malformed" });
      expect((err as Error).message).not.toContain("4242");
    }
  });
});

describe("the team's workers-ai embedder", () => {
  it("is there only with an AI binding, which the test pool (like `wrangler dev`) does not have", async () => {
    expect(env.AI).toBeUndefined();
    expect(teamWorkersAiEmbedder(env, "acme")).toBeUndefined();
    const ai = aiStandIn();
    const embedder = teamWorkersAiEmbedder({ AI: ai, TEAMS: env.TEAMS }, team());
    expect(embedder?.modelId).toBe("workers-ai/@cf/qwen/qwen3-embedding-0.6b");
    await embedder!.embed(["list open pull requests on github"]);
    await embedder!.embedQuery("list open pull requests on github");
    expect(ai.calls.map((c) => c.field)).toEqual(["documents", "queries"]);
  });
});

describe("vectors cached per tool text", () => {
  it("a tool text is embedded once across sessions of an isolate (at once or after) and across isolates; a changed one again, alone", async () => {
    const ai = aiStandIn();
    const kv = kvVectorStore(env.TEAMS, team());
    const [isolateA, isolateB] = [createIsolateVectors(), createIsolateVectors()];
    // Two sessions of one isolate at once: the second waits for the first one's vectors.
    const [first, beside] = [counted(kv), counted(kv)];
    const [made, alongside] = await Promise.all([
      cachedEmbedder(workersAiEmbedder(ai), first.store, { isolate: isolateA }).embed(TOOLS),
      cachedEmbedder(workersAiEmbedder(ai), beside.store, { isolate: isolateA }).embed(TOOLS),
    ]);
    expect([ai.texts().length, first.counts.reads, first.counts.writes, beside.counts.reads]).toEqual([70, 1, 1, 0]);
    expect(alongside).toEqual(made);

    // Another session of the same isolate: its cache answers, KV is not read.
    const second = counted(kv);
    const again = await cachedEmbedder(workersAiEmbedder(ai), second.store, { isolate: isolateA }).embed(TOOLS);
    expect([ai.texts().length, second.counts.reads]).toEqual([70, 0]);
    // Another isolate: KV answers.
    const third = counted(kv);
    const elsewhere = await cachedEmbedder(workersAiEmbedder(ai), third.store, { isolate: isolateB }).embed(TOOLS);
    expect([ai.texts().length, third.counts.reads, third.counts.writes]).toEqual([70, 1, 0]);
    expect(again).toEqual(made);
    expect(elsewhere).toEqual(made);

    // One tool's text changed: that text alone is embedded, wherever it is asked for.
    const changed = TOOLS.map((t, i) => (i === 5 ? `${t}, and closes them` : t));
    await cachedEmbedder(workersAiEmbedder(ai), kv, { isolate: isolateB }).embed(changed);
    await cachedEmbedder(workersAiEmbedder(ai), kv, { isolate: createIsolateVectors() }).embed(changed);
    expect(ai.texts().slice(70)).toEqual([changed[5]]);
  });

  it("a query is embedded at every search and never kept, in the isolate or in KV", async () => {
    const ai = aiStandIn();
    const name = team();
    const isolate = createIsolateVectors();
    const embedder = cachedEmbedder(workersAiEmbedder(ai), kvVectorStore(env.TEAMS, name), { isolate });
    const query = "give the customer their money back";
    const [one, two] = [await embedder.embedQuery(query), await embedder.embedQuery(query)];
    expect(ai.calls.map((c) => [c.field, c.texts])).toEqual([["queries", [query]], ["queries", [query]]]);
    expect(one).toEqual(two);
    expect(isolate.kept.size).toBe(0);
    const stored = await kvVectorStore(env.TEAMS, name).read(embedder.modelId, [await sha256Hex(query)]);
    expect(stored.size).toBe(0);
    expect((await env.TEAMS.list({ prefix: `team/${name}/` })).keys).toEqual([]);
  });

  it("a failing binding fails the embed with its kind (what was kept still serves); KV failing is one log line and no failure", async () => {
    const ai = aiStandIn();
    const kv = kvVectorStore(env.TEAMS, team());
    const isolate = createIsolateVectors();
    await cachedEmbedder(workersAiEmbedder(ai), kv, { isolate }).embed(TOOLS.slice(0, 10));
    ai.failWith = new Error("3040: Capacity temporarily exceeded");
    const embedder = cachedEmbedder(workersAiEmbedder(ai), kv, { isolate });
    expect(await embedder.embed(TOOLS.slice(0, 10))).toHaveLength(10);
    await expect(embedder.embed(TOOLS.slice(0, 11))).rejects.toMatchObject({ kind: "embedder_failed" });
    // A caller waiting for another's vectors gets its failure too, and nothing is left pending.
    const both = await Promise.allSettled([embedder.embed(TOOLS.slice(20, 30)), cachedEmbedder(workersAiEmbedder(ai), kv, { isolate }).embed(TOOLS.slice(20, 30))]);
    expect(both.map((r) => r.status === "rejected" && (r.reason as EmbedderError).kind)).toEqual(["embedder_failed", "embedder_failed"]);
    expect(isolate.pending.size).toBe(0);
    ai.failWith = undefined;

    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const broken: VectorKv = {
      get: () => Promise.reject(new Error("KV GET failed: 500")),
      put: () => Promise.reject(new Error("KV PUT failed: 429")),
    };
    const name = team();
    const vectors = await cachedEmbedder(workersAiEmbedder(ai), kvVectorStore(broken, name), { isolate: createIsolateVectors() }).embed(["one tool text"]);
    expect(norm(vectors[0]!)).toBeCloseTo(1, 5);
    const told = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "vector_cache");
    expect(told.map((l) => [l.team, l.action])).toEqual([[name, "read"], [name, "write"]]);
    expect(lines.join("\n")).not.toContain("one tool text");
  });
});
