// Pure: what an index's hits show of its tools (exposed name, server, one line), held compactly: every name and line
// in one string with their ends in a typed array, and each tool's server as a number into the few servers. A string
// and an object per tool cost more than their text (about 2 MiB of 17 at 20,041 tools); a hit's strings are cut out
// when it is answered.

/** One tool as a hit shows it (and as the stored form lists it). */
export interface ShownTool {
  name: string;
  server: string;
  line: string;
}

export class ShownTools {
  readonly length: number;
  /** Every name, then every line, end to end. */
  readonly #text: string;
  /** Text k (names 0..length-1, then lines) ends at ends[k] and starts where text k-1 ends. */
  readonly #ends: Uint32Array;
  readonly #servers: string[];
  readonly #serverOf: Uint16Array | Uint32Array;

  constructor(tools: readonly ShownTool[]) {
    this.length = tools.length;
    const texts = [...tools.map((t) => t.name), ...tools.map((t) => t.line)];
    // Joined into a fresh flat string: no part of it refers to a description it was cut from.
    this.#text = JSON.parse(JSON.stringify(texts.join(""))) as string;
    this.#ends = new Uint32Array(texts.length);
    let end = 0;
    texts.forEach((t, k) => (this.#ends[k] = end += t.length));
    const numbers = new Map<string, number>();
    for (const t of tools) if (!numbers.has(t.server)) numbers.set(t.server, numbers.size);
    this.#servers = [...numbers.keys()];
    this.#serverOf = numbers.size < 1 << 16 ? new Uint16Array(tools.length) : new Uint32Array(tools.length);
    tools.forEach((t, i) => (this.#serverOf[i] = numbers.get(t.server)!));
  }

  #start = (k: number): number => (k === 0 ? 0 : this.#ends[k - 1]!);

  name(i: number): string {
    return this.#text.slice(this.#start(i), this.#ends[i]);
  }

  /** Whether tool i's name is `name`, with no string made. */
  nameIs(i: number, name: string): boolean {
    const start = this.#start(i);
    return this.#ends[i]! - start === name.length && this.#text.startsWith(name, start);
  }

  server(i: number): string {
    return this.#servers[this.#serverOf[i]!]!;
  }

  line(i: number): string {
    return this.#text.slice(this.#start(this.length + i), this.#ends[this.length + i]);
  }

  /** Every tool as a list (the stored form). */
  list(): ShownTool[] {
    return Array.from({ length: this.length }, (_, i) => ({ name: this.name(i), server: this.server(i), line: this.line(i) }));
  }

  /** Estimated bytes: the text (two bytes a character at most), the numbers, the servers' names. */
  bytes(): number {
    return 2 * this.#text.length + this.#ends.byteLength + this.#serverOf.byteLength + this.#servers.reduce((k, s) => k + 2 * s.length + 24, 0);
  }
}
