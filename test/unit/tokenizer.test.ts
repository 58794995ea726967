// The Worker's token counter (src/catalog/tokenizer.ts and token-table.ts over assets/tokenizer/o200k_base.bin) against the benchmarks'
// (js-tiktoken o200k_base, `encode(text, [], [])`): the same count for the corpus, hard strings, every token of the
// vocabulary and a seeded fuzz; and a table that is stale, foreign or cut short is refused.
import { existsSync, readFileSync } from "node:fs";
import { getEncoding } from "js-tiktoken";
import ranks from "js-tiktoken/ranks/o200k_base";
import { beforeAll, describe, expect, it } from "vitest";
import { corpusFiles, loadCorpus } from "../../harness/replay-server.ts";
import { TABLE_PATH, buildKey, decodeRanks } from "../../scripts/build-tokenizer.ts";
import { TABLE_FORMAT, readTable } from "../../src/catalog/token-table.ts";
import { createTokenCounterLoader, rememberingLongTexts, tokenCounterFromTable, type TokenCounter } from "../../src/catalog/tokenizer.ts";

const reference = getEncoding("o200k_base");
const expected = (text: string) => reference.encode(text, [], []).length;

let tableBytes: Uint8Array;
let counter: TokenCounter;

beforeAll(() => {
  if (!existsSync(TABLE_PATH)) throw new Error(`${TABLE_PATH} is missing: run \`node scripts/setup.mjs\` (or node scripts/build-tokenizer.ts)`);
  tableBytes = new Uint8Array(readFileSync(TABLE_PATH));
  counter = tokenCounterFromTable(tableBytes);
});

/** Each text's count, ours and js-tiktoken's, for one readable failure listing the texts that differ. */
function mismatches(texts: readonly string[], counting: TokenCounter = counter): Array<{ text: string; ours: number; theirs: number }> {
  const wrong = [];
  for (const text of texts) {
    const ours = counting.count(text);
    const theirs = expected(text);
    if (ours !== theirs) wrong.push({ text: text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text, ours, theirs });
  }
  return wrong;
}

/** A small seeded generator (xorshift32), so a failing fuzz case comes back the same. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

describe("token counts equal js-tiktoken's (o200k_base, special tokens as text)", () => {
  it("the table on disk was built from the current inputs", () => {
    expect(readTable(tableBytes).buildKey).toBe(buildKey().toString("hex"));
  });

  it("every tool of the corpus: its compact JSON, its description, and each server's whole list", { timeout: 60_000 }, () => {
    const texts: string[] = [];
    const files = corpusFiles();
    expect(files.length).toBeGreaterThanOrEqual(20);
    for (const file of files) {
      const server = loadCorpus(file);
      const view = server.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
      for (const tool of view) {
        texts.push(JSON.stringify(tool));
        if (tool.description) texts.push(tool.description);
      }
      texts.push(JSON.stringify(view), JSON.stringify(view, null, 2));
      if (server.instructions) texts.push(server.instructions);
    }
    expect(texts.length).toBeGreaterThan(500);
    expect(mismatches(texts)).toEqual([]);
    // And all of it at once (a counter is reused across texts; its piece cache must not change an answer).
    const all = texts.join("\n");
    expect(counter.count(all)).toBe(expected(all));
  });

  it("hard strings: whitespace runs, digits, contractions, scripts, emoji, marks, surrogates, special tokens", () => {
    const hard = [
      "",
      " ",
      "  ",
      "a",
      "\n",
      "\r\n",
      "\r\n\r\n\r\n",
      "a\r\nb\r\n",
      "\t\t\tx",
      "x\t\t\t",
      "   leading and trailing   ",
      "a  b   c    d\n\n\n  e",
      "line one\n    indented\n\tand tabbed\n",
      " ".repeat(1000),
      "\n".repeat(500),
      " \n".repeat(300),
      "\t \t \n\r \u00a0\u2003\u3000x",
      "1234567",
      "12345678901234567890",
      "3.14159 2,718 1e10 0x1F -42 +7 100%",
      "١٢٣٤٥ ६७८ 一二三 ⅠⅡⅢ ½",
      "it's they're we've I'm you'll he'd IT'S THEY'RE We'Ve",
      "'s 't 're 've 'm 'll 'd",
      "don't can't won't shouldn't",
      "rock'n'roll o'clock",
      "日本語のテキストと漢字、そして한국어 텍스트",
      "中文：工具的描述，参数和返回值。",
      "Привет, мир! Ελληνικά. עברית. العربية. हिन्दी. ไทย",
      "😀 👍🏽 🇫🇷 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ ✨",
      "👨‍💻👩‍🔬🧑🏿‍🚀",
      "e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937 Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o",
      "\u0301\u0302\u0303",
      "\ud800",
      "\udfff",
      "a\ud800b",
      "\ud83d",
      "x\udc00\ud800y",
      "<|endoftext|>",
      "before <|endoftext|> after <|endofprompt|><|fim_prefix|>",
      "<|endoftext|><|endoftext|>",
      "supercalifragilisticexpialidocious",
      "Pneumonoultramicroscopicsilicovolcanoconiosis",
      "a".repeat(2000),
      "ab".repeat(1000),
      "camelCaseIdentifierWithManyPartsAndNumbers123AndMore",
      "snake_case_identifier_with_many_parts",
      "https://api.example.com/v1/repos/{owner}/{repo}/pulls?state=open&per_page=100",
      '{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}',
      "```ts\nconst x: number = 1;\n```\n",
      "!!!???...,,,;;;:::",
      "$$$ ### @@@ %%% ^^^ &&& *** ((( ))) [[[ ]]] {{{ }}}",
      "/path/to/file.txt\n//comment\r\n/* block */",
      "\u200b\u200c\u200d\ufeff",
      "\u0000\u0001\u001f\u007f",
      "\ufffd\uffff\uffe0",
      "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕄𝕒𝕥𝕙 𐍈",
    ];
    expect(mismatches(hard)).toEqual([]);
  });

  it("very long words (thousands of merges) and a 100 KB text", { timeout: 60_000 }, () => {
    const next = random(7);
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const word = (n: number, alphabet: string) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    const long = [word(3000, letters), word(2000, "ab"), word(1500, "αβγδεζηθ"), `X${word(2500, letters)}'s`, word(1200, "日本語中文字")];
    expect(mismatches(long)).toEqual([]);
    const prose = corpusFiles()
      .flatMap((f) => loadCorpus(f).tools.map((t) => t.description ?? ""))
      .join("\n\n");
    let big = prose;
    while (big.length < 100_000) big += `\n${prose}`;
    big = big.slice(0, 100_000);
    expect(counter.count(big)).toBe(expected(big));
  });

  it("the text of every token of the vocabulary", { timeout: 120_000 }, () => {
    // Decoded with replacement characters where a token is not whole UTF-8: every table entry is reached this way.
    const decoder = new TextDecoder();
    const texts = decodeRanks(ranks.bpe_ranks).map((bytes) => decoder.decode(bytes));
    expect(texts.length).toBe(199_998);
    expect(mismatches(texts)).toEqual([]);
  });

  it("a seeded fuzz of mixed strings", { timeout: 60_000 }, () => {
    const parts = [
      "a", "b", "z", "A", "Q", "the", "The", "tool", "Tool", "JSON", "id", "ID", "über", "ÉCOLE", "naïve",
      " ", "  ", "   ", "\t", "\n", "\r", "\r\n", "\n\n", " \n", "\u00a0", "\u3000",
      "0", "1", "42", "1234", "9999999", "3.5", "١٢", "½",
      "'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'d", "'D", "’s",
      ".", ",", "!", "?", "-", "_", "/", "\\", "(", ")", "{", "}", "[", "]", "\"", ":", ";", "<", ">", "|", "=", "+", "*", "#", "@", "`", "~",
      "<|endoftext|>", "<|endofprompt|>", "<|",
      "日本", "語", "中文", "한국", "Привет", "мир", "العربية", "हिन्दी", "ไทย", "Ελλάδα",
      "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "\u200d", "\ufe0f",
      "\u0301", "\u0308", "\u094d",
      "\ud800", "\udc00", "\ud83d",
      "𝔘", "𐍈",
    ];
    const next = random(20_261_125);
    const texts: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const n = 1 + Math.floor(next() * 24);
      let s = "";
      for (let k = 0; k < n; k++) {
        // Mostly fragments, sometimes any code point of the BMP or beyond.
        const roll = next();
        if (roll < 0.85) s += parts[Math.floor(next() * parts.length)];
        else if (roll < 0.95) s += String.fromCharCode(Math.floor(next() * 0x10000));
        else s += String.fromCodePoint(0x10000 + Math.floor(next() * 0x10000));
      }
      texts.push(s);
    }
    expect(mismatches(texts)).toEqual([]);
    // A fresh counter (nothing cached) gives the same counts.
    expect(mismatches(texts.slice(0, 500), tokenCounterFromTable(tableBytes))).toEqual([]);
  });
});

describe("a table that is not this build's is refused", () => {
  const altered = (change: (copy: Uint8Array) => Uint8Array) => () => tokenCounterFromTable(change(tableBytes.slice()));
  const word = (copy: Uint8Array, index: number, value: number) => {
    new DataView(copy.buffer, copy.byteOffset).setUint32(index * 4, value, true);
    return copy;
  };

  it("another format version, encoding or pattern: stale or foreign", () => {
    expect(altered((c) => word(c, 1, TABLE_FORMAT.version + 1))).toThrow(/format version 2, this build reads version 1.*build-tokenizer/);
    expect(altered((c) => { c.set(new TextEncoder().encode("cl100k_base\0"), TABLE_FORMAT.nameOffset); return c; })).toThrow(/encoding "cl100k_base"/);
    expect(altered((c) => { c[TABLE_FORMAT.fixedHeaderBytes + 3] = 0x41; return c; })).toThrow(/pattern is not o200k_base's/);
    expect(altered((c) => { c.set(new TextEncoder().encode("PK\u0003\u0004"), 0); return c; })).toThrow(/not a token table/);
  });

  it("a cut-short, padded or inconsistent file: corrupt", () => {
    expect(altered((c) => c.subarray(0, c.length - 1))).toThrow(/truncated or corrupt/);
    expect(altered((c) => c.subarray(0, 40))).toThrow(/shorter than its header/);
    expect(() => tokenCounterFromTable(new Uint8Array([...tableBytes, 0, 0, 0, 0]))).toThrow(/truncated or corrupt/);
    expect(altered((c) => word(c, 2, 100_000))).toThrow(/truncated or corrupt/);
    expect(altered((c) => word(c, 4, 16))).toThrow(/slot bits cannot hold/);
    const patternLength = new DataView(tableBytes.buffer, tableBytes.byteOffset).getUint32(20, true);
    const offsetsAt = TABLE_FORMAT.fixedHeaderBytes + ((patternLength + 3) & ~3);
    expect(altered((c) => word(c, offsetsAt / 4, 1))).toThrow(/offsets do not span/);
  });

  it("bytes at any alignment are read (copied once when not 4-byte aligned)", () => {
    const shifted = new Uint8Array(tableBytes.length + 1);
    shifted.set(tableBytes, 1);
    expect(tokenCounterFromTable(shifted.subarray(1)).count("hello world")).toBe(2);
    expect(tokenCounterFromTable(tableBytes.slice().buffer).count("hello world")).toBe(2);
  });

  it("a loader whose asset is missing says how to build it, and tries again next time", async () => {
    let calls = 0;
    const load = createTokenCounterLoader();
    const missing = { fetch: async () => (calls++, new Response("not found", { status: 404 })) };
    await expect(load(missing)).rejects.toThrow(/tokenizer table missing: the ASSETS binding answered 404 for \/tokenizer\/o200k_base\.bin.*build-tokenizer/);
    const present = { fetch: async () => (calls++, new Response(tableBytes.slice())) };
    const [a, b] = await Promise.all([load(present), load(present)]);
    expect(a).toBe(b);
    expect(calls).toBe(2);
    expect(a.count("hello world")).toBe(2);
  });
});

describe("rememberingLongTexts", () => {
  it("counts a long text once and answers its repeats from memory; short texts are always counted", () => {
    const seen: string[] = [];
    const inner = { count: (text: string) => (seen.push(text), text.length % 97) };
    const counter = rememberingLongTexts(inner);
    const long = "x".repeat(5000);
    const other = "y".repeat(5001);
    expect([counter.count(long), counter.count(long), counter.count(other), counter.count(long)]).toEqual([5000 % 97, 5000 % 97, 5001 % 97, 5000 % 97]);
    expect(seen.map((t) => t.length)).toEqual([5000, 5001]);
    counter.count("short");
    counter.count("short");
    expect(seen.filter((t) => t === "short")).toHaveLength(2);
  });
});
