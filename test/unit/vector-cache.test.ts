// The pure parts of the workers-ai embedder's cache: int8 vectors keep cosines, a bucket's bytes read back (and a
// value of another format or size reads as nothing), batches stay within a model's limits.
import { describe, expect, it } from "vitest";
import { cachedEmbedder, createIsolateVectors } from "../../src/catalog/cached-embedder.ts";
import type { Embedder } from "../../src/catalog/embedder.ts";
import { fromInt8, toInt8 } from "../../src/catalog/int8-vectors.ts";
import { cosineOf, embedTools, quantise, toolText } from "../../src/catalog/semantic-vectors.ts";
import { batchesOf } from "../../src/catalog/workers-ai-embedder.ts";
import { bucketOf, decodeBucket, encodeBucket, VECTOR_BUCKETS } from "../../src/store/vector-cache.ts";

/** A unit vector from a seed (a small linear congruential generator: the same numbers every run). */
function unit(seed: number, dimension: number): Float32Array {
  let state = seed;
  const v = new Float32Array(dimension).map(() => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe("int8 vectors", () => {
  it("keep a vector's direction: cosines move by under a hundredth", () => {
    const vectors = Array.from({ length: 20 }, (_, i) => unit(i + 1, 1024));
    const back = vectors.map((v) => fromInt8(toInt8(v)));
    for (const [i, v] of back.entries()) {
      expect(dot(v, v)).toBeCloseTo(1, 5);
      for (let j = 0; j < i; j++) expect(Math.abs(dot(v, back[j]!) - dot(vectors[i]!, vectors[j]!))).toBeLessThan(0.01);
    }
    expect(fromInt8(toInt8(new Float32Array(8)))).toEqual(new Float32Array(8));
  });
});

describe("a bucket's bytes", () => {
  const digest = (n: number) => n.toString(16).padStart(2, "0").repeat(32);
  const bucket = new Map([1, 2, 3].map((n) => [digest(n), toInt8(unit(n, 16))]));

  it("read back as written, in order", () => {
    const read = decodeBucket(encodeBucket(16, bucket));
    expect(read?.dimension).toBe(16);
    expect([...read!.vectors.keys()]).toEqual([...bucket.keys()]);
    expect([...read!.vectors.values()]).toEqual([...bucket.values()]);
  });

  it("a value of another format, magic or size is read as nothing", () => {
    const bytes = new Uint8Array(encodeBucket(16, bucket));
    const changed = (at: number, value: number) => Object.assign(bytes.slice(), { [at]: value }).buffer;
    expect(decodeBucket(changed(4, 2))).toBeUndefined();
    expect(decodeBucket(changed(0, 0))).toBeUndefined();
    expect(decodeBucket(bytes.slice(0, -1).buffer)).toBeUndefined();
    expect(decodeBucket(new ArrayBuffer(3))).toBeUndefined();
  });

  it("a digest's bucket is one of VECTOR_BUCKETS", () => {
    expect(new Set(Array.from({ length: 256 }, (_, n) => bucketOf(digest(n)))).size).toBe(VECTOR_BUCKETS);
  });
});

describe("batches", () => {
  const items = (...lengths: number[]) => lengths.map((n) => ({ text: "x".repeat(n) }));
  it("hold at most `size` texts and `chars` characters; a longer text goes alone", () => {
    const sizes = (batches: Array<Array<{ text: string }>>) => batches.map((b) => b.map((i) => i.text.length));
    expect(sizes(batchesOf(items(1, 1, 1, 1, 1), 2, 100))).toEqual([[1, 1], [1, 1], [1]]);
    expect(sizes(batchesOf(items(40, 40, 40, 500, 10), 32, 100))).toEqual([[40, 40], [40], [500], [10]]);
    expect(batchesOf([], 32, 100)).toEqual([]);
  });
});

describe("the search's tool vectors from a cached embedder", () => {
  const tools = Array.from({ length: 250 }, (_, i) => ({ name: `s/tool_${i}`, server: "s", line: `does thing ${i}` }));
  /** An embedder of seeded unit vectors that counts its calls and texts. */
  const counting = () => {
    const seen = { calls: 0, texts: 0 };
    const embedder: Embedder = {
      modelId: "seeded",
      dimension: 64,
      embed: async (texts) => (seen.calls++, (seen.texts += texts.length), texts.map((t) => unit(t.length * 7919 + t.charCodeAt(t.length - 1), 64))),
    };
    return { embedder, seen };
  };

  it("are packed from its int8 steps in one call, with the float path's cosines", async () => {
    const { embedder, seen } = counting();
    const cached = cachedEmbedder(embedder, undefined, { isolate: createIsolateVectors() });
    const packed = await embedTools(cached, tools);
    // One call of every text (the embedder batches its own remote calls), not one per hundred.
    expect(seen).toEqual({ calls: 1, texts: 250 });
    const floats = quantise(await cached.embed(tools.map(toolText)), 64, "seeded");
    const query = unit(99, 64);
    const [a, b] = [await embedTools(cached, tools), packed];
    expect(a.rows).toEqual(b.rows);
    for (const t of [0, 17, 249]) expect(Math.abs(cosineOf(packed, t, query) - cosineOf(floats, t, query))).toBeLessThan(0.01);
  });

  it("are not kept a second time in the isolate's cache when the search says so", async () => {
    const isolate = createIsolateVectors();
    const { embedder } = counting();
    await embedTools(cachedEmbedder(embedder, undefined, { isolate, keepInIsolate: false }), tools);
    expect(isolate.kept.size).toBe(0);
    await embedTools(cachedEmbedder(embedder, undefined, { isolate }), tools);
    expect(isolate.kept.size).toBe(250);
  });
});
