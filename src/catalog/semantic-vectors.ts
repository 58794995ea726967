// Pure: the semantic stage's tool vectors. A tool is embedded as its server, its own name's words and its catalog line
// (the first sentence of its description): on the dev queries that text beat the whole description (a mean of word
// rows dilutes a long description), and it is what an index keeps of every tool (`tools[]`), so vectors are made
// from an index alone, built or read back from bytes. One index's vectors are int8 rows in one typed array with a
// scale per row: a quarter of float32's bytes (20,041 tools x 128: 2.5 MiB, not 10), the same dev figures
// (bench/semantic.ts). They are made once per index and embedder and kept as long as that index object lives: the
// isolate's shared index (shared-indexes.ts) is one object per catalog content, so every session of every team with
// that catalog shares one set of vectors.
import type { Embedder } from "./embedder.ts";
import type { ToolIndex } from "./search-index.ts";

/** One index's tool vectors, row t for its tool t: int8 components, and each row's scale back to a unit vector. */
export interface ToolVectors {
  modelId: string;
  dimension: number;
  /** `dimension` components a tool: int8 in the Worker; float32 only to measure what int8 costs in quality. */
  rows: Int8Array | Float32Array;
  /** Per tool, what its row's integers are multiplied by (0 for a tool whose text has no known word). */
  scales: Float32Array;
}

/** What the stage reads of a tool: what an index keeps of it. */
export interface ToolText {
  /** The exposed name: `server/tool`, or the bare tool name in single-MCP mode. */
  name: string;
  server: string;
  line: string;
}

/** `create_pull_request`, `getPullRequest`, `k8s-apply` as words. */
export const nameWords = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_\-./:]+/g, " ");

/** The text a tool is embedded as: `github create pull request: Create a new pull request in a repository`. */
export function toolText(tool: ToolText): string {
  const own = tool.name.startsWith(`${tool.server}/`) ? tool.name.slice(tool.server.length + 1) : tool.name;
  return `${tool.server} ${nameWords(own)}: ${tool.line}`;
}

/** Unit vectors as float32 rows, unscaled (the benchmark's and tests' reference for the int8 rows). */
export function floatRows(vectors: readonly Float32Array[], dimension: number, modelId: string): ToolVectors {
  const rows = new Float32Array(vectors.length * dimension);
  vectors.forEach((v, t) => rows.set(v.subarray(0, dimension), t * dimension));
  return { modelId, dimension, rows, scales: new Float32Array(vectors.length).fill(1) };
}

/** Unit vectors as int8 rows: each row scaled so its largest component is ±127. */
export function quantise(vectors: readonly Float32Array[], dimension: number, modelId: string): ToolVectors {
  const rows = new Int8Array(vectors.length * dimension);
  const scales = new Float32Array(vectors.length);
  vectors.forEach((v, t) => {
    let largest = 0;
    for (let d = 0; d < dimension; d++) largest = Math.max(largest, Math.abs(v[d]!));
    if (largest === 0) return;
    const at = t * dimension;
    for (let d = 0; d < dimension; d++) rows[at + d] = Math.round((v[d]! / largest) * 127);
    scales[t] = largest / 127;
  });
  return { modelId, dimension, rows, scales };
}

/** Tools are embedded this many texts a call (a remote embedder's batch; the static one does not care). */
const EMBED_BATCH = 100;

/** Int8 steps as tool vectors: each row as it is, scaled by its norm's inverse (one copy, no float32 vectors). */
export function packSteps(steps: readonly Int8Array[], dimension: number, modelId: string): ToolVectors {
  const rows = new Int8Array(steps.length * dimension);
  const scales = new Float32Array(steps.length);
  steps.forEach((row, t) => {
    let norm = 0;
    for (let d = 0; d < dimension; d++) norm += row[d]! * row[d]!;
    if (norm === 0) return;
    rows.set(row.subarray(0, dimension), t * dimension);
    scales[t] = 1 / Math.sqrt(norm);
  });
  return { modelId, dimension, rows, scales };
}

/**
 * The tool vectors of `tools` by `embedder`, in order. An embedder that keeps int8 steps gets every text in one call
 * (it batches its own remote calls, and reads its durable store once, not once a batch).
 */
export async function embedTools(embedder: Embedder, tools: readonly ToolText[]): Promise<ToolVectors> {
  if (embedder.embedSteps) return packSteps(await embedder.embedSteps(tools.map(toolText)), embedder.dimension, embedder.modelId);
  const vectors: Float32Array[] = [];
  for (let i = 0; i < tools.length; i += EMBED_BATCH) vectors.push(...(await embedder.embed(tools.slice(i, i + EMBED_BATCH).map(toolText))));
  return quantise(vectors, embedder.dimension, embedder.modelId);
}

/**
 * The dot product of unit vector `query` with each tool of `vectors` over their first `components` components (all of
 * them: the cosine), written to `out` from `at` on. The loop is unrolled by four: this is most of the stage's cost per
 * search (20,041 tools).
 */
export function cosinesInto(vectors: ToolVectors, query: Float32Array, out: Float32Array, at: number, components = vectors.dimension): void {
  const { rows, scales, dimension } = vectors;
  const count = scales.length;
  for (let t = 0; t < count; t++) {
    const base = t * dimension;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    let d = 0;
    for (; d + 3 < components; d += 4) {
      a += query[d]! * rows[base + d]!;
      b += query[d + 1]! * rows[base + d + 1]!;
      c += query[d + 2]! * rows[base + d + 2]!;
      e += query[d + 3]! * rows[base + d + 3]!;
    }
    for (; d < components; d++) a += query[d]! * rows[base + d]!;
    out[at + t] = (a + b + c + e) * scales[t]!;
  }
}

/** The cosine of unit vector `query` with tool `tool` of `vectors`. */
export function cosineOf(vectors: ToolVectors, tool: number, query: Float32Array): number {
  const { rows, scales, dimension } = vectors;
  const base = tool * dimension;
  let dot = 0;
  for (let d = 0; d < dimension; d++) dot += query[d]! * rows[base + d]!;
  return dot * scales[tool]!;
}

/** The vectors made so far per index, by model: they live as long as the index object does. */
const made = new WeakMap<ToolIndex, Map<string, Promise<ToolVectors>>>();
let builds = 0;

/** How many sets of tool vectors this isolate has made (tests count builds across sessions by it). */
export const toolVectorBuilds = (): number => builds;

/**
 * The tool vectors of `index` by `embedder`: made at the first search that needs them, shared by every caller
 * after (and by concurrent ones), made again only after a failure.
 */
export function vectorsOf(index: ToolIndex, embedder: Embedder): Promise<ToolVectors> {
  let byModel = made.get(index);
  if (!byModel) made.set(index, (byModel = new Map()));
  const kept = byModel.get(embedder.modelId);
  if (kept) return kept;
  builds++;
  const making = embedTools(embedder, index.tools.list());
  byModel.set(embedder.modelId, making);
  making.catch(() => {
    if (byModel.get(embedder.modelId) === making) byModel.delete(embedder.modelId);
  });
  return making;
}
