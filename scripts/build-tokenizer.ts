// `node scripts/build-tokenizer.ts`: writes assets/tokenizer/o200k_base.bin (generated, git-ignored), the table the
// Worker counts o200k_base tokens with (src/catalog/token-table.ts has its layout), from js-tiktoken's ranks, the ones
// the benchmarks count with. scripts/setup.mjs runs it when the file is missing or its build key is not that of
// the current inputs. Prints the table's size, raw and gzipped, and how far its lookups probe.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import ranks from "js-tiktoken/ranks/o200k_base";
import { O200K_PATTERN, TABLE_FORMAT, hashBytes, readTable } from "../src/catalog/token-table.ts";

const ROOT = join(import.meta.dirname, "..");
export const TABLE_PATH = join(ROOT, "assets", "tokenizer", "o200k_base.bin");

/**
 * What the table is made from, relative to the project root: this script, the reader (its layout and hash), and
 * the ranks' package. scripts/setup.mjs hashes the same files the same way; keep the two in step.
 */
export const KEY_INPUTS = ["scripts/build-tokenizer.ts", "src/catalog/token-table.ts", "node_modules/js-tiktoken/package.json"] as const;

/** sha256 over each input as `path \0 length \0 bytes`, in KEY_INPUTS order. */
export function buildKey(root = ROOT): Buffer {
  const hash = createHash("sha256");
  for (const path of KEY_INPUTS) {
    const bytes = readFileSync(join(root, path));
    hash.update(`${path}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest();
}

/** js-tiktoken's `bpe_ranks`: lines of `<name> <first rank> <base64 token>…`, ranks consecutive within a line. */
export function decodeRanks(bpeRanks: string): Uint8Array[] {
  const tokens: Uint8Array[] = [];
  for (const line of bpeRanks.split("\n")) {
    if (!line) continue;
    const [, first, ...encoded] = line.split(" ");
    const start = Number(first);
    if (!Number.isInteger(start)) throw new Error(`bpe_ranks: a line starts at rank "${first}"`);
    encoded.forEach((token, i) => {
      if (tokens[start + i] !== undefined) throw new Error(`bpe_ranks: rank ${start + i} given twice`);
      tokens[start + i] = new Uint8Array(Buffer.from(token, "base64"));
    });
  }
  for (let r = 0; r < tokens.length; r++) if (tokens[r] === undefined) throw new Error(`bpe_ranks: rank ${r} missing`);
  return tokens;
}

export interface TableStats {
  bytes: number;
  gzipBytes: number;
  tokens: number;
  slots: number;
  /** Probes of a lookup that finds its token: mean over all tokens, and the most. */
  meanProbes: number;
  maxProbes: number;
}

/** The table's bytes for tokens in rank order (the layout is in src/catalog/token-table.ts). */
export function buildTable(tokens: readonly Uint8Array[], key: Uint8Array): { table: Uint8Array; stats: TableStats } {
  const f = TABLE_FORMAT;
  const n = tokens.length;
  const seen = new Set<string>();
  for (const t of tokens) {
    const id = Buffer.from(t).toString("latin1");
    if (t.length === 0 || seen.has(id)) throw new Error("ranks: an empty or repeated token");
    seen.add(id);
  }
  // The reader counts a one-byte piece as one token without looking: every byte must be one.
  for (let b = 0; b < 256; b++) if (!seen.has(String.fromCharCode(b))) throw new Error(`ranks: byte ${b} is not a token`);
  // Load at most 0.8, and the home slot (low bits) must not overlap the fingerprint (high bits).
  const slotBits = Math.ceil(Math.log2(n / 0.8));
  if (slotBits > f.rankBits || n + 1 > 2 ** f.rankBits - 1) throw new Error(`${n} tokens do not fit the format`);
  const pattern = new TextEncoder().encode(O200K_PATTERN);
  const byteCount = tokens.reduce((sum, t) => sum + t.length, 0);
  const offsetsAt = f.fixedHeaderBytes + ((pattern.length + 3) & ~3);
  const slotsAt = offsetsAt + 4 * (n + 1);
  const bytesAt = slotsAt + 4 * 2 ** slotBits;
  const table = new Uint8Array(bytesAt + byteCount);
  const words = new Uint32Array(table.buffer, 0, f.fixedHeaderBytes / 4);
  table.set(new TextEncoder().encode(f.magic), 0);
  words[1] = f.version;
  words[2] = n;
  words[3] = byteCount;
  words[4] = slotBits;
  words[5] = pattern.length;
  table.set(new TextEncoder().encode(f.encoding), f.nameOffset);
  table.set(key.subarray(0, f.keyBytes), f.keyOffset);
  table.set(pattern, f.fixedHeaderBytes);
  const offsets = new Uint32Array(table.buffer, offsetsAt, n + 1);
  const slots = new Uint32Array(table.buffer, slotsAt, 2 ** slotBits);
  const mask = slots.length - 1;
  let at = 0;
  let probes = 0;
  let maxProbes = 0;
  // In rank order: the commonest tokens (lowest ranks) get the shortest probes.
  tokens.forEach((token, rank) => {
    offsets[rank] = at;
    table.set(token, bytesAt + at);
    at += token.length;
    const h = hashBytes(token, 0, token.length);
    let i = h & mask;
    let probe = 1;
    while (slots[i] !== 0) {
      i = (i + 1) & mask;
      probe++;
    }
    slots[i] = (((h >>> f.rankBits) << f.rankBits) | (rank + 1)) >>> 0;
    probes += probe;
    maxProbes = Math.max(maxProbes, probe);
  });
  offsets[n] = at;
  readTable(table);
  const stats = {
    bytes: table.length,
    gzipBytes: gzipSync(table, { level: 9 }).length,
    tokens: n,
    slots: slots.length,
    meanProbes: Math.round((probes / n) * 100) / 100,
    maxProbes,
  };
  return { table, stats };
}

/** Builds the table from the installed js-tiktoken and writes it (through a temporary file, so readers never see half). */
export function writeTable(path = TABLE_PATH): TableStats {
  if (ranks.pat_str !== O200K_PATTERN) {
    throw new Error("js-tiktoken's o200k_base pattern is not src/catalog/token-table.ts's O200K_PATTERN: update the constant");
  }
  const { table, stats } = buildTable(decodeRanks(ranks.bpe_ranks), buildKey());
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, table);
  renameSync(temporary, path);
  return stats;
}

if (import.meta.main) {
  const s = writeTable();
  const kib = (n: number) => (n / 1024).toFixed(1);
  console.log(
    `tokenizer: wrote assets/tokenizer/o200k_base.bin, ${kib(s.bytes)} KiB (gzip ${kib(s.gzipBytes)} KiB): ` +
      `${s.tokens} tokens in ${s.slots} slots, ${s.meanProbes} probes per hit on average, at most ${s.maxProbes}`,
  );
}
