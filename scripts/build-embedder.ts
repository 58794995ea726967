// `node scripts/build-embedder.ts`: writes assets/embedder/potion-base-4m-int8.bin (kept in git: a clone has no
// ../shared to build it from), the static embedder's table (src/catalog/embedding-table.ts has its layout), from
// ../shared/models/potion-base-4m-int8/ (model.safetensors: the int8 rows; tokenizer.json: the WordPiece vocabulary
// and its settings), with the model's licence beside it. Refuses a model whose files are not the ones its SOURCE.md
// names, or a tokenizer other than the uncased BERT WordPiece the Worker's tokenizer implements. Prints the sizes.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import * as z from "zod";
import { readEmbeddingTable, writeEmbeddingTable } from "../src/catalog/embedding-table.ts";

const ROOT = join(import.meta.dirname, "..");
export const MODEL_DIR = join(ROOT, "..", "shared", "models", "potion-base-4m-int8");
export const EMBEDDER_DIR = join(ROOT, "assets", "embedder");
export const EMBEDDING_TABLE_PATH = join(EMBEDDER_DIR, "potion-base-4m-int8.bin");
export const MODEL_ID = "potion-base-4M-int8";

/** sha256 of the two files the table is made from, as ../shared's SOURCE.md gives them. */
const EXPECTED_SHA256 = {
  "model.safetensors": "48003d10a1f686321e4e79f5f306fe1fcf1d2b883a90785c939563a506bb89be",
  "tokenizer.json": "2b450d39e4f10fbced1417d55fd2ba63fe4a7eea561467a06a91c3a4537995c9",
} as const;

/** The parts of tokenizer.json the Worker's tokenizer depends on: anything else is refused, not silently ignored. */
const TokenizerJson = z.object({
  normalizer: z.object({
    type: z.literal("BertNormalizer"),
    clean_text: z.literal(true),
    handle_chinese_chars: z.literal(true),
    strip_accents: z.null(),
    lowercase: z.literal(true),
  }),
  pre_tokenizer: z.object({ type: z.literal("BertPreTokenizer") }),
  model: z.object({
    type: z.literal("WordPiece"),
    unk_token: z.string(),
    continuing_subword_prefix: z.literal("##"),
    max_input_chars_per_word: z.number().int().positive(),
    vocab: z.record(z.string(), z.number().int().nonnegative()),
  }),
});

const SafetensorsHeader = z.object({
  embeddings: z.object({ dtype: z.literal("I8"), shape: z.tuple([z.number().int(), z.number().int()]), data_offsets: z.tuple([z.number().int(), z.number().int()]) }),
});

function readVerified(name: keyof typeof EXPECTED_SHA256, dir: string): Buffer {
  const bytes = readFileSync(join(dir, name));
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== EXPECTED_SHA256[name]) throw new Error(`${name}: sha256 ${sha}, not the ${EXPECTED_SHA256[name]} its SOURCE.md names`);
  return bytes;
}

/** The table's bytes from the model's folder. */
export function buildEmbeddingTable(dir = MODEL_DIR): Uint8Array {
  const tokenizer = TokenizerJson.parse(JSON.parse(readVerified("tokenizer.json", dir).toString("utf8")));
  const model = readVerified("model.safetensors", dir);
  const headerLength = Number(model.readBigUInt64LE(0));
  const header = SafetensorsHeader.parse(JSON.parse(model.subarray(8, 8 + headerLength).toString("utf8")));
  const [rowCount, dimension] = header.embeddings.shape;
  const [from, to] = header.embeddings.data_offsets;
  if (to - from !== rowCount * dimension) throw new Error(`safetensors: ${to - from} bytes for ${rowCount} × ${dimension}`);
  const start = 8 + headerLength + from;
  const rows = new Int8Array(model.buffer.slice(model.byteOffset + start, model.byteOffset + start + rowCount * dimension));
  const pieces: string[] = [];
  for (const [piece, id] of Object.entries(tokenizer.model.vocab)) {
    if (pieces[id] !== undefined) throw new Error(`tokenizer.json: id ${id} given twice`);
    pieces[id] = piece;
  }
  if (pieces.length !== rowCount || pieces.some((p) => p === undefined)) throw new Error(`tokenizer.json: ids are not 0..${rowCount - 1}`);
  const unknownRow = tokenizer.model.vocab[tokenizer.model.unk_token];
  if (unknownRow === undefined) throw new Error(`tokenizer.json: the unknown token ${tokenizer.model.unk_token} is not in the vocabulary`);
  const table = writeEmbeddingTable({ modelId: MODEL_ID, dimension, pieces, rows, unknownRow, maxWordChars: tokenizer.model.max_input_chars_per_word });
  readEmbeddingTable(table);
  return table;
}

/** Writes the table (through a temporary file) and the licence; the sizes, raw and gzipped. */
export function writeEmbedder(dir = MODEL_DIR): { bytes: number; gzipBytes: number } {
  const table = buildEmbeddingTable(dir);
  mkdirSync(EMBEDDER_DIR, { recursive: true });
  const temporary = `${EMBEDDING_TABLE_PATH}.${process.pid}.tmp`;
  writeFileSync(temporary, table);
  renameSync(temporary, EMBEDDING_TABLE_PATH);
  // Its bytes, not its mode: ../shared is read-only.
  writeFileSync(join(EMBEDDER_DIR, "LICENSE"), readFileSync(join(dir, "LICENSE.semhash")));
  return { bytes: table.length, gzipBytes: gzipSync(table, { level: 9 }).length };
}

if (import.meta.main) {
  const s = writeEmbedder();
  const kib = (n: number) => (n / 1024).toFixed(1);
  console.log(`embedder: wrote assets/embedder/potion-base-4m-int8.bin, ${kib(s.bytes)} KiB (gzip ${kib(s.gzipBytes)} KiB)`);
}
