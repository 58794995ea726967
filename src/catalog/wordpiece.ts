// Pure: BERT's uncased WordPiece tokenization, as Hugging Face tokenizers' BertNormalizer (clean text, split CJK
// characters, strip accents, lowercase), BertPreTokenizer (split on whitespace, each punctuation character a word of
// its own) and WordPiece model (longest match first, `##` before a continuation, a word with any part not in the
// vocabulary or longer than the word limit is one unknown piece) do it, without special tokens.

/** Control and format characters, unassigned and private-use code points: dropped by the normaliser (but not \t \n \r). */
const CONTROL = /[^\t\n\r\P{C}]/gu;
/** BERT's whitespace: tab, line breaks and Unicode White_Space (the controls among them are dropped before). */
const WHITESPACE = /\s/gu;
/** CJK ideographs, which BERT makes words of one character each (the blocks of Hugging Face's `is_chinese_char`). */
const CJK =
  /[\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B920}-\u{2CEAF}\u{F900}-\u{FAFF}\u{2F800}-\u{2FA1F}]/gu;
/** Nonspacing marks (category Mn), the accents removed after canonical decomposition. */
const NONSPACING_MARK = /\p{Mn}/gu;
/** BERT's punctuation: every ASCII punctuation or symbol character, and Unicode punctuation (categories P*). */
const PUNCTUATION = /[!-/:-@[-`{-~]|\p{P}/u;
/** Characters the normaliser must look at one by one (anything past plain lowercase ASCII letters, digits and space). */
const PLAIN = /^[a-z0-9 ]*$/;

/**
 * BertNormalizer with clean_text, handle_chinese_chars, lowercase and (following lowercase) strip_accents. Case is
 * lowered one character at a time, as Rust's `char::to_lowercase` does (JavaScript's own lowers a final Σ to ς).
 */
export function normalizeBert(text: string): string {
  if (PLAIN.test(text)) return text;
  let out = text.replace(CONTROL, "").replace(/\uFFFD/g, "");
  out = out.replace(WHITESPACE, " ");
  out = out.replace(CJK, (c) => ` ${c} `);
  out = out.normalize("NFD").replace(NONSPACING_MARK, "");
  return out.includes("\u03A3") ? Array.from(out, (c) => c.toLowerCase()).join("") : out.toLowerCase();
}

/** BertPreTokenizer: words split on whitespace, and each punctuation character a word of its own. */
export function preTokenizeBert(normalized: string): string[] {
  const words: string[] = [];
  for (const chunk of normalized.split(/\s+/u)) {
    if (!chunk) continue;
    let word = "";
    for (const c of chunk) {
      if (!PUNCTUATION.test(c)) {
        word += c;
        continue;
      }
      if (word) words.push(word);
      words.push(c);
      word = "";
    }
    if (word) words.push(word);
  }
  return words;
}

/** The vocabulary WordPiece reads (embedding-table.ts's table is one). */
export interface WordPieceVocabulary {
  /** The id of the piece whose UTF-8 is bytes[start, end) (`##` first for a continuation), or -1. */
  find(bytes: Uint8Array, start: number, end: number): number;
  unknownId: number;
  /** A word of more characters (code points) than this is unknown. */
  maxWordChars: number;
}

const encoder = new TextEncoder();
const HASH = 0x23;
/** A word's UTF-8 from byte 2 on: the two bytes before a continuation (already matched) are overwritten with "##". */
let scratch = new Uint8Array(2 + 3 * 256);

/** WordPiece on one pre-tokenized word: greedy longest match first; the unknown id alone if any part is missing. */
export function wordPieces(word: string, v: WordPieceVocabulary, into: number[] = []): number[] {
  // A UTF-16 unit is at most 3 bytes of UTF-8 (a pair, two units, is 4).
  if (scratch.length < 2 + 3 * word.length) scratch = new Uint8Array(2 + 3 * word.length);
  const bytes = scratch;
  const end = 2 + encoder.encodeInto(word, bytes.subarray(2)).written;
  // Where each character starts (a byte that is not 10xxxxxx), then the end.
  const bounds: number[] = [];
  for (let i = 2; i < end; i++) if ((bytes[i]! & 0xc0) !== 0x80) bounds.push(i);
  if (bounds.length > v.maxWordChars) {
    into.push(v.unknownId);
    return into;
  }
  bounds.push(end);
  const mark = into.length;
  let start = 0;
  while (start < bounds.length - 1) {
    let from = bounds[start]!;
    if (start > 0) {
      from -= 2;
      bytes[from] = HASH;
      bytes[from + 1] = HASH;
    }
    let stop = bounds.length - 1;
    let found = -1;
    for (; stop > start; stop--) {
      found = v.find(bytes, from, bounds[stop]!);
      if (found >= 0) break;
    }
    if (found < 0) {
      into.length = mark;
      into.push(v.unknownId);
      return into;
    }
    into.push(found);
    start = stop;
  }
  return into;
}

/** A text's WordPiece ids, without special tokens, unknown pieces included. */
export function tokenizeBert(text: string, v: WordPieceVocabulary): number[] {
  const ids: number[] = [];
  for (const word of preTokenizeBert(normalizeBert(text))) wordPieces(word, v, ids);
  return ids;
}
