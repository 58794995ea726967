// Pure: a query as weighted terms for the tool search. Request filler is dropped ("can you just…"); the query's own
// words weigh 1; each word's general software-vocabulary equivalents are added at a lower weight, and a word that
// begins a server's name or that a server's name begins (`mongo`, `postgresql`) counts as that name. Only the query is
// widened, never the index.
import { stem } from "porter2";
import { STOP_WORDS, termsOfWord, words, type Analysis } from "./search-analysis.ts";
import type { Ranking } from "./search-score.ts";

/**
 * Words of a request rather than of a task, dropped from queries only: how people ask ("can you just show me…",
 * "I'd like to…", "right now"). Verbs a tool name may start with (get, list, show…) are not among them.
 */
const FILLER_WORDS: ReadonlySet<string> = new Set(
  (
    "am anything actually also any currently d give going here hey hi just kindly know let lets like ll m maybe mine " +
    "need needs now ok okay pls quick quickly re really right s some somebody someone something still sure t tell " +
    "thanks thing things today ve want wanna wants way whether yes"
  ).split(" "),
);

/**
 * General equivalences of software vocabulary, used to widen a query at a lower weight (never at index time): the
 * verbs of the usual operations on anything (create, read, list, search, update, delete, run, stop…) and a few
 * nouns every catalog names several ways. Written from the common vocabulary of APIs and CLIs, not from any query
 * set; a word may sit in several groups.
 */
const SYNONYM_GROUPS: readonly string[] = [
  "create add new make generate setup build",
  "delete remove drop erase destroy wipe purge discard clear",
  "get fetch retrieve read show view display open",
  "list show enumerate browse all",
  "search find query lookup locate grep filter",
  "update edit change modify alter set patch adjust",
  "rename retitle",
  "run execute exec start launch trigger invoke kick",
  "stop cancel abort terminate kill halt end",
  "restart rerun retry",
  "close shut",
  "copy duplicate clone",
  "move relocate",
  "write save store put",
  "upload attach",
  "download save export",
  "send post publish submit",
  "connect link attach join",
  "disconnect detach unlink",
  "approve accept confirm",
  "reject decline deny refuse",
  "comment note remark reply",
  "issue bug ticket",
  "error exception crash failure fault",
  "log output",
  "user member account person people",
  "folder directory",
  "file document",
  "image picture screenshot",
  "webpage page site",
  "url link address",
];

let synonyms: Map<string, string[]> | undefined;

/** A word's SYNONYM_GROUPS equivalents, found by its stem (`removing` → delete, drop…); the table is made at first use. */
function synonymsOf(word: string): readonly string[] {
  if (!synonyms) {
    synonyms = new Map();
    for (const group of SYNONYM_GROUPS) {
      const members = group.split(" ");
      for (const m of members) {
        const key = stem(m);
        const list = synonyms.get(key) ?? [];
        for (const other of members) if (other !== m && !list.includes(other)) list.push(other);
        synonyms.set(key, list);
      }
    }
  }
  return synonyms.get(/^[a-z]+$/.test(word) ? stem(word) : word) ?? [];
}

/**
 * The weighted terms of a query: its own words' (weight 1), then each widening's at its weight, the highest kept.
 * `analysis` is the searched indexes'; `serverWords` the words of their servers' names, asked for only when a query
 * word may be part of one.
 */
export function queryTerms(query: string, ranking: Ranking, analysis: Analysis, serverWords: () => readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  const add = (termList: readonly string[], weight: number): void => {
    if (weight <= 0) return;
    for (const t of termList) if ((out.get(t) ?? 0) < weight) out.set(t, weight);
  };
  const content = words(query).filter((w) => !STOP_WORDS.has(w) && !(ranking.filler && FILLER_WORDS.has(w)));
  for (const w of content) add(termsOfWord(w, analysis), 1);
  if (out.size === 0) return out;
  for (const w of content) {
    if (!/^[a-z]+$/.test(w) || w.length < 3) continue;
    if (ranking.synonyms > 0) for (const s of synonymsOf(w)) add(termsOfWord(s, { ...analysis, exact: false }), ranking.synonyms);
    if (ranking.serverPrefixes && w.length >= 4) {
      for (const name of serverWords()) {
        if (name !== w && name.length >= 4 && (name.startsWith(w) || w.startsWith(name))) add(termsOfWord(name, analysis), 1);
      }
    }
  }
  return out;
}

