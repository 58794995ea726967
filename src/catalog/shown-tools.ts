// Pure: what an index's hits show of its tools (exposed name, server, one line), held compactly: every name and line
// in one string with their ends in a typed array (a name without its server's `server/`, which every name of an
// upstream's index begins with), and each tool's server as a number into the few servers. A string and an object per
// tool cost more than their text; a hit's strings are cut out when it is answered.

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
  readonly #ends: Uint16Array | Uint32Array;
  /** Every name is its server's, a slash and the part kept in the text. */
  readonly #prefixed: boolean;
  readonly #servers: string[];
  readonly #serverOf: Uint16Array | Uint32Array;

  constructor(tools: readonly ShownTool[]) {
    this.length = tools.length;
    this.#prefixed = tools.every((t) => t.name.startsWith(`${t.server}/`));
    const names = tools.map((t) => (this.#prefixed ? t.name.slice(t.server.length + 1) : t.name));
    const texts = [...names, ...tools.map((t) => t.line)];
    // Joined into a fresh flat string: no part of it refers to a description it was cut from.
    this.#text = JSON.parse(JSON.stringify(texts.join(""))) as string;
    this.#ends = this.#text.length < 1 << 16 ? new Uint16Array(texts.length) : new Uint32Array(texts.length);
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
    const part = this.#text.slice(this.#start(i), this.#ends[i]);
    return this.#prefixed ? `${this.server(i)}/${part}` : part;
  }

  /** Whether tool i's name is `name`, with no string made. */
  nameIs(i: number, name: string): boolean {
    return this.nameIsIn(i, undefined, name);
  }

  /** Whether tool i's name is `prefix/part` (or `part`, without a prefix), with no string made. */
  nameIsIn(i: number, prefix: string | undefined, part: string): boolean {
    const start = this.#start(i);
    const length = this.#ends[i]! - start;
    if (!this.#prefixed) {
      if (prefix === undefined) return length === part.length && this.#text.startsWith(part, start);
      const at = start + prefix.length + 1;
      return length === at - start + part.length && this.#text.startsWith(prefix, start) && this.#text.charCodeAt(at - 1) === 0x2f && this.#text.startsWith(part, at);
    }
    const server = this.server(i);
    if (prefix !== undefined) return prefix === server && length === part.length && this.#text.startsWith(part, start);
    // The whole name given: its server's prefix, then the part kept.
    const from = server.length + 1;
    if (part.length !== from + length || !part.startsWith(server) || part.charCodeAt(server.length) !== 0x2f) return false;
    for (let k = 0; k < length; k++) if (this.#text.charCodeAt(start + k) !== part.charCodeAt(from + k)) return false;
    return true;
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
