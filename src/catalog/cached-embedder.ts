// Vectors kept per text digest in front of any embedder, so a tool is embedded once per change of its text, not per
// session or isolate: first the isolate's cache (shared by every session and object it holds), then a durable store
// (src/store/vector-cache.ts: KV under the team), then the embedder for what neither holds, whose vectors are kept in
// both. Vectors are kept as int8 steps (int8-vectors.ts), and every vector `embed` answers is read back from them,
// so a ranking is the same whether a vector was just made or found. A query is never kept: `embedQuery` goes to the
// embedder every time (a query may hold what a user would not have stored; docs/security.md).
import { BoundedCache } from "../lib/bounded-cache.ts";
import { sha256Hex } from "../lib/bytes.ts";
import type { Embedder } from "./embedder.ts";
import { fromInt8, toInt8 } from "./int8-vectors.ts";

/**
 * Where vectors outlive the isolate. It never throws: a read it cannot make finds nothing, a write it cannot make is
 * given up (each told in one log line by the store), and the texts are embedded again next time.
 */
export interface VectorStore {
  /** Whose vectors these are (a team): the isolate's cache keeps each scope's apart. */
  readonly scope: string;
  /** The vectors it holds of these digests (SHA-256 hex of each text), made by this model (an embedder's `modelId`). */
  read(model: string, digests: readonly string[]): Promise<Map<string, Int8Array>>;
  /** Keeps these vectors by digest (within its bound: the oldest may go). */
  write(model: string, vectors: ReadonlyMap<string, Int8Array>): Promise<void>;
}

/**
 * An isolate's vectors, by scope, model and digest: those kept, and those being found right now (a second caller
 * waits for the first one's instead of asking the store and the model again).
 */
export interface IsolateVectors {
  kept: BoundedCache<string, Int8Array>;
  pending: Map<string, Promise<Int8Array>>;
}

/** The bytes of int8 vectors an isolate keeps: about 16,000 at Qwen3's 1,024 dimensions (the oldest go first). */
export const ISOLATE_VECTOR_BYTES = 16 * 1024 * 1024;

export const createIsolateVectors = (maxWeight = ISOLATE_VECTOR_BYTES): IsolateVectors => ({
  kept: new BoundedCache<string, Int8Array>({ max: 200_000, maxWeight, weigh: (steps) => steps.length + 100 }),
  pending: new Map(),
});

/** Texts given to the embedder at once: many calls of a remote model's batch (32 of Qwen3's), few float32 vectors. */
const EMBED_SHARE = 1_024;

/** The isolate's own, shared by every cached embedder made without one. */
const ISOLATE_VECTORS = createIsolateVectors();

export interface CachedEmbedderOptions {
  /** The isolate's cache by default; a test of two isolates brings one for each. */
  isolate?: IsolateVectors;
  /**
   * Where the durable write of new vectors goes when it should not hold up the answer (a request's `waitUntil`);
   * by default it is awaited.
   */
  defer?: (work: Promise<void>) => void;
  /**
   * Whether vectors found are kept in the isolate's cache after the call (default true). The search's embedder does
   * not keep them: the tool vectors it makes from them (semantic-vectors.ts) are the isolate's one copy, kept with
   * the shared index; the durable store serves an index made again. Vectors being found are shared either way.
   */
  keepInIsolate?: boolean;
}

/** An embedder whose queries go apart from its texts (a cached embedder's always do). */
export interface QueryEmbedder extends Embedder {
  embedQuery(text: string): Promise<Float32Array>;
}

/** `embedder` with its texts' vectors kept in the isolate and in `store` (none: the isolate's cache alone). */
export function cachedEmbedder(embedder: Embedder, store: VectorStore | undefined, options: CachedEmbedderOptions = {}): QueryEmbedder {
  const { kept, pending } = options.isolate ?? ISOLATE_VECTORS;
  const model = embedder.modelId;
  const keyOf = (digest: string) => `${store?.scope ?? ""}\n${model}\n${digest}`;
  const fits = (steps: Int8Array | undefined): steps is Int8Array => steps !== undefined && steps.length === embedder.dimension;

  /** The vectors of texts neither cache of the isolate holds (by digest): from the store, else from the model. */
  async function find(wanted: Map<string, string>): Promise<Map<string, Int8Array>> {
    const found = new Map<string, Int8Array>();
    if (store) {
      for (const [digest, steps] of await store.read(model, [...wanted.keys()])) {
        if (wanted.has(digest) && fits(steps)) found.set(digest, steps);
      }
    }
    const missing = [...wanted].filter(([digest]) => !found.has(digest));
    if (missing.length === 0) return found;
    // A share at a time, each made int8 before the next: float32 vectors of a whole catalog would be 80 MiB at 20,041
    // texts of 1,024 dimensions, in a 128 MB isolate.
    const made = new Map<string, Int8Array>();
    for (let at = 0; at < missing.length; at += EMBED_SHARE) {
      const share = missing.slice(at, at + EMBED_SHARE);
      const vectors = await embedder.embed(share.map(([, text]) => text));
      share.forEach(([digest], i) => made.set(digest, toInt8(vectors[i]!)));
    }
    for (const [digest, steps] of made) found.set(digest, steps);
    if (store) {
      const writing = store.write(model, made);
      if (options.defer) options.defer(writing);
      else await writing;
    }
    return found;
  }

  async function embedSteps(texts: readonly string[]): Promise<Int8Array[]> {
    // 115 to 390 ms for 20,041 tool texts in workerd at a load of 5 on 2 cores (node:crypto's hash, made at once, was
    // no quicker there): paid at each call, which the search makes once per catalog content and isolate.
    const digests = await Promise.all(texts.map(sha256Hex));
    const found = new Map<string, Int8Array>();
    /** Digests this call finds (with the first text that has each), and those another call is finding. */
    const wanted = new Map<string, string>();
    const awaited = new Map<string, Promise<Int8Array>>();
    digests.forEach((digest, at) => {
      const key = keyOf(digest);
      const steps = kept.get(key);
      if (fits(steps)) found.set(digest, steps);
      else if (pending.has(key)) awaited.set(digest, pending.get(key)!);
      else if (!wanted.has(digest)) wanted.set(digest, texts[at]!);
    });
    if (wanted.size > 0) {
      const finding = find(wanted);
      for (const digest of wanted.keys()) {
        const one = finding.then((vectors) => vectors.get(digest)!);
        // Marked as handled: a failure reaches this call below, and any caller that waits for it.
        one.catch(() => undefined);
        pending.set(keyOf(digest), one);
      }
      try {
        for (const [digest, steps] of await finding) {
          found.set(digest, steps);
          if (options.keepInIsolate !== false) kept.set(keyOf(digest), steps);
        }
      } finally {
        for (const digest of wanted.keys()) pending.delete(keyOf(digest));
      }
    }
    for (const [digest, one] of awaited) found.set(digest, await one);
    return digests.map((digest) => found.get(digest)!);
  }

  return {
    modelId: model,
    dimension: embedder.dimension,
    embed: async (texts) => (await embedSteps(texts)).map(fromInt8),
    embedSteps,
    embedQuery: (text) => queryVector(embedder, text),
  };
}

/** A query's vector: the embedder's query form when it has one, else the text's own. Never cached. */
export async function queryVector(embedder: Embedder, text: string): Promise<Float32Array> {
  return embedder.embedQuery ? embedder.embedQuery(text) : (await embedder.embed([text]))[0]!;
}
