// Pure: the o200k_base token table the Worker counts with, built ahead of time by scripts/build-tokenizer.ts (which
// writes this layout) and served through the static-assets binding. Reading it only checks the header and wraps the
// sections in typed arrays; a table of another version, encoding or pattern, or of the wrong size, is refused with a
// message saying how to rebuild it.
//
// The table (all numbers u32, little-endian, every section 4-byte aligned):
//   0   magic "dmtk"                 4   format version            8   token count N       12  token bytes B
//   16  slot bits S (2^S slots)      20  pattern length P (UTF-8)   24  encoding name, 16 bytes, zero-padded
//   40  build key, 32 bytes (sha256 of the build's inputs; scripts/setup.mjs compares it to rebuild a stale table)
//   72  the pre-tokenizer pattern, P bytes, zero-padded to a multiple of 4
//   then offsets: N + 1 u32 (token r is bytes[offsets[r] .. offsets[r + 1]), tokens in rank order)
//   then slots: 2^S u32, open addressing with linear probing; 0 is empty, else (fingerprint << 18) | (rank + 1),
//        the fingerprint being the top 14 bits of the token's hash, its home slot the low S bits (S ≤ 18)
//   then the token bytes, B bytes, concatenated in rank order; the file ends there.

/** o200k_base's pre-tokenizer, the pattern js-tiktoken compiles with flags "gu" (its `pat_str`). */
export const O200K_PATTERN = String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** The table's layout constants, shared with scripts/build-tokenizer.ts, which writes it. */
export const TABLE_FORMAT = {
  magic: "dmtk",
  version: 1,
  encoding: "o200k_base",
  /** Bytes before the pattern. */
  fixedHeaderBytes: 72,
  nameOffset: 24,
  nameBytes: 16,
  keyOffset: 40,
  keyBytes: 32,
  /** Low bits of a slot: rank + 1. The rest: the fingerprint. */
  rankBits: 18,
} as const;

/** The rank bits of a slot. */
export const RANK_MASK = (1 << TABLE_FORMAT.rankBits) - 1;

/**
 * FNV-1a over bytes[start, end), then murmur3's 32-bit finalizer, so that both the low bits (the home slot) and the
 * high bits (the fingerprint) depend on every byte.
 */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The table's sections as typed-array views over its bytes (no copy, unless the bytes are not 4-byte aligned). */
export interface TokenTable {
  tokenCount: number;
  offsets: Uint32Array;
  slots: Uint32Array;
  bytes: Uint8Array;
  /** Hex of the build key in the header. */
  buildKey: string;
}

const padded4 = (n: number) => (n + 3) & ~3;
const ascii = (bytes: Uint8Array) => String.fromCharCode(...bytes);

function refuse(why: string): never {
  throw new Error(`tokenizer table refused: ${why}; rebuild it with \`node scripts/build-tokenizer.ts\` (npm test and npm run dev do when it is missing or stale)`);
}

/** Checks the header and the section sizes (O(1): the token data itself is trusted, it ships with the Worker). */
export function readTable(input: ArrayBuffer | Uint8Array): TokenTable {
  let raw = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (raw.byteOffset % 4 !== 0) raw = raw.slice();
  const f = TABLE_FORMAT;
  if (raw.byteLength < f.fixedHeaderBytes) refuse(`${raw.byteLength} bytes is shorter than its header`);
  if (ascii(raw.subarray(0, 4)) !== f.magic) refuse(`it does not start with "${f.magic}" (not a token table)`);
  const head = new Uint32Array(raw.buffer, raw.byteOffset, f.fixedHeaderBytes / 4);
  const version = head[1]!;
  const tokenCount = head[2]!;
  const byteCount = head[3]!;
  const slotBits = head[4]!;
  const patternLength = head[5]!;
  if (version !== f.version) refuse(`format version ${version}, this build reads version ${f.version}`);
  const name = ascii(raw.subarray(f.nameOffset, f.nameOffset + f.nameBytes)).replace(/\0+$/, "");
  if (name !== f.encoding) refuse(`it holds the encoding "${name}", not "${f.encoding}"`);
  const patternEnd = f.fixedHeaderBytes + patternLength;
  if (patternEnd > raw.byteLength) refuse("its pattern runs past its end (truncated)");
  const pattern = new TextDecoder().decode(raw.subarray(f.fixedHeaderBytes, patternEnd));
  if (pattern !== O200K_PATTERN) refuse("its pre-tokenizer pattern is not o200k_base's");
  if (tokenCount < 256 || tokenCount > RANK_MASK - 1) refuse(`token count ${tokenCount} is out of range`);
  if (slotBits > f.rankBits || 2 ** slotBits <= tokenCount) refuse(`${slotBits} slot bits cannot hold ${tokenCount} tokens`);
  const offsetsAt = f.fixedHeaderBytes + padded4(patternLength);
  const slotsAt = offsetsAt + 4 * (tokenCount + 1);
  const bytesAt = slotsAt + 4 * 2 ** slotBits;
  if (raw.byteLength !== bytesAt + byteCount) refuse(`it is ${raw.byteLength} bytes, its header says ${bytesAt + byteCount} (truncated or corrupt)`);
  const offsets = new Uint32Array(raw.buffer, raw.byteOffset + offsetsAt, tokenCount + 1);
  if (offsets[0] !== 0 || offsets[tokenCount] !== byteCount) refuse("its offsets do not span its token bytes (corrupt)");
  const key = raw.subarray(f.keyOffset, f.keyOffset + f.keyBytes);
  return {
    tokenCount,
    offsets,
    slots: new Uint32Array(raw.buffer, raw.byteOffset + slotsAt, 2 ** slotBits),
    bytes: raw.subarray(bytesAt, bytesAt + byteCount),
    buildKey: Array.from(key, (b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

