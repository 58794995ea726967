// The workers-ai embedder: the search's semantic stage over the Workers AI binding (`env.AI`, declared only in
// wrangler.toml's [env.production]). Texts go in batches within the model's published limits, a few calls at a
// time; every answer is checked (one vector per text, of the model's dimension, finite numbers) and L2-normalised
// here, whatever the service did. A failed or malformed answer is an `EmbedderError`, whose words never hold a text
// it was asked to embed (a tool's description, a user's query). Nothing is cached here: cached-embedder.ts does that.
//
// The model (docs/architecture.md "The workers-ai embedder" has the figures and their sources): Qwen3-Embedding-0.6B,
// by its published retrieval quality (MMTEB retrieval 64.64 against BGE-M3's 54.60, the Qwen3 model card's table) at
// the same price ($0.012 per million input tokens on Workers AI; bge-m3 $0.0118, bge-base-en-v1.5 $0.067).
import * as z from "zod";
import { EmbedderError } from "../lib/errors.ts";
import { unitVector, type Embedder } from "./embedder.ts";

/** What the embedder calls on the Workers AI binding: `env.AI` is one, tests pass a stand-in. */
export interface EmbeddingBinding {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

type Role = "document" | "query";

/** One Workers AI embedding model as its input schema and model page publish it (cloudflare-docs, workers-ai-models). */
interface ModelSpec {
  dimension: number;
  /** Texts per call: the input schema's `maxItems`. */
  batch: number;
  /** Characters of one text sent at most: a tool is known by its opening, and the model's window is in tokens. */
  textChars: number;
  /** Characters of one call at most, well within the model's window (about four characters a token in English). */
  callChars: number;
  /** Trained so that a vector's first k components are a vector of their own (a smaller dimension may be asked). */
  matryoshka: boolean;
  /** One call's input: texts to be found, or the queries that look for them. */
  input(texts: string[], role: Role): Record<string, unknown>;
}

/**
 * Qwen3's queries carry an instruction saying what they look for (its model card: 1-5% better retrieval than none);
 * the texts searched carry none. Workers AI's default instruction is a web search's, so this names the task.
 */
export const QWEN3_QUERY_INSTRUCTION = "Given what an agent wants done, retrieve the tool descriptions that do it";
/** BGE v1.5's prefix for short queries matched against passages (its model card). */
const BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: ";

export const WORKERS_AI_MODELS = {
  "@cf/qwen/qwen3-embedding-0.6b": {
    dimension: 1024,
    batch: 32,
    textChars: 2_000,
    callChars: 24_000,
    matryoshka: true,
    input: (texts, role) => (role === "query" ? { queries: texts, instruction: QWEN3_QUERY_INSTRUCTION } : { documents: texts }),
  },
  "@cf/baai/bge-m3": {
    dimension: 1024,
    batch: 100,
    textChars: 2_000,
    callChars: 100_000,
    matryoshka: false,
    input: (texts) => ({ text: texts, truncate_inputs: true }),
  },
  "@cf/baai/bge-base-en-v1.5": {
    dimension: 768,
    batch: 100,
    // Its limit is 512 tokens a text.
    textChars: 1_500,
    callChars: 150_000,
    matryoshka: false,
    // `cls` pooling: the model page calls it the more accurate (its vectors never compare with `mean`'s).
    input: (texts, role) => ({ text: role === "query" ? texts.map((t) => BGE_QUERY_PREFIX + t) : texts, pooling: "cls" }),
  },
} as const satisfies Record<string, ModelSpec>;

export type WorkersAiModel = keyof typeof WORKERS_AI_MODELS;

export const DEFAULT_WORKERS_AI_MODEL: WorkersAiModel = "@cf/qwen/qwen3-embedding-0.6b";

export interface WorkersAiEmbedderOptions {
  model?: WorkersAiModel;
  /**
   * Components kept of a Matryoshka model's vectors (then normalised again): fewer bytes to keep per tool, a little
   * less quality. The model's whole dimension by default.
   */
  dimensions?: number;
  /** Calls in flight at once (default 4: a Worker has six connections open at most). */
  concurrency?: number;
}

/** One call's answer, as every one of these models gives it. */
const EmbeddingAnswer = z.object({ shape: z.array(z.number()).optional(), data: z.array(z.array(z.number())) });

/** The embedder over the binding. Its `modelId` names the model and the dimension: vectors of two never compare. */
export function workersAiEmbedder(ai: EmbeddingBinding, options: WorkersAiEmbedderOptions = {}): Embedder {
  const model = options.model ?? DEFAULT_WORKERS_AI_MODEL;
  const spec: ModelSpec = WORKERS_AI_MODELS[model];
  const dimension = options.dimensions ?? spec.dimension;
  if (!Number.isInteger(dimension) || dimension < 32 || dimension > spec.dimension || (dimension !== spec.dimension && !spec.matryoshka)) {
    throw new RangeError(`${model} gives ${spec.matryoshka ? `32 to ${spec.dimension}` : spec.dimension} dimensions, not ${options.dimensions}`);
  }
  const modelId = `workers-ai/${model}${dimension === spec.dimension ? "" : `@${dimension}`}`;
  const concurrency = Math.max(1, options.concurrency ?? 4);

  async function call(texts: string[], role: Role): Promise<Float32Array[]> {
    let answer: unknown;
    try {
      answer = await ai.run(model, spec.input(texts, role));
    } catch (err) {
      throw new EmbedderError("embedder_failed", model, `Workers AI ${model} failed${errorCode(err)}`);
    }
    const parsed = EmbeddingAnswer.safeParse(answer);
    if (!parsed.success) throw new EmbedderError("embedder_malformed", model, `Workers AI ${model} answered no list of vectors`);
    const rows = parsed.data.data;
    if (rows.length !== texts.length) {
      throw new EmbedderError("embedder_malformed", model, `Workers AI ${model} answered ${rows.length} vectors for ${texts.length} texts`);
    }
    return rows.map((row) => {
      if (row.length !== spec.dimension) {
        throw new EmbedderError("embedder_malformed", model, `Workers AI ${model} answered a vector of ${row.length} dimensions, not ${spec.dimension}`);
      }
      return unitVector(row, dimension);
    });
  }

  async function embedAll(texts: readonly string[], role: Role): Promise<Float32Array[]> {
    const out: Float32Array[] = texts.map(() => new Float32Array(dimension));
    // A text with nothing in it is similar to nothing (the models refuse an empty one).
    const sent = texts.flatMap((text, at) => {
      const cut = text.trim().slice(0, spec.textChars);
      return cut === "" ? [] : [{ at, text: cut }];
    });
    const batches = batchesOf(sent, spec.batch, spec.callChars);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        try {
          const vectors = await call(batch.map((b) => b.text), role);
          batch.forEach((b, i) => (out[b.at] = vectors[i]!));
        } catch (err) {
          // One failed call fails them all: the others take no more batches.
          next = batches.length;
          throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    return out;
  }

  return {
    modelId,
    dimension,
    embed: (texts) => embedAll(texts, "document"),
    embedQuery: async (text) => (await embedAll([text], "query"))[0]!,
  };
}

/** Consecutive batches of at most `size` texts and `chars` characters (a longer text goes alone). */
export function batchesOf<T extends { text: string }>(items: readonly T[], size: number, chars: number): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let length = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length === size || length + item.text.length > chars)) {
      batches.push(current);
      [current, length] = [[], 0];
    }
    current.push(item);
    length += item.text.length;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Workers AI's error number (`3040: Capacity temporarily exceeded`), the only part of its message kept: the rest may
 * quote the input.
 */
function errorCode(err: unknown): string {
  const code = /\b(\d{4}):/.exec(err instanceof Error ? err.message : "")?.[1];
  return code === undefined ? "" : ` (error ${code})`;
}
