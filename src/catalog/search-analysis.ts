// Pure: how the tool search reads text (search-index.ts at build time, search-query.ts at query time): words split
// on punctuation, case changes and digits, stop words dropped, general abbreviations read as their words, English
// stemming (Porter2) with each word's own form kept beside its stem. An index and the queries run against it must
// analyse alike, so the choices travel with the index (`Analysis`).
import { stem } from "porter2";

/** Words that carry no meaning for choosing a tool (articles, pronouns, auxiliaries, the commonest prepositions). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about an and are as at be been being by can could did do does for from had has have how i if in into is it " +
    "its me my of on or our please should so than that the their them then there these they this those to us was " +
    "we were what when where which while who whom why will with would you your"
  ).split(" "),
);

/**
 * One word: a run of capitals ending in a plural s (`IDs`, `PRs`), a run of capitals before a capitalised word
 * (`HTML` of `HTMLParser`), a capitalised or lowercase word, a run of capitals, digits, other letters.
 */
const WORD = /\p{Lu}{2,}s(?!\p{Ll})|\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|\p{L}+/gu;

/** A run of lowercase ASCII letters, or of ASCII digits. */
const PLAIN = /^(?:[a-z]+|[0-9]+)$/;

/**
 * The words of a text, lowercased, before stop words and stemming: anything not a letter or digit separates
 * words, and so do a change from lowercase to uppercase (`getPullRequest`), the last capital of a run followed by
 * lowercase (`HTMLParser` → html, parser) and a change between letters and digits (`base64` → base, 64).
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const chunk of text.split(/[^\p{L}\p{N}]+/u)) {
    if (!chunk) continue;
    // Most words are lowercase letters or digits alone: one word each, as the pattern below would find.
    if (PLAIN.test(chunk)) {
      out.push(chunk);
      continue;
    }
    let parts = 0;
    for (const match of chunk.matchAll(WORD)) {
      const word = match[0];
      // `PRs` → pr: the plural s of an acronym is no part of it.
      out.push((word.length > 2 && word.endsWith("s") && /^\p{Lu}+s$/u.test(word) ? word.slice(0, -1) : word).toLowerCase());
      parts++;
    }
    // A name written as one (`GitLab`, `k8s`) is also the whole word, as others write it (`gitlab`).
    if (parts > 1) out.push(chunk.toLowerCase());
  }
  return out;
}

/**
 * Abbreviations written for words, the same at index and query time: the common short forms of software
 * vocabulary, each read as its full words. Kept short and general, none particular to one product or catalog
 * (a change bumps SEARCH_INDEX_VERSION); bench/selection.ts reports the search with and without it.
 */
const ALIASES: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    mr: "merge request",
    pr: "pull request",
    repo: "repository",
    db: "database",
    dir: "directory",
    org: "organization",
    config: "configuration",
    env: "environment",
    info: "information",
    doc: "documentation",
    docs: "documentation",
    auth: "authentication",
    msg: "message",
    param: "parameter",
    params: "parameter",
    stats: "statistics",
    k8s: "kubernetes",
  }).map(([word, to]) => [word, to.split(" ")]),
);

/** How text becomes terms; an index and the queries run against it must agree (bench/selection.ts turns parts off). */
export interface Analysis {
  /** Porter2 stemming of ASCII words. */
  stem: boolean;
  /** The ALIASES table. */
  aliases: boolean;
  /** Each word's own form as a term too (marked `=word`), so an exact match counts beside the stem's. */
  exact: boolean;
}

export const DEFAULT_ANALYSIS: Analysis = { stem: true, aliases: true, exact: true };

/** The terms of one word: stemmed, aliased, none for a stop word or a single letter. */
export function termsOfWord(word: string, analysis: Analysis): readonly string[] {
  if (STOP_WORDS.has(word)) return [];
  if (word.length === 1) return word >= "0" && word <= "9" ? [word] : [];
  const alias = analysis.aliases ? (ALIASES.get(word) ?? ALIASES.get(word.endsWith("s") ? word.slice(0, -1) : "")) : undefined;
  if (alias) return alias.flatMap((w) => termsOfWord(w, { ...analysis, aliases: false }));
  if (!analysis.stem || !/^[a-z]+$/.test(word)) return [word];
  const stemmed = stem(word);
  return analysis.exact ? [stemmed, `=${word}`] : [stemmed];
}

/** Each word's terms under DEFAULT_ANALYSIS, kept in the isolate for every build (cleared when full: a bound only). */
const isolateMemo = new Map<string, readonly string[]>();
const ISOLATE_MEMO_MAX = 100_000;

/**
 * Where a build keeps each word's terms: the isolate's memo under DEFAULT_ANALYSIS's choices (the words of one team's
 * catalogs are mostly the words of another's), a memo of its own under others.
 */
export function wordMemo(analysis: Analysis): Map<string, readonly string[]> {
  const usual = analysis.stem === DEFAULT_ANALYSIS.stem && analysis.aliases === DEFAULT_ANALYSIS.aliases && analysis.exact === DEFAULT_ANALYSIS.exact;
  if (!usual) return new Map();
  if (isolateMemo.size >= ISOLATE_MEMO_MAX) isolateMemo.clear();
  return isolateMemo;
}

/**
 * The index terms of a text: its words without stop words and single letters, aliased and stemmed (Porter2).
 * `memo` keeps each word's terms (`wordMemo`).
 */
export function terms(text: string, analysis: Analysis = DEFAULT_ANALYSIS, memo?: Map<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    let t = memo?.get(word);
    if (t === undefined) {
      t = termsOfWord(word, analysis);
      memo?.set(word, t);
    }
    for (const x of t) out.push(x);
  }
  return out;
}
