// The search's semantic stage for a session: the embedder its team's `search.semantic` names, and a query's meaning
// over the indexes searched. The static model is loaded once per isolate from the Worker's assets (a search made
// while it loads waits for it); `workers-ai` runs where the Worker has its AI binding (production) and falls back to
// the static model without one (local `wrangler dev`, tests: no login, no network), said once in the log. A stage
// that fails leaves that search to BM25F alone, said in the log: a search never fails for its semantic stage, and
// one whose remote model is slow (the first search after a catalog change embeds every tool: 627 calls at 20,041
// tools) waits at most SEMANTIC_WAIT_MS before answering by words, while the vectors go on being made for the next
// searches. A stage that failed is not tried again before SEMANTIC_RETRY_MS (every search would wait on an outage).
import type { Embedder } from "../catalog/embedder.ts";
import { loadStaticEmbedder } from "../catalog/embedder.ts";
import type { ToolIndex } from "../catalog/search.ts";
import type { QueryMeaning } from "../catalog/semantic-blend.ts";
import { vectorsOf, type ToolVectors } from "../catalog/semantic-vectors.ts";
import { queryVector } from "../catalog/cached-embedder.ts";
import type { EmbeddingBinding } from "../catalog/workers-ai-embedder.ts";
import { SEMANTIC_DEFAULT, type SemanticStage } from "../config/schema.ts";
import type { AssetsBinding } from "../lib/asset-bytes.ts";
import { log } from "../lib/log.ts";
import { teamWorkersAiEmbedder, type VectorKv } from "../store/vector-cache.ts";

/** How long a search waits for its semantic stage (the query's vector and the tools'), then answers by words alone. */
export const SEMANTIC_WAIT_MS = 1_500;
/** How long after a failed stage the searches of this isolate answer by words before the stage is tried again. */
export const SEMANTIC_RETRY_MS = 60_000;
/**
 * Components kept of Qwen3-Embedding's vectors (Matryoshka: its first 256 are a vector of their own). At 1,024 a
 * 20,041-tool catalog's int8 rows are 20 MiB a copy in a 128 MB isolate; at 256, 5 MiB (docs/architecture.md
 * "The workers-ai embedder" has the model card's word on quality).
 */
export const WORKERS_AI_DIMENSIONS = 256;

/** A session's semantic stage: which one answers, and its embedder, loaded at the first search and shared after. */
export interface SearchEmbedder {
  stage: "static" | "workers-ai";
  load: () => Promise<Embedder>;
  /**
   * Where work that outlives a search goes (the request's or object's waitUntil): the vectors a late search left
   * being made, which a Worker's request would otherwise drop once answered.
   */
  defer?: ((work: Promise<void>) => void) | undefined;
}

/**
 * What the stages are made from: the Worker's assets and, in production, its AI binding (`env.AI`, an `Ai`: only handed
 * to the embedder made over it) and that embedder's maker.
 */
export interface StageParts<A> {
  assets: AssetsBinding;
  ai?: A | undefined;
  /** The workers-ai embedder over the binding (src/catalog/workers-ai-embedder.ts), with its vector cache. */
  workersAi?: ((ai: A) => Embedder | undefined) | undefined;
}

/** Who a team's stage is made for, and where its durable cache writes go beside the answer (an object's waitUntil). */
export interface TeamStageParts {
  team: string;
  defer?: ((work: Promise<void>) => void) | undefined;
}

/**
 * A team's stage in this Worker: its config's `search.semantic`, else the deployment's SEMANTIC_DEFAULT, over the
 * Worker's assets and AI binding (workers-ai: the tool vectors kept with the index, and in KV under the team). The
 * one place sessions and the dashboard's search box make it.
 */
export function teamSearchEmbedder(
  env: { ASSETS: AssetsBinding; AI?: unknown; TEAMS: VectorKv },
  semantic: SemanticStage | undefined,
  { team, defer }: TeamStageParts,
): SearchEmbedder | undefined {
  // The binding as the embedder calls it: `Ai.run`'s overloads name every model, the embedder only its own.
  const workersAi = (ai: EmbeddingBinding) => teamWorkersAiEmbedder({ AI: ai, TEAMS: env.TEAMS }, team, { dimensions: WORKERS_AI_DIMENSIONS, keepInIsolate: false, ...(defer ? { defer } : {}) });
  const stage = searchEmbedder(semantic ?? SEMANTIC_DEFAULT, { assets: env.ASSETS, ai: env.AI as EmbeddingBinding | undefined, workersAi });
  return stage && defer ? { ...stage, defer } : stage;
}

/** Whether this isolate has said that a workers-ai team is answered by the static model (said once). */
let toldNoBinding = false;

/** The embedder `stage` names, given what this Worker has; undefined when the stage is off. */
export function searchEmbedder<A>(stage: SemanticStage, parts: StageParts<A>): SearchEmbedder | undefined {
  if (stage === "off") return undefined;
  const staticStage: SearchEmbedder = { stage: "static", load: () => loadStaticEmbedder(parts.assets) };
  if (stage === "static") return staticStage;
  const { ai, workersAi } = parts;
  const remote = ai && workersAi?.(ai);
  if (remote) return { stage: "workers-ai", load: () => Promise.resolve(remote) };
  if (!toldNoBinding) {
    toldNoBinding = true;
    const reason = ai ? "this build has no workers-ai embedder" : "this Worker has no AI binding (local wrangler dev or tests)";
    log({ event: "semantic_search", stage: "workers-ai", outcome: "static_instead", reason: `${reason}: the static model answers` });
  }
  return staticStage;
}

/** Until when (epoch ms) a model's stage is not tried, after it failed. */
const failedUntil = new Map<string, number>();
/** The tool vectors a late search has said it went on without (one line each, however many searches wait on them). */
const toldLate = new WeakSet<Promise<ToolVectors>>();

/** `work`'s value, or "late" when it takes more than `ms` (it goes on: its result is for the callers after). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | "late"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * The meaning of `query` over `indexes` (each index's tool vectors made at its first search with this embedder, then
 * kept with the index; the query in the embedder's query form, never kept), or undefined when the embedder fails or
 * (a remote one) takes more than `waitMs`: the search is then BM25F's alone. Said in one log line without the query.
 */
export async function queryMeaning(indexes: readonly ToolIndex[], query: string, embedder: SearchEmbedder, waitMs = SEMANTIC_WAIT_MS): Promise<QueryMeaning | undefined> {
  const wordsOnly = (reason: string) => log({ event: "semantic_search", stage: embedder.stage, outcome: "words_only", reason });
  try {
    const model = await embedder.load();
    if ((failedUntil.get(model.modelId) ?? 0) > Date.now()) return undefined;
    const tools = indexes.map((index) => vectorsOf(index, model));
    const making = Promise.all([queryVector(model, query), Promise.all(tools)]);
    // A failure, awaited here or after a late answer, holds the stage off for a while.
    making.catch(() => failedUntil.set(model.modelId, Date.now() + SEMANTIC_RETRY_MS));
    // The static model runs here, at most a few hundred milliseconds at 20,041 tools: only a remote one is bounded.
    const made = embedder.stage === "static" ? await making : await within(making, waitMs);
    if (made === "late") {
      if (tools.some((t) => !toldLate.has(t))) wordsOnly(`the model took over ${waitMs} ms; the vectors go on being made for later searches`);
      for (const t of tools) toldLate.add(t);
      embedder.defer?.(making.then(() => undefined, () => undefined));
      return undefined;
    }
    const [vector, vectors] = made;
    return { vector, vectors };
  } catch (err) {
    // The error's kind only: an embedder's message could quote the texts it was given.
    wordsOnly(err instanceof Error ? err.name : "failed");
    return undefined;
  }
}
