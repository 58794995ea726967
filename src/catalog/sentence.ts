// Where a description's first sentence ends. A period followed by a space is not always the end of one: "e.g. 'System.Title'",
// "i.e. the id", "vs. the draft", "etc. and more" carry on, and a cut there drops the one fact an agent needed (the
// field's example). Periods inside a word ("v1.2", "package.json", "U.S") are never followed by a space, so only the
// period before a space is judged: it ends the sentence unless the word it closes is a known abbreviation, or the text
// carries on in lower case (a sentence begins with a capital, a digit, a quote or a mark; "etc." and "approx." before
// a capital do end one). Pure.

/** Abbreviations whose period never ends a sentence: what follows them is always the same sentence's. */
const NEVER_ENDS = new Set(["e.g", "eg", "i.e", "ie", "vs", "cf", "viz", "incl", "esp", "resp", "approx", "fig"]);
/** The word a period closes: letters and inner periods ("e.g", "i.e", "etc"). */
const CLOSED_WORD = /([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)$/;

/**
 * The index of the character that ends `text`'s first sentence (a `.`, `!` or `?` followed by whitespace or the
 * end), or -1 when the whole text is one sentence.
 */
export function firstSentenceEnd(text: string): number {
  const ends = /[.!?](?=\s|$)/g;
  for (let m = ends.exec(text); m !== null; m = ends.exec(text)) {
    const at = m.index;
    if (text[at] !== ".") return at;
    const word = CLOSED_WORD.exec(text.slice(Math.max(0, at - 12), at))?.[1]?.toLowerCase();
    if (word !== undefined && NEVER_ENDS.has(word)) continue;
    const next = /\S/.exec(text.slice(at + 1));
    if (next !== null && /\p{Ll}/u.test(next[0])) continue;
    return at;
  }
  return -1;
}
