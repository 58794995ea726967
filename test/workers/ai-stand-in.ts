// A stand-in of the Workers AI binding (test code only: tests cannot reach Workers AI, which has no local mode).
// `run(model, inputs)` answers `{ shape, data }` as the real binding does for its embedding models, each vector the
// static model's (loadStaticEmbedder, through the real ASSETS binding) padded with zeros to the model's dimension
// (cosines unchanged) and scaled off unit length (so the embedder's own normalising is what makes it a unit vector).
// It records every call, and answers with a fault or a malformed body when a test says so, or holds its answers
// until the test lets them go (a slow Workers AI, without a clock).
import { env } from "cloudflare:workers";
import { loadStaticEmbedder } from "../../src/catalog/embedder.ts";
import { WORKERS_AI_MODELS, type EmbeddingBinding, type WorkersAiModel } from "../../src/catalog/workers-ai-embedder.ts";

/** One call as the stand-in saw it: which input field held the texts, and the query instruction if any. */
export interface StandInCall {
  model: string;
  field: "text" | "documents" | "queries";
  texts: string[];
  instruction?: string;
}

export interface AiStandIn extends EmbeddingBinding {
  readonly calls: StandInCall[];
  /** Every text embedded so far, in order, of calls whose field is one of these (all by default). */
  texts(...fields: StandInCall["field"][]): string[];
  /** Set: every call throws it (as the binding does when Workers AI fails); with `failingCall`, only that one (1-based). */
  failWith?: Error | undefined;
  failingCall?: number | undefined;
  /** Set: every call answers this instead of vectors. */
  answerWith?: unknown;
  /** From now on every call waits (recorded at once) until the function this gives is called. */
  hold(): () => void;
}

const textsOf = (value: unknown): string[] | undefined =>
  typeof value === "string" ? [value] : Array.isArray(value) && value.every((t) => typeof t === "string") ? value : undefined;

export function aiStandIn(): AiStandIn {
  const calls: StandInCall[] = [];
  let held: Promise<void> | undefined;
  const standIn: AiStandIn = {
    hold() {
      let release = () => {};
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    calls,
    texts: (...fields) => calls.filter((c) => fields.length === 0 || fields.includes(c.field)).flatMap((c) => c.texts),
    async run(model, inputs) {
      const spec = (WORKERS_AI_MODELS as Record<string, { dimension: number; batch: number } | undefined>)[model];
      if (!spec) throw new Error(`5007: No such model ${model}`);
      const field = (["queries", "documents", "text"] as const).find((f) => inputs[f] !== undefined);
      const texts = field && textsOf(inputs[field]);
      if (!field || !texts || texts.length > spec.batch || texts.some((t) => t.length === 0)) throw new Error("3010: Invalid or incomplete input for the model");
      const instruction = typeof inputs.instruction === "string" ? inputs.instruction : undefined;
      calls.push({ model, field, texts, ...(instruction === undefined ? {} : { instruction }) });
      if (held) await held;
      if (standIn.failWith && (standIn.failingCall === undefined || standIn.failingCall === calls.length)) throw standIn.failWith;
      if (standIn.answerWith !== undefined) return standIn.answerWith;
      const embedder = await loadStaticEmbedder(env.ASSETS);
      const data = texts.map((text) => {
        const row = new Array<number>(spec.dimension).fill(0);
        embedder.embedOne(text).forEach((v, d) => (row[d] = v * 3));
        return row;
      });
      return { shape: [texts.length, spec.dimension], data };
    },
  };
  return standIn;
}

/** The stand-in's answer for `n` texts of a model, for tests that bend one part of it. */
export const answerOf = (model: WorkersAiModel, rows: number[][]): { shape: number[]; data: number[][] } => ({
  shape: [rows.length, WORKERS_AI_MODELS[model].dimension],
  data: rows,
});
