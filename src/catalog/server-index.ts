// Pure: a server's index, the first step of describing it: every tool named, one line each (`- name: what it
// does`), within a token cap. Past the cap the descriptions shrink (the first sentence, then its first clause, then
// a few words), then the tools that still do not fit keep their names alone (the first ones in code-point order keep
// their words), and at worst every tool is a name alone; a name is never dropped, so the agent always sees every
// tool it can ask for. The same tools, cost and cap give the same bytes.
import type { ConfigMode } from "../config/validate.ts";
import type { CatalogTool } from "./catalog.ts";
import { PATH_SEPARATOR } from "./code-names.ts";
import { exposedName } from "./names.ts";
import { byCodePoint, cutAtWord, oneLine } from "./render.ts";
import type { TokenCounter } from "./tokenizer.ts";

/** A server's index (discover_tool with `server` alone, the code view's describe of a namespace) costs at most this, each of its text and structured form. */
export const SERVER_INDEX_TOKENS = 2_500;

/** One line of an index: a tool's name, and what it does in a few words ("" where only the name fits). */
export interface IndexLine {
  name: string;
  about: string;
}

/** How far the descriptions had to shrink to fit: whole first sentences, clauses, a few words, some or all names alone. */
export type IndexDetail = "sentences" | "clauses" | "words" | "some names" | "names";

export interface FittedIndex {
  lines: IndexLine[];
  detail: IndexDetail;
  /** What `cost` said of these lines: at most the cap, unless the names alone cost more. */
  tokens: number;
}

/** The widest a clause may be at each step after the first sentence (characters): a few steps, each a count. */
const CLAUSE_CHARS = [64, 52, 44];
const WORDS_CHARS = [36, 28];
/** Where a clause ends inside a sentence: a semicolon, a colon, a dash between spaces, or an opening parenthesis. */
const CLAUSE_END = /\s*(?:[;:]\s|\s[—–-]\s|\()/;

/** The first clause of a description's first sentence, at most `max` characters (cut at a word, ended with …). */
export function firstClause(description: string | undefined, max: number): string {
  const sentence = oneLine(description);
  const end = CLAUSE_END.exec(sentence);
  const clause = end !== null && end.index > 0 ? sentence.slice(0, end.index) : sentence;
  return cutAtWord(clause, max, 1 / 3);
}

/** The shrinking steps, widest first: each gives a tool's words at that step. */
const STEPS: ReadonlyArray<{ detail: IndexDetail; about: (description: string | undefined) => string }> = [
  { detail: "sentences", about: (d) => oneLine(d) },
  ...CLAUSE_CHARS.map((max) => ({ detail: "clauses" as const, about: (d: string | undefined) => firstClause(d, max) })),
  ...WORDS_CHARS.map((max) => ({ detail: "words" as const, about: (d: string | undefined) => firstClause(d, max) })),
];

/**
 * The index of `tools` whose `cost` (the caller's, over everything it renders from the lines) is at most `cap`:
 * the widest step that fits whole, else the most tools (in code-point order) that keep a few words with the rest
 * named alone, else every name alone (which may cost more than the cap: names never drop).
 */
export function fitIndex(tools: readonly CatalogTool[], cost: (lines: readonly IndexLine[]) => number, cap: number): FittedIndex {
  const sorted = [...tools].sort((a, b) => byCodePoint(a.name, b.name));
  let words: IndexLine[] = [];
  for (const step of STEPS) {
    const lines = sorted.map((t) => ({ name: t.name, about: step.about(t.description) }));
    const tokens = cost(lines);
    if (tokens <= cap) return { lines, detail: step.detail, tokens };
    words = lines;
  }
  const named = (keep: number) => words.map((l, i) => (i < keep ? l : { name: l.name, about: "" }));
  // The most tools that keep their words: the cost grows with each one kept, so the largest that fits is searched.
  let lo = 0;
  let hi = words.length - 1;
  let best: FittedIndex | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const lines = named(mid);
    const tokens = cost(lines);
    if (tokens <= cap) {
      best = { lines, detail: mid === 0 ? "names" : "some names", tokens };
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best !== undefined) return best;
  const lines = named(0);
  return { lines, detail: "names", tokens: cost(lines) };
}

/** The index as text: `- <prefix><name>: <about>` a line (`- <prefix><name>` where only the name fits). */
export function indexText(lines: readonly IndexLine[], prefix = ""): string {
  return lines.map((l) => (l.about ? `- ${prefix}${l.name}: ${l.about}` : `- ${prefix}${l.name}`)).join("\n");
}

/** The index as structured content: name → words ("" where only the name fits), in the text's order. */
export function indexObject(lines: readonly IndexLine[]): Record<string, string> {
  return Object.fromEntries(lines.map((l) => [l.name, l.about]));
}

/**
 * Said after an index whose descriptions shrank ("" when every tool kept its first sentence). One sentence for
 * every step, so a cost measured with it holds whichever step fits.
 */
export const shrunkNote = (detail: IndexDetail): string => (detail === "sentences" ? "" : SHRUNK);
export const SHRUNK = "Descriptions shortened to fit.";

/** The larger of the two costs: each of an answer's text and structured form must fit on its own. */
export const answerCost = (counter: TokenCounter, answer: { text: string; structured: unknown }): number =>
  Math.max(counter.count(answer.text), counter.count(JSON.stringify(answer.structured)));

/**
 * The meta view's index of one loaded server (discover_tool with `server` alone): the tools under their bare names,
 * the name use_tool calls them by said once, then the lookup that gives one's schema.
 */
export function serverIndex(mode: ConfigMode, server: string, description: string | undefined, tools: readonly CatalogTool[], counter: TokenCounter, cap = SERVER_INDEX_TOKENS) {
  const one = exposedName(mode, server, "<tool>");
  const about = oneLine(description);
  const render = (lines: readonly IndexLine[], note: string) => ({
    text: [
      `"${server}"${about ? ` (${about})` : ""}: ${lines.length} tools, called with use_tool as "${one}":`,
      indexText(lines),
      `${note ? `${note} ` : ""}discover_tool ${JSON.stringify({ tool_name: one })} gives one's description and schema.`,
    ].join("\n"),
    structured: { server, tools: indexObject(lines) },
  });
  const fitted = fitIndex(tools, (lines) => answerCost(counter, render(lines, SHRUNK)), cap);
  return render(fitted.lines, shrunkNote(fitted.detail));
}

/**
 * The code view's index of a namespace (describe of a whole namespace): its description, every method
 * `namespace.method: what it does`, then the describe that declares methods, with two of its own as the example.
 */
export function namespaceIndex(namespace: string, description: string | undefined, methods: readonly CatalogTool[], counter: TokenCounter, describeTool: string, cap = SERVER_INDEX_TOKENS): string {
  if (methods.length === 0) return `The namespace "${namespace}" offers no methods in this session.`;
  const about = oneLine(description);
  const prefix = `${namespace}${PATH_SEPARATOR}`;
  const paths = [...methods].sort((a, b) => byCodePoint(a.name, b.name)).slice(0, 2).map((m) => prefix + m.name).join(", ");
  const render = (lines: readonly IndexLine[], note: string) =>
    [
      `${namespace}${about ? `: ${about}` : ""} (${methods.length} methods)`,
      indexText(lines, prefix),
      `${note ? `${note} ` : ""}Declarations: ${describeTool} ${JSON.stringify({ path: paths })} (method paths, comma-separated).`,
    ].join("\n");
  const fitted = fitIndex(methods, (lines) => counter.count(render(lines, SHRUNK)), cap);
  return render(fitted.lines, shrunkNote(fitted.detail));
}
