// Pure: the indexes of the loaded upstreams searched as one set (`unionOf`), with what a search derives from each
// index at its first search (`prepare`).
import { SEARCH_FIELDS, SERVER_FIELD_COUNT, TOOL_FIELD_COUNT, type ToolIndex } from "./search-index.ts";
import { words } from "./search-analysis.ts";

/** What a search needs of an index beyond its JSON, derived on its first search and kept while the index lives. */
export interface Prepared {
  /** Per SEARCH_FIELDS field, the sum of its length over the index's tools (a server's counted once per tool). */
  totals: number[];
  /** Per server entry, how many tools it has (its tools are those whose `toolServer` it is). */
  serverSize: Uint32Array;
  /** Per tool, its server entry. */
  toolServer: Int32Array;
}

const prepared = new WeakMap<ToolIndex, Prepared>();

function prepare(index: ToolIndex): Prepared {
  let p = prepared.get(index);
  if (p) return p;
  const entry = new Map(index.servers.map((s, i) => [s.name, i]));
  const toolServer = new Int32Array(index.tools.length);
  const serverSize = new Uint32Array(index.servers.length);
  const totals = new Array<number>(SEARCH_FIELDS.length).fill(0);
  for (let tool = 0; tool < index.tools.length; tool++) {
    const s = entry.get(index.tools.server(tool)) ?? -1;
    toolServer[tool] = s;
    if (s >= 0) {
      serverSize[s]!++;
      const lengths = index.servers[s]!.lengths;
      for (let f = 0; f < SERVER_FIELD_COUNT; f++) totals[TOOL_FIELD_COUNT + f]! += lengths[f]!;
    }
    for (let f = 0; f < TOOL_FIELD_COUNT; f++) totals[f]! += index.lengths[tool * TOOL_FIELD_COUNT + f]!;
  }
  p = { totals, serverSize, toolServer };
  prepared.set(index, p);
  return p;
}

/**
 * A set of indexes searched together, with one lookup table for all their terms: a query term is one lookup,
 * however many upstreams there are. Kept for the last few sets searched (a session searches the same loaded set
 * again and again), keyed by the set's first index and checked member by member.
 */
export interface Union {
  members: readonly ToolIndex[];
  preps: Prepared[];
  /** Tool t of member i is number offsets[i] + t in the union. */
  offsets: number[];
  count: number;
  totals: number[];
  /** Per term, where it has postings: `[member, term position]` flattened. */
  terms: PositionTable;
  /** Per term, the servers having it: `[member, server entry, term position]` flattened. */
  serverTerms: PositionTable;
  /** The words of every server's name (for `serverPrefixes`). */
  serverWords: string[];
}

const UNIONS_KEPT = 4;

/** A list of positions: 16 bits a number when every one fits. */
export type Positions = Uint16Array | Uint32Array;

/**
 * Per term, its list of positions, every list in one typed array: a table of a whole team's terms is a million
 * numbers, an eighth or a quarter of the bytes of arrays of numbers, and a typed array per term would cost more than
 * its numbers.
 */
export class PositionTable {
  readonly #slots = new Map<string, number>();
  /** List k is numbers[starts[k]] to numbers[starts[k + 1]] (exclusive). */
  readonly #starts: Uint32Array;
  readonly numbers: Positions;

  constructor(lists: ReadonlyMap<string, number[]>) {
    this.#starts = new Uint32Array(lists.size + 1);
    let total = 0;
    let wide = false;
    for (const list of lists.values()) {
      total += list.length;
      wide ||= list.some((n) => n >= 1 << 16);
    }
    this.numbers = wide ? new Uint32Array(total) : new Uint16Array(total);
    let at = 0;
    for (const [term, list] of lists) {
      this.#starts[this.#slots.size] = at;
      this.#slots.set(term, this.#slots.size);
      this.numbers.set(list, at);
      at += list.length;
    }
    this.#starts[this.#slots.size] = at;
  }

  /** The term's positions, if it has any. */
  get(term: string): Positions | undefined {
    const slot = this.#slots.get(term);
    return slot === undefined ? undefined : this.numbers.subarray(this.#starts[slot]!, this.#starts[slot + 1]!);
  }
}
const unions = new WeakMap<ToolIndex, Union[]>();

/** The set `list` as one: the kept union of the same indexes in the same order, else a new one (then kept). */
export function unionOf(list: readonly ToolIndex[]): Union {
  const first = list[0];
  const kept = first ? (unions.get(first) ?? []) : [];
  const found = kept.find((u) => u.members.length === list.length && u.members.every((m, i) => m === list[i]));
  if (found) return found;
  const push = <K>(map: Map<K, number[]>, key: K, ...values: number[]): void => {
    let entry = map.get(key);
    if (!entry) map.set(key, (entry = []));
    entry.push(...values);
  };
  const terms = new Map<string, number[]>();
  const serverTerms = new Map<string, number[]>();
  const offsets: number[] = [];
  const totals = new Array<number>(SEARCH_FIELDS.length).fill(0);
  const serverWords = new Set<string>();
  let count = 0;
  const preps = list.map((index, i) => {
    const p = prepare(index);
    offsets.push(count);
    count += index.tools.length;
    p.totals.forEach((t, f) => (totals[f]! += t));
    const strings = index.table.strings;
    index.termIds.forEach((id, at) => push(terms, strings[id]!, i, at));
    index.servers.forEach((server, s) => {
      server.terms.forEach((term, at) => push(serverTerms, term, i, s, at));
      for (const w of words(server.name)) serverWords.add(w);
    });
    return p;
  });
  const union: Union = { members: [...list], preps, offsets, count, totals, terms: new PositionTable(terms), serverTerms: new PositionTable(serverTerms), serverWords: [...serverWords] };
  if (first) unions.set(first, [union, ...kept].slice(0, UNIONS_KEPT));
  return union;
}
