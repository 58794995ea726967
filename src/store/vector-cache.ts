// The semantic search's tool vectors in KV, under the team (`team/<team>/vectors/<model>/<bucket>`), so a tool text is
// embedded once per change for all the team's sessions and isolates (src/catalog/cached-embedder.ts reads this after
// the isolate's own cache). Under the team, not one global key per model and digest: a hit would tell one team that
// another embedded the very same text, and the cost saved is small (20,041 tools are about a cent of Workers AI).
//
// A text's vector lives in one of VECTOR_BUCKETS values chosen by its digest, so a catalog of any size is read in at
// most that many KV reads (a Worker's calls are bounded) and a changed tool rewrites one value. A bucket holds at most
// BUCKET_ENTRIES vectors, the oldest written going first: with 1,024-dimension vectors a value stays near 1 MiB (KV
// takes 25), and a team at most 32,768 vectors a model. Two isolates writing one bucket at once may lose one's new
// entries (KV keeps the last write): those texts are embedded again later, nothing worse.
//
// A value, all little-endian: "dvec", format (u8), 0 (u8), dimension (u16), count (u32); then per vector its text's
// SHA-256 (32 bytes) and its int8 steps (dimension bytes). A value of another format or shape is read as empty.
import { kvKeys } from "../config/keys.ts";
import { hex } from "../lib/bytes.ts";
import { log } from "../lib/log.ts";
import { cachedEmbedder, type CachedEmbedderOptions, type QueryEmbedder, type VectorStore } from "../catalog/cached-embedder.ts";
import { workersAiEmbedder, type EmbeddingBinding, type WorkersAiEmbedderOptions } from "../catalog/workers-ai-embedder.ts";

export const VECTOR_BUCKETS = 32;
export const BUCKET_ENTRIES = 1_024;
/** The layout's version: a value of another one is not read. */
export const VECTOR_FORMAT = 1;
const MAGIC = [0x64, 0x76, 0x65, 0x63];
const HEADER_BYTES = 12;
const DIGEST_BYTES = 32;

/** A bucket's vectors by digest (hex), oldest first, all of one dimension. */
export type Bucket = Map<string, Int8Array>;

export const bucketOf = (digest: string): number => Number.parseInt(digest.slice(0, 2), 16) % VECTOR_BUCKETS;

export function encodeBucket(dimension: number, vectors: Bucket): ArrayBuffer {
  const bytes = new Uint8Array(HEADER_BYTES + vectors.size * (DIGEST_BYTES + dimension));
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint8(4, VECTOR_FORMAT);
  view.setUint16(6, dimension, true);
  view.setUint32(8, vectors.size, true);
  let at = HEADER_BYTES;
  for (const [digest, steps] of vectors) {
    for (let i = 0; i < DIGEST_BYTES; i++) bytes[at + i] = Number.parseInt(digest.slice(2 * i, 2 * i + 2), 16);
    bytes.set(new Uint8Array(steps.buffer, steps.byteOffset, dimension), at + DIGEST_BYTES);
    at += DIGEST_BYTES + dimension;
  }
  return bytes.buffer;
}

/** The bucket a value holds, or undefined for one of another format, or of a size its header does not account for. */
export function decodeBucket(buffer: ArrayBuffer): { dimension: number; vectors: Bucket } | undefined {
  const bytes = new Uint8Array(buffer);
  if (bytes.length < HEADER_BYTES || MAGIC.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(buffer);
  const [format, dimension, count] = [view.getUint8(4), view.getUint16(6, true), view.getUint32(8, true)];
  if (format !== VECTOR_FORMAT || dimension === 0 || bytes.length !== HEADER_BYTES + count * (DIGEST_BYTES + dimension)) return undefined;
  const vectors: Bucket = new Map();
  for (let at = HEADER_BYTES; at < bytes.length; at += DIGEST_BYTES + dimension) {
    // A copy, so a kept vector does not hold the whole value alive.
    vectors.set(hex(bytes.subarray(at, at + DIGEST_BYTES)), new Int8Array(buffer.slice(at + DIGEST_BYTES, at + DIGEST_BYTES + dimension)));
  }
  return { dimension, vectors };
}

/** What of KV the store uses (a KV binding is one). */
export interface VectorKv {
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  put(key: string, value: ArrayBuffer): Promise<void>;
}

/** The team's vectors in KV. */
export function kvVectorStore(kv: VectorKv, team: string): VectorStore {
  const told = (model: string, action: "read" | "write", reason: string) => log({ event: "vector_cache", team, model, action, reason });

  /** A bucket as stored (empty when absent or unreadable: the latter told once per read). */
  async function readBucket(model: string, bucket: number): Promise<{ dimension: number; vectors: Bucket } | undefined> {
    const value = await kv.get(kvKeys.vectors(team, model, bucket), "arrayBuffer");
    if (value === null) return undefined;
    const read = decodeBucket(value);
    if (!read) told(model, "read", `bucket ${bucket} is not of format ${VECTOR_FORMAT}; read as empty`);
    return read;
  }

  const byBucket = (digests: Iterable<string>) => {
    const groups = new Map<number, string[]>();
    for (const digest of digests) {
      const bucket = bucketOf(digest);
      groups.set(bucket, [...(groups.get(bucket) ?? []), digest]);
    }
    return groups;
  };

  return {
    scope: team,

    async read(model, digests) {
      const found = new Map<string, Int8Array>();
      await Promise.all(
        [...byBucket(digests)].map(async ([bucket, wanted]) => {
          try {
            const stored = await readBucket(model, bucket);
            for (const digest of wanted) {
              const steps = stored?.vectors.get(digest);
              if (steps) found.set(digest, steps);
            }
          } catch (err) {
            told(model, "read", `KV read failed: ${err instanceof Error ? err.name : "error"}`);
          }
        }),
      );
      return found;
    },

    async write(model, vectors) {
      const dimension = vectors.values().next().value?.length;
      if (dimension === undefined) return;
      await Promise.all(
        [...byBucket(vectors.keys())].map(async ([bucket, digests]) => {
          try {
            const stored = await readBucket(model, bucket);
            const kept: Bucket = stored?.dimension === dimension ? stored.vectors : new Map();
            for (const digest of digests) {
              kept.delete(digest);
              kept.set(digest, vectors.get(digest)!);
            }
            for (const oldest of kept.keys()) {
              if (kept.size <= BUCKET_ENTRIES) break;
              kept.delete(oldest);
            }
            await kv.put(kvKeys.vectors(team, model, bucket), encodeBucket(dimension, kept));
          } catch (err) {
            told(model, "write", `KV write failed: ${err instanceof Error ? err.name : "error"}`);
          }
        }),
      );
    },
  };
}

/**
 * The team's `workers-ai` embedder as the search takes it: Workers AI's vectors of tool texts cached in the isolate
 * and in the team's KV, queries embedded each time; undefined where the Worker has no `AI` binding (locally, in tests:
 * the caller falls back to the static embedder). `env` is the Worker's (`AI` and `TEAMS`).
 */
export function teamWorkersAiEmbedder(
  env: { AI?: EmbeddingBinding | undefined; TEAMS: VectorKv },
  team: string,
  options: WorkersAiEmbedderOptions & CachedEmbedderOptions = {},
): QueryEmbedder | undefined {
  if (!env.AI) return undefined;
  return cachedEmbedder(workersAiEmbedder(env.AI, options), kvVectorStore(env.TEAMS, team), options);
}
