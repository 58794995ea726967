// Pure: the static embedding model's table, built ahead of time by scripts/build-embedder.ts (which writes this layout)
// from a Model2Vec model and served through the static-assets binding. Reading it only checks the header and the
// section sizes and wraps the sections in typed arrays (no copy, no per-piece work): the vocabulary is looked up in
// place, through a hash table of its own, by the UTF-8 bytes of a piece.
//
// The table (numbers u32, little-endian; sections 4-byte aligned):
//   0   magic "dmem"        4   format version       8   rows N (the vocabulary's size)     12  dimension D
//   16  vocabulary bytes V  20  the [UNK] row        24  max characters of a word (WordPiece)  28  slot bits S
//   32  model id, 32 bytes UTF-8, zero-padded
//   64  offsets: N + 1 u32 (piece r is vocabulary[offsets[r] .. offsets[r + 1]), UTF-8, continuations with "##")
//   then slots: 2^S u32, open addressing with linear probing over hashBytes (token-table.ts); 0 empty, else row + 1
//   then the vocabulary, V bytes, zero-padded to 4
//   then the rows: N × D signed bytes, row r at r × D; the file ends there.
// The rows keep the model's int8 values as they are: Model2Vec's int8 mode drops its one global scale, and a cosine
// does not depend on it.
import { hashBytes } from "./token-table.ts";

export const EMBEDDING_FORMAT = {
  magic: "dmem",
  version: 2,
  headerBytes: 64,
  modelIdOffset: 32,
  modelIdBytes: 32,
} as const;

/** The table's parts, as views over its bytes. */
export interface EmbeddingTable {
  modelId: string;
  dimension: number;
  rowCount: number;
  rows: Int8Array;
  unknownRow: number;
  maxWordChars: number;
  /** The row of the piece whose UTF-8 is bytes[start, end) (`##` first for a continuation), or -1. */
  find(bytes: Uint8Array, start: number, end: number): number;
  /** The piece of a row, as text (for tests and reports). */
  pieceOf(row: number): string;
}

/** What the builder writes: the header's numbers, the vocabulary in row order and the rows. */
export interface EmbeddingTableParts {
  modelId: string;
  dimension: number;
  pieces: readonly string[];
  rows: Int8Array;
  unknownRow: number;
  maxWordChars: number;
}

const padded4 = (n: number) => (n + 3) & ~3;

function refuse(why: string): never {
  throw new Error(`embedding table refused: ${why}; rebuild it with \`node scripts/build-embedder.ts\``);
}

/** Section offsets of a table of `rowCount` pieces, `slotBits` and `vocabularyBytes`. */
function sections(rowCount: number, slotBits: number, vocabularyBytes: number) {
  const slotsAt = EMBEDDING_FORMAT.headerBytes + 4 * (rowCount + 1);
  const vocabularyAt = slotsAt + 4 * 2 ** slotBits;
  const rowsAt = vocabularyAt + padded4(vocabularyBytes);
  return { slotsAt, vocabularyAt, rowsAt };
}

/** The table's bytes (the inverse of readEmbeddingTable). */
export function writeEmbeddingTable(parts: EmbeddingTableParts): Uint8Array {
  const f = EMBEDDING_FORMAT;
  const n = parts.pieces.length;
  if (parts.rows.length !== n * parts.dimension) throw new Error(`${parts.rows.length} values are not ${n} rows of ${parts.dimension}`);
  const encoded = parts.pieces.map((p) => new TextEncoder().encode(p));
  if (encoded.some((p) => p.length === 0)) throw new Error("a word piece is empty");
  if (new Set(parts.pieces).size !== n) throw new Error("a word piece is given twice");
  const vocabularyBytes = encoded.reduce((k, p) => k + p.length, 0);
  // Load at most one half: a miss (most WordPiece lookups) probes until an empty slot.
  const slotBits = Math.max(4, Math.ceil(Math.log2(2 * n)));
  const { slotsAt, vocabularyAt, rowsAt } = sections(n, slotBits, vocabularyBytes);
  const modelId = new TextEncoder().encode(parts.modelId);
  if (modelId.length > f.modelIdBytes) throw new Error(`model id "${parts.modelId}" is longer than ${f.modelIdBytes} bytes`);
  const table = new Uint8Array(rowsAt + parts.rows.length);
  table.set(new TextEncoder().encode(f.magic), 0);
  new Uint32Array(table.buffer, 0, 8).set([f.version, n, parts.dimension, vocabularyBytes, parts.unknownRow, parts.maxWordChars, slotBits], 1);
  table.set(modelId, f.modelIdOffset);
  const offsets = new Uint32Array(table.buffer, f.headerBytes, n + 1);
  const slots = new Uint32Array(table.buffer, slotsAt, 2 ** slotBits);
  let at = 0;
  encoded.forEach((piece, row) => {
    offsets[row] = at;
    table.set(piece, vocabularyAt + at);
    at += piece.length;
    let slot = hashBytes(piece, 0, piece.length) & (slots.length - 1);
    while (slots[slot] !== 0) slot = (slot + 1) & (slots.length - 1);
    slots[slot] = row + 1;
  });
  offsets[n] = at;
  table.set(new Uint8Array(parts.rows.buffer, parts.rows.byteOffset, parts.rows.length), rowsAt);
  return table;
}

/** Checks the header and the section sizes (O(1): the vocabulary and rows are trusted, they ship with the Worker). */
export function readEmbeddingTable(input: ArrayBuffer | Uint8Array): EmbeddingTable {
  let raw = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (raw.byteOffset % 4 !== 0) raw = raw.slice();
  const f = EMBEDDING_FORMAT;
  if (raw.byteLength < f.headerBytes) refuse(`${raw.byteLength} bytes is shorter than its header`);
  if (String.fromCharCode(...raw.subarray(0, 4)) !== f.magic) refuse(`it does not start with "${f.magic}" (not an embedding table)`);
  const [, version, rowCount, dimension, vocabularyBytes, unknownRow, maxWordChars, slotBits] = new Uint32Array(raw.buffer, raw.byteOffset, 8);
  if (version !== f.version) refuse(`format version ${version}, this build reads version ${f.version}`);
  if (!rowCount || !dimension || unknownRow! >= rowCount || !maxWordChars || slotBits! > 24 || 2 ** slotBits! <= rowCount) {
    refuse("its header's numbers are out of range (corrupt)");
  }
  const { slotsAt, vocabularyAt, rowsAt } = sections(rowCount, slotBits!, vocabularyBytes!);
  const size = rowsAt + rowCount * dimension;
  if (raw.byteLength !== size) refuse(`it is ${raw.byteLength} bytes, its header says ${size} (truncated or corrupt)`);
  const offsets = new Uint32Array(raw.buffer, raw.byteOffset + f.headerBytes, rowCount + 1);
  if (offsets[0] !== 0 || offsets[rowCount] !== vocabularyBytes) refuse("its offsets do not span its vocabulary (corrupt)");
  const slots = new Uint32Array(raw.buffer, raw.byteOffset + slotsAt, 2 ** slotBits!);
  const vocabulary = raw.subarray(vocabularyAt, vocabularyAt + vocabularyBytes!);
  const mask = slots.length - 1;
  const find = (bytes: Uint8Array, start: number, end: number): number => {
    const length = end - start;
    for (let slot = hashBytes(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return -1;
      const from = offsets[entry - 1]!;
      if (offsets[entry]! - from !== length) continue;
      let i = 0;
      while (i < length && vocabulary[from + i] === bytes[start + i]) i++;
      if (i === length) return entry - 1;
    }
  };
  const id = raw.subarray(f.modelIdOffset, f.modelIdOffset + f.modelIdBytes);
  return {
    modelId: new TextDecoder().decode(id).replace(/\0+$/, ""),
    dimension,
    rowCount,
    rows: new Int8Array(raw.buffer, raw.byteOffset + rowsAt, rowCount * dimension),
    unknownRow: unknownRow!,
    maxWordChars: maxWordChars!,
    find,
    pieceOf: (row) => new TextDecoder().decode(vocabulary.subarray(offsets[row], offsets[row + 1])),
  };
}
