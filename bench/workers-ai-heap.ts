// The workers-ai stage's memory at 20,041 tools (the scale bench's team: the corpus and its copies), in Node: the
// tool vectors as the search makes them through the cached embedder, with a stand-in of the Workers AI binding backed
// by the static model (padded to Qwen3's 1,024 components, as test/workers/ai-stand-in.ts does; Workers AI cannot be
// reached from here). Per dimension: what stays held after a full collection (JS heap and array buffers), with the
// isolate's vector cache keeping its own copy (as before) and without (as the search's embedder now does).
// `node_modules/.bin/node bench/workers-ai-heap.ts <dimensions> <keep|drop>` (one case a process; prints, writes nothing).
import { readFileSync } from "node:fs";
import { EMBEDDING_TABLE_PATH } from "../scripts/build-embedder.ts";
import { cachedEmbedder, createIsolateVectors } from "../src/catalog/cached-embedder.ts";
import { staticEmbedder } from "../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../src/catalog/embedding-table.ts";
import { embedTools, type ToolText } from "../src/catalog/semantic-vectors.ts";
import { WORKERS_AI_MODELS, workersAiEmbedder, type EmbeddingBinding } from "../src/catalog/workers-ai-embedder.ts";
import { collectGarbage } from "./lib/collect.ts";
import { corpusUpstreams, syntheticCopies } from "./selection.ts";

const TOOLS = 20_041;
const model = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
const qwen = WORKERS_AI_MODELS["@cf/qwen/qwen3-embedding-0.6b"];

/** The binding's stand-in: the static model's vector in the first 128 of 1,024 components. */
const standIn: EmbeddingBinding = {
  run: async (_model, inputs) => {
    const texts = (inputs["documents"] ?? inputs["queries"]) as string[];
    const data = texts.map((text) => {
      const row = new Array<number>(qwen.dimension).fill(0);
      model.embedOne(text).forEach((v, d) => (row[d] = v));
      return row;
    });
    return { shape: [texts.length, qwen.dimension], data };
  },
};

const corpus = corpusUpstreams();
const tools: ToolText[] = [...corpus, ...syntheticCopies(corpus, TOOLS)]
  .flatMap((u) => u.tools.map((t) => ({ name: `${u.name}/${t.name}`, server: u.name, line: (t.description ?? "").split(". ")[0]! })))
  .slice(0, TOOLS);

/** What stays held after full collections (buffers are freed by their finalisers: a turn between two). */
const held = async () => {
  collectGarbage!();
  await new Promise((resolve) => setTimeout(resolve, 50));
  collectGarbage!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
};
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

if (!collectGarbage) throw new Error("no gc: run with node 22 (bench/lib/collect.ts)");
const dimensions = Number(process.argv[2] ?? 256);
const keepInIsolate = process.argv[3] === "keep";
const isolate = createIsolateVectors();
const before = await held();
const t = performance.now();
const vectors = await embedTools(cachedEmbedder(workersAiEmbedder(standIn, { dimensions }), undefined, { isolate, keepInIsolate }), tools);
const ms = performance.now() - t;
const after = await held();
console.log(
  `${tools.length} tools, ${dimensions} dimensions, the isolate cache ${keepInIsolate ? "keeps" : "does not keep"} a copy: ` +
    `held ${mib(after.heap - before.heap)} MiB heap + ${mib(after.buffers - before.buffers)} MiB buffers ` +
    `(tool vectors ${mib(vectors.rows.byteLength + vectors.scales.byteLength)} MiB, isolate cache ${isolate.kept.size} vectors), made in ${(ms / 1000).toFixed(1)} s`,
);
