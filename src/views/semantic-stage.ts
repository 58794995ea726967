// The search's semantic stage for a session: the embedder its team's `search.semantic` names, and a query's meaning
// over the indexes searched. The static model is loaded once per isolate from the Worker's assets (a search made
// while it loads waits for it); `workers-ai` runs where the Worker has its AI binding (production) and falls back to
// the static model without one (local `wrangler dev`, tests: no login, no network), said once in the log. A stage
// that fails leaves that search to BM25F alone, said in the log: a search never fails for its semantic stage.
import type { Embedder } from "../catalog/embedder.ts";
import { loadStaticEmbedder } from "../catalog/embedder.ts";
import type { ToolIndex } from "../catalog/search.ts";
import type { QueryMeaning } from "../catalog/semantic-blend.ts";
import { vectorsOf } from "../catalog/semantic-vectors.ts";
import { SEMANTIC_DEFAULT, type SemanticStage } from "../config/schema.ts";
import type { AssetsBinding } from "../lib/asset-bytes.ts";
import { log } from "../lib/log.ts";

/** A session's semantic stage: which one answers, and its embedder, loaded at the first search and shared after. */
export interface SearchEmbedder {
  stage: "static" | "workers-ai";
  load: () => Promise<Embedder>;
}

/**
 * What the stages are made from: the Worker's assets and, in production, its AI binding (`env.AI`, an `Ai`: only handed
 * to the embedder made over it) and that embedder's maker.
 */
export interface StageParts<A> {
  assets: AssetsBinding;
  ai?: A | undefined;
  /** The workers-ai embedder over the binding (src/catalog/workers-ai-embedder.ts), with its vector cache. */
  workersAi?: ((ai: A) => Embedder) | undefined;
}

/**
 * A team's stage in this Worker: its config's `search.semantic`, else the deployment's SEMANTIC_DEFAULT, over the
 * Worker's assets and AI binding. The one place sessions and the dashboard's search box make it.
 */
export const teamSearchEmbedder = <A>(env: { ASSETS: AssetsBinding; AI?: A | undefined }, semantic: SemanticStage | undefined): SearchEmbedder | undefined =>
  searchEmbedder(semantic ?? SEMANTIC_DEFAULT, { assets: env.ASSETS, ai: env.AI });

/** Whether this isolate has said that a workers-ai team is answered by the static model (said once). */
let toldNoBinding = false;

/** The embedder `stage` names, given what this Worker has; undefined when the stage is off. */
export function searchEmbedder<A>(stage: SemanticStage, parts: StageParts<A>): SearchEmbedder | undefined {
  if (stage === "off") return undefined;
  const staticStage: SearchEmbedder = { stage: "static", load: () => loadStaticEmbedder(parts.assets) };
  if (stage === "static") return staticStage;
  const { ai, workersAi } = parts;
  if (ai && workersAi) {
    const remote = workersAi(ai);
    return { stage: "workers-ai", load: () => Promise.resolve(remote) };
  }
  if (!toldNoBinding) {
    toldNoBinding = true;
    const reason = ai ? "this build has no workers-ai embedder" : "this Worker has no AI binding (local wrangler dev or tests)";
    log({ event: "semantic_search", stage: "workers-ai", outcome: "static_instead", reason: `${reason}: the static model answers` });
  }
  return staticStage;
}

/**
 * The meaning of `query` over `indexes` (each index's tool vectors made at its first search with this embedder, then
 * kept with the index), or undefined when the embedder fails: the search is then BM25F's alone.
 */
export async function queryMeaning(indexes: readonly ToolIndex[], query: string, embedder: SearchEmbedder): Promise<QueryMeaning | undefined> {
  try {
    const model = await embedder.load();
    const [[vector], vectors] = await Promise.all([model.embed([query]), Promise.all(indexes.map((index) => vectorsOf(index, model)))]);
    return vector ? { vector, vectors } : undefined;
  } catch (err) {
    // The error's kind only: an embedder's message could quote the texts it was given.
    log({ event: "semantic_search", stage: embedder.stage, outcome: "words_only", reason: err instanceof Error ? err.name : "failed" });
    return undefined;
  }
}
