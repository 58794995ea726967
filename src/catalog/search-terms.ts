// The isolate's search terms, each a number: an index holds its terms as 16-bit numbers into one table rather than
// as a reference each (562,015 of them at 20,041 tools: 4.3 MiB of references, 1.1 MiB of numbers), and each term's
// text is held once in the isolate, however many indexes have it. A full table is left to the indexes that use it and
// a new one begun, so a number never changes its term.

/** Terms of one table: every number fits 16 bits. */
const TABLE_MAX = 1 << 16;

/** Terms and their numbers; only ever added to, up to `max`. */
export class TermTable {
  readonly strings: string[] = [];
  readonly #ids = new Map<string, number>();
  readonly #max: number;

  constructor(max = TABLE_MAX) {
    this.#max = max;
  }

  /** The term's number, added if new; undefined when the table is full and the term new. */
  id(term: string): number | undefined {
    const known = this.#ids.get(term);
    if (known !== undefined || this.strings.length >= this.#max) return known;
    this.#ids.set(term, this.strings.length);
    this.strings.push(term);
    return this.strings.length - 1;
  }
}

let current = new TermTable();

/** A list of term numbers: 16 bits a number in the isolate's tables, 32 in an index's own. */
export type TermIds = Uint16Array | Uint32Array;

/** `terms` numbered in `table`, or undefined when it cannot take them all. */
function numbered(table: TermTable, terms: readonly string[], ids: TermIds): TermIds | undefined {
  for (let t = 0; t < terms.length; t++) {
    const id = table.id(terms[t]!);
    if (id === undefined) return undefined;
    ids[t] = id;
  }
  return ids;
}

/**
 * The numbers of `terms` in one table, in their order, and that table: the current one, or a new one when it cannot
 * take them all (or, for an index of more distinct terms than a table holds, a table of its own).
 */
export function termIds(terms: readonly string[]): { table: TermTable; ids: TermIds } {
  if (terms.length > TABLE_MAX) {
    const own = new TermTable(Infinity);
    return { table: own, ids: numbered(own, terms, new Uint32Array(terms.length))! };
  }
  const ids = numbered(current, terms, new Uint16Array(terms.length));
  if (ids) return { table: current, ids };
  current = new TermTable();
  return { table: current, ids: numbered(current, terms, new Uint16Array(terms.length))! };
}

/** The isolate's one copy of `term` (the current table's), so the servers' terms are held once too. */
export function internTerm(term: string): string {
  const id = current.id(term);
  return id === undefined ? term : current.strings[id]!;
}
