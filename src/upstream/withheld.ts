// What an upstream must never show back to a member: the team's secrets sent in its headers, literal header values that
// look like credentials, the OAuth tokens the proxy holds for it. Every message the upstream sends is cleaned of them
// where the client's transport hands it up, before the SDK, a catalog, a cache, a log line or a host sees it: a member
// may use a tool, never learn the key behind it.
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { base64url } from "../lib/bytes.ts";

/** What stands where a withheld value was (it says that something was withheld, never what). */
export const WITHHELD = "[withheld]";
/**
 * Shorter values are not withheld from messages: they would match ordinary words and stretches of base64 data
 * (an image, a blob). A credential is longer; error text is still scrubbed of every header value (faults.ts).
 */
export const MIN_WITHHELD = 8;
/** What stands where a value's base64 was: base64 letters, so a blob or an image stays valid base64. */
const BASE64_MARK = "WITHHELD";

interface Form {
  needle: string;
  mark: string;
}

/**
 * The base64 of a value wherever it starts in the encoded data: for each of the three alignments, the letters that
 * encode the value's bits alone (the letters at either end also hold bits of what comes before or after it).
 */
function base64Forms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  const out: string[] = [];
  for (const shift of [0, 1, 2]) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const inner = base64url(padded).slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    out.push(inner, inner.replaceAll("-", "+").replaceAll("_", "/"));
  }
  return out;
}

/** The value as a URL component (undefined for text no URL can hold: a lone surrogate). */
function percentEncoded(value: string): string | undefined {
  try {
    return encodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** A value as an upstream may write it back: as is, JSON-escaped (JSON inside a string), percent-encoded, in base64. */
function formsOf(value: string): Form[] {
  const textual = [value, JSON.stringify(value).slice(1, -1), percentEncoded(value)].filter((form) => form !== undefined);
  const forms: Form[] = textual.map((needle) => ({ needle, mark: WITHHELD }));
  for (const needle of base64Forms(value)) forms.push({ needle, mark: BASE64_MARK.repeat(Math.ceil(needle.length / BASE64_MARK.length)).slice(0, needle.length) });
  const seen = new Set<string>();
  return forms.filter((f) => !seen.has(f.needle) && seen.add(f.needle));
}

/** Each value, and each long word of it ("Bearer <token>": an upstream may echo the token without its scheme). */
function wordsOf(values: readonly string[]): string[] {
  const words = values.flatMap((v) => [v, ...v.split(/\s+/)]).filter((w) => w.length >= MIN_WITHHELD);
  return [...new Set(words)];
}

/**
 * Header values error text is scrubbed of: each whole value of at least 4 characters, and each long word of it.
 * Wider than what messages are cleaned of: error text is the proxy's own wording around the upstream's, and loses
 * nothing a member needs when a short value goes too.
 */
export function errorSecrets(headers: Record<string, string>): string[] {
  const values = Object.values(headers).filter((v) => v.length >= 4);
  return [...new Set([...values, ...wordsOf(values)])];
}

/** The values one upstream client withholds, and the cleaning of text and messages by them. */
export class Withheld {
  readonly #fixed: readonly string[];
  /** OAuth tokens handed out for this upstream: the newest two (an answer under way may still carry the older). */
  #tokens: string[] = [];
  #forms: Form[] = [];

  constructor(values: readonly string[]) {
    this.#fixed = wordsOf(values);
    this.#build();
  }

  /** Longest first: a form that holds another (a whole value and its word) is replaced whole. */
  #build(): void {
    this.#forms = [...this.#fixed, ...this.#tokens].flatMap(formsOf).sort((a, b) => b.needle.length - a.needle.length);
  }

  /** A token the proxy sends the upstream from now on. */
  learn(token: string): void {
    if (token.length < MIN_WITHHELD || this.#tokens.includes(token) || this.#fixed.includes(token)) return;
    this.#tokens = [...this.#tokens.slice(-1), token];
    this.#build();
  }

  /** Every value in every form it is looked for in, longest first (what error text is scrubbed of as well). */
  get needles(): string[] {
    return this.#forms.map((f) => f.needle);
  }

  /** The text with each withheld value, in any of its forms, replaced by its mark. */
  text(text: string): string {
    let out = text;
    for (const { needle, mark } of this.#forms) if (out.includes(needle)) out = out.replaceAll(needle, mark);
    return out;
  }

  /**
   * Cleans every string of a parsed message, object keys included, in place (the message is the transport's fresh
   * parse, no one else's). After JSON parsing, so a value split by escapes in the raw bytes is found whole.
   * Iterative: an upstream's nesting, however deep, costs no stack.
   */
  message<T>(message: T): T {
    if (this.#forms.length === 0 || typeof message !== "object" || message === null) return message;
    const pending: object[] = [message];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) node[i] = this.#value(node[i], pending);
        continue;
      }
      const record = node as Record<string, unknown>;
      const keys = Object.keys(record);
      const renamed = keys.map((key) => this.text(key));
      if (renamed.every((key, i) => key === keys[i])) {
        for (const key of keys) record[key] = this.#value(record[key], pending);
        continue;
      }
      // A key that held a withheld value: the entries again, in their order, under the clean keys (defined, so that a
      // key such as "__proto__" stays a plain entry).
      const values = keys.map((key) => this.#value(record[key], pending));
      for (const key of keys) delete record[key];
      renamed.forEach((key, i) => Object.defineProperty(record, key, { value: values[i], enumerable: true, writable: true, configurable: true }));
    }
    return message;
  }

  #value(value: unknown, pending: object[]): unknown {
    if (typeof value === "string") return this.text(value);
    if (typeof value === "object" && value !== null) pending.push(value);
    return value;
  }
}

type Handler = NonNullable<Transport["onmessage"]>;

/**
 * Every message `transport` hands up passes through `clean` first, whoever installs the handler and whenever: the
 * SDK installs one for the era probe and another at connect, and the client wraps the SDK's (fetch-chain.ts). The
 * transports call `this.onmessage?.(…)` for every message they read (each SSE event, a JSON body, a 400's JSON-RPC
 * error, the HTTP+SSE stream), so an accessor over that field sees them all. Each message is cleaned once, however
 * many handlers are chained.
 */
export function cleanInbound(transport: Transport, clean: (message: JSONRPCMessage) => void): void {
  const cleaned = new WeakSet<object>();
  const wrappers = new WeakMap<Handler, Handler>();
  const wrap = (handler: Handler): Handler => {
    let wrapper = wrappers.get(handler);
    if (!wrapper) {
      wrapper = ((message: JSONRPCMessage, extra) => {
        if (!cleaned.has(message)) {
          clean(message);
          cleaned.add(message);
        }
        handler(message, extra);
      }) as Handler;
      wrappers.set(handler, wrapper);
    }
    return wrapper;
  };
  let handler = transport.onmessage;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (handler ? wrap(handler) : undefined),
    set: (next: Handler | undefined) => {
      handler = next;
    },
  });
}
