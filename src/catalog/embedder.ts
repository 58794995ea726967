// Pure: what turns texts into vectors for a semantic search stage (`Embedder`), and the static one: a Model2Vec model
// (potion-base-4M, int8), whose vector for a text is the mean of its WordPiece pieces' rows, L2-normalised, read from
// the table of embedding-table.ts, served by the Worker's static-assets binding (assets/embedder/).
import { loadOnce } from "../lib/load-once.ts";
import { assetBytes, type AssetsBinding } from "../lib/asset-bytes.ts";
import { readEmbeddingTable, type EmbeddingTable } from "./embedding-table.ts";
import { tokenizeBert } from "./wordpiece.ts";

/** Turns texts into unit vectors whose dot product is their cosine similarity. */
export interface Embedder {
  /** Which model the vectors come from: vectors of two models never compare. */
  readonly modelId: string;
  readonly dimension: number;
  /**
   * One L2-normalised vector per text, in order. A text with no known word (empty, punctuation, unknown script)
   * gets the zero vector: it is similar to nothing.
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * A search's query, for a model that embeds queries apart from the texts they are matched against (Qwen3's
   * instruction, BGE's prefix: src/catalog/workers-ai-embedder.ts); absent, a query is embedded as any text.
   */
  embedQuery?(text: string): Promise<Float32Array>;
  /**
   * The texts' vectors as int8 steps (int8-vectors.ts), for an embedder that keeps them so (cached-embedder.ts):
   * the search's tool vectors are packed from them without a float32 copy of the whole catalog.
   */
  embedSteps?(texts: readonly string[]): Promise<Int8Array[]>;
}

/** The static embedder also answers at once, for callers that are not async (and for its benchmark). */
export interface StaticEmbedder extends Embedder {
  embedOne(text: string): Float32Array;
  /** The text's piece ids, unknown pieces dropped, at most MAX_PIECES (what its vector averages). */
  pieces(text: string): number[];
}

/** Where the Worker reads the table: assets/embedder/potion-base-4m-int8.bin through the ASSETS binding. */
export const EMBEDDING_TABLE_URL = "https://assets.local/embedder/potion-base-4m-int8.bin";

/** Model2Vec averages at most this many pieces of a text, its first. */
export const MAX_PIECES = 512;

/** The static embedder over a read table. */
export function staticEmbedder(table: EmbeddingTable): StaticEmbedder {
  const { rows, dimension } = table;
  const vocabulary = { find: table.find, unknownId: table.unknownRow, maxWordChars: table.maxWordChars };
  const pieces = (text: string): number[] => tokenizeBert(text, vocabulary).filter((id) => id !== table.unknownRow).slice(0, MAX_PIECES);
  const embedOne = (text: string): Float32Array => {
    const sum = new Float64Array(dimension);
    for (const id of pieces(text)) {
      const at = id * dimension;
      for (let d = 0; d < dimension; d++) sum[d]! += rows[at + d]!;
    }
    // The mean's scale goes with the normalisation: the sum's direction is the mean's.
    return unitVector(sum, dimension);
  };
  return {
    modelId: table.modelId,
    dimension,
    embed: (texts) => Promise.resolve(texts.map(embedOne)),
    embedOne,
    pieces,
  };
}

/** The first `dimension` components of `values` as a unit vector; all zero stays the zero vector (similar to nothing). */
export function unitVector(values: ArrayLike<number>, dimension = values.length): Float32Array {
  let norm = 0;
  for (let d = 0; d < dimension; d++) norm += values[d]! * values[d]!;
  const vector = new Float32Array(dimension);
  if (norm === 0) return vector;
  const inverse = 1 / Math.sqrt(norm);
  for (let d = 0; d < dimension; d++) vector[d] = values[d]! * inverse;
  return vector;
}

/** The cosine similarity of two unit vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let d = 0; d < a.length; d++) dot += a[d]! * b[d]!;
  return dot;
}

/** A loader with its own memory (one fetch for concurrent callers, kept once loaded): `loadStaticEmbedder` is the isolate's. */
export function createStaticEmbedderLoader(): (assets: AssetsBinding) => Promise<StaticEmbedder> {
  return loadOnce(async (assets) => staticEmbedder(readEmbeddingTable(await fetchTable(assets))));
}

const fetchTable = (assets: AssetsBinding): Promise<ArrayBuffer> =>
  assetBytes(
    assets,
    EMBEDDING_TABLE_URL,
    "embedding table",
    "assets/embedder/potion-base-4m-int8.bin is kept in git; `node scripts/build-embedder.ts` rebuilds it from ../shared",
  );

/** The isolate's static embedder, loaded once from `env.ASSETS` (about 4 MB, its rows read as they are). */
export const loadStaticEmbedder: (assets: AssetsBinding) => Promise<StaticEmbedder> = createStaticEmbedderLoader();
