// Counts o200k_base tokens exactly as the benchmarks do (js-tiktoken's `encode(text, [], []).length`: the text of a
// special token such as `<|endoftext|>` is ordinary text), from the table of token-table.ts, loaded through the
// Worker's static-assets binding. Counting pre-tokenizes with the o200k pattern, looks each piece up whole, and merges
// the pieces that are not one token byte pair by byte pair, lowest rank first (leftmost among equals).
import { assetBytes, type AssetsBinding } from "../lib/asset-bytes.ts";
import { O200K_PATTERN, RANK_MASK, TABLE_FORMAT, hashBytes, readTable, type TokenTable } from "./token-table.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { loadOnce } from "../lib/load-once.ts";

/** What the proxy needs of a tokenizer: how many o200k_base tokens a text is. */
export interface TokenCounter {
  count(text: string): number;
}

export type { AssetsBinding };

/** Where the Worker reads the table: assets/tokenizer/o200k_base.bin through the ASSETS binding (any host works). */
export const TABLE_URL = "https://assets.local/tokenizer/o200k_base.bin";

/** Pieces longer than this (UTF-16 units) are not remembered; so the cache holds at most ~1M characters. */
const CACHE_PIECE_CHARS = 256;
const CACHE_ENTRIES = 4096;
/**
 * Whole texts at least this long are remembered too, by their text: a catalog's rendering and its tool list are
 * counted again, unchanged, at every session start of the team (the budget's shapes, the usage meter's direct
 * figure), and scanning a long text is most of a count. At most TEXT_ENTRIES of at most TEXT_MAX_CHARS each.
 */
const TEXT_MIN_CHARS = 1024;
const TEXT_MAX_CHARS = 256 * 1024;
const TEXT_ENTRIES = 32;
const TWO_32 = 2 ** 32;

/** A binary min-heap of numbers (merge candidates: rank · 2^32 + position), its storage reused across pieces. */
class MinHeap {
  private items = new Float64Array(64);
  size = 0;

  push(value: number): void {
    if (this.size === this.items.length) {
      const grown = new Float64Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    const items = this.items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items[--this.size]!;
    const n = this.size;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && items[child + 1]! < items[child]!) child++;
      if (items[child]! >= last) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

class TableCounter implements TokenCounter {
  private readonly offsets: Uint32Array;
  private readonly slots: Uint32Array;
  private readonly tokens: Uint8Array;
  private readonly mask: number;
  private readonly pattern = new RegExp(O200K_PATTERN, "gu");
  private readonly cache = new BoundedCache<string, number>({ max: CACHE_ENTRIES });
  private readonly heap = new MinHeap();
  /** The current piece's UTF-8 bytes. */
  private buf = new Uint8Array(256);
  /** Per byte position of the current piece: where the part starting there ends, where the one before starts,
   * and the rank of that part merged with the next (-1: not a token, -2: no part starts here any more). */
  private next = new Int32Array(256);
  private prev = new Int32Array(256);
  private pairRank = new Int32Array(256);

  constructor(table: TokenTable) {
    this.offsets = table.offsets;
    this.slots = table.slots;
    this.tokens = table.bytes;
    this.mask = table.slots.length - 1;
  }

  count(text: string): number {
    const pattern = this.pattern;
    pattern.lastIndex = 0;
    let total = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const piece = match[0];
      // o200k's pattern never matches nothing; this only keeps a broken pattern from looping forever.
      if (piece.length === 0) pattern.lastIndex++;
      else total += this.countPiece(piece);
    }
    return total;
  }

  private countPiece(piece: string): number {
    // One UTF-16 unit of at most 0x7f is one byte, and every byte is a token.
    if (piece.length === 1 && piece.charCodeAt(0) < 0x80) return 1;
    const cached = this.cache.get(piece);
    if (cached !== undefined) return cached;
    const n = this.encode(piece);
    const tokens = n === 1 || this.rank(0, n) >= 0 ? 1 : this.merge(n);
    if (piece.length <= CACHE_PIECE_CHARS) {
      this.cache.set(piece, tokens);
    }
    return tokens;
  }

  /** UTF-8 of `s` into `buf` (a lone surrogate becomes U+FFFD, as TextEncoder does); returns its length. */
  private encode(s: string): number {
    if (this.buf.length < s.length * 3) this.buf = new Uint8Array(s.length * 3);
    const buf = this.buf;
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        buf[n++] = c;
      } else if (c < 0x800) {
        buf[n++] = 0xc0 | (c >> 6);
        buf[n++] = 0x80 | (c & 0x3f);
      } else {
        if (c >= 0xd800 && c <= 0xdfff) {
          const low = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
          if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
            i++;
            buf[n++] = 0xf0 | (c >> 18);
            buf[n++] = 0x80 | ((c >> 12) & 0x3f);
            buf[n++] = 0x80 | ((c >> 6) & 0x3f);
            buf[n++] = 0x80 | (c & 0x3f);
            continue;
          }
          c = 0xfffd;
        }
        buf[n++] = 0xe0 | (c >> 12);
        buf[n++] = 0x80 | ((c >> 6) & 0x3f);
        buf[n++] = 0x80 | (c & 0x3f);
      }
    }
    return n;
  }

  /** The rank of buf[start, end) as one token, or -1. */
  private rank(start: number, end: number): number {
    const buf = this.buf;
    const length = end - start;
    const h = hashBytes(buf, start, end);
    const fingerprint = h >>> TABLE_FORMAT.rankBits;
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const slot = this.slots[i]!;
      if (slot === 0) return -1;
      if (slot >>> TABLE_FORMAT.rankBits !== fingerprint) continue;
      const rank = (slot & RANK_MASK) - 1;
      const at = this.offsets[rank]!;
      if (this.offsets[rank + 1]! - at !== length) continue;
      let same = true;
      for (let k = 0; k < length; k++) {
        if (this.tokens[at + k] !== buf[start + k]) {
          same = false;
          break;
        }
      }
      if (same) return rank;
    }
  }

  /**
   * Tokens in buf[0, n) (n ≥ 2, not one token): parts start as single bytes; the adjacent pair whose bytes form the
   * lowest-ranked token is merged, the leftmost among equal ranks, until no pair is a token. The candidates wait in
   * a heap keyed rank · 2^32 + position; one whose rank is no longer its part's is stale (a part only grows, and a
   * longer byte string is another token), so it is skipped. O(n log n), so a long word cannot stall the Worker.
   */
  private merge(n: number): number {
    if (this.next.length < n + 1) {
      this.next = new Int32Array(n + 1);
      this.prev = new Int32Array(n + 1);
      this.pairRank = new Int32Array(n + 1);
    }
    const { next, prev, pairRank, heap } = this;
    heap.size = 0;
    for (let p = 0; p < n; p++) {
      next[p] = p + 1;
      prev[p] = p - 1;
    }
    for (let p = 0; p < n - 1; p++) {
      const r = this.rank(p, p + 2);
      pairRank[p] = r;
      if (r >= 0) heap.push(r * TWO_32 + p);
    }
    pairRank[n - 1] = -1;
    let parts = n;
    while (heap.size > 0) {
      const key = heap.pop();
      const r = Math.floor(key / TWO_32);
      const p = key - r * TWO_32;
      if (pairRank[p] !== r) continue;
      const q = next[p]!;
      const end = next[q]!;
      next[p] = end;
      if (end < n) prev[end] = p;
      pairRank[q] = -2;
      parts--;
      const after = end < n ? this.rank(p, next[end]!) : -1;
      pairRank[p] = after;
      if (after >= 0) heap.push(after * TWO_32 + p);
      const before = prev[p]!;
      if (before >= 0) {
        const r2 = this.rank(before, end);
        pairRank[before] = r2;
        if (r2 >= 0) heap.push(r2 * TWO_32 + before);
      }
    }
    return parts;
  }
}

/** A counter over a table's bytes (from the file, or the ASSETS binding). Pure; throws if the table is refused. */
export function tokenCounterFromTable(bytes: ArrayBuffer | Uint8Array): TokenCounter {
  return new TableCounter(readTable(bytes));
}

/** `counter`, remembering the counts of long texts (see TEXT_MIN_CHARS): what the isolate's loader hands out. */
export function rememberingLongTexts(counter: TokenCounter): TokenCounter {
  const texts = new BoundedCache<string, number>({ max: TEXT_ENTRIES });
  return {
    count(text) {
      if (text.length < TEXT_MIN_CHARS || text.length > TEXT_MAX_CHARS) return counter.count(text);
      const known = texts.get(text);
      if (known !== undefined) return known;
      const total = counter.count(text);
      texts.set(text, total);
      return total;
    },
  };
}

/**
 * A loader with its own memory: concurrent callers share one fetch, a loaded counter is kept, and a failed load is
 * forgotten once it has failed (the next call tries again). `loadTokenCounter` is the isolate's one loader.
 */
export function createTokenCounterLoader(): (assets: AssetsBinding) => Promise<TokenCounter> {
  return loadOnce(async (assets) => rememberingLongTexts(tokenCounterFromTable(await fetchTable(assets))));
}

const fetchTable = (assets: AssetsBinding): Promise<ArrayBuffer> =>
  assetBytes(
    assets,
    TABLE_URL,
    "tokenizer table",
    "assets/tokenizer/o200k_base.bin is generated: `node scripts/build-tokenizer.ts`, which npm test, npm run dev and npm run deploy run when it is missing or stale",
  );

/** The isolate's counter, loaded once from `env.ASSETS` (about 3 MB, read as it is). */
export const loadTokenCounter: (assets: AssetsBinding) => Promise<TokenCounter> = createTokenCounterLoader();
