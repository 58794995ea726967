// Pure: the names code mode gives upstreams and tools. A program calls `github.create_pull_request({...})`: each
// upstream is a namespace (a variable of the program, so an Identifier: no reserved word, no global the program
// needs) and each tool a method (a property name, so reserved words are fine: `mongodb.export(...)` is valid JS).
// Config server names allow `-`, tool names anything, so both get an identifier form. Namespaces depend only on the
// configured servers and methods only on their own server's tools, never on which servers are loaded: the same
// config and catalogs give the same names in every session. A name that reads like another's (`get-sum` and
// `get.sum`), after the one that needed no change, gets `_` and 8 hex digits of a hash of what it names, as the
// direct view does (direct-names.ts).
import { shortHash, type DirectNameInput } from "./direct-names.ts";
import { byCodePoint } from "./render.ts";

/** A JavaScript identifier (ASCII only: what every model writes and every tokenizer knows). */
export const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Between a namespace and a method in a code path. */
export const PATH_SEPARATOR = ".";

/** One tool to name: its upstream, its upstream name, and the name the registry calls it by (as for the direct view). */
export type CodeNameInput = DirectNameInput;

/** Words that cannot name a variable in a strict-mode module (ES2023 reserved words, `let`, `static`, `await`…). */
const RESERVED_WORDS = new Set(
  (
    "await break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if implements import in instanceof interface let new null package private protected public return static " +
    "super switch this throw true try typeof var void while with yield arguments eval undefined NaN Infinity"
  ).split(" "),
);

/** Globals a program may use, or the runner defines: a namespace by one of these names would hide it. */
const SANDBOX_GLOBALS = new Set(
  (
    "globalThis console Object Function Array String Number Boolean Symbol BigInt Math JSON Date RegExp Error TypeError " +
    "RangeError SyntaxError ReferenceError AggregateError Promise Map Set WeakMap WeakSet WeakRef Proxy Reflect Intl " +
    "ArrayBuffer DataView Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array " +
    "BigInt64Array BigUint64Array Atomics isNaN isFinite parseInt parseFloat encodeURI decodeURI encodeURIComponent " +
    "decodeURIComponent escape unescape structuredClone queueMicrotask setTimeout clearTimeout setInterval " +
    "clearInterval atob btoa crypto fetch caches navigator performance process self scheduler URL URLSearchParams " +
    "TextEncoder TextDecoder Headers Request Response Blob FormData AbortController AbortSignal"
  ).split(" "),
);

/**
 * Namespace properties that are never methods: `then` (else `await github` would call a tool named `then`) and the
 * names JavaScript looks up on its own when it converts or prints a value (`String(github)`, `JSON.stringify`).
 * The runner never sends them as tool calls (src/views/code/runner.ts), so a tool by one of these names gets `_` after it.
 */
export const UNCALLABLE_METHODS: readonly string[] = [
  "then",
  "toJSON",
  "toString",
  "toLocaleString",
  "valueOf",
  "constructor",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "__proto__",
];

/** Nothing may name a namespace that could not be a `const` of the program, or would hide a global it needs. */
const NAMESPACE_TAKEN = new Set([...RESERVED_WORDS, ...SANDBOX_GLOBALS]);

/**
 * The identifier form of a name: accents dropped (`créer` → `creer`), every other character outside
 * `[A-Za-z0-9_$]` made `_`, `_` before a leading digit, and `_` after a word in `taken`.
 */
export function identifierOf(raw: string, taken: ReadonlySet<string> = new Set()): string {
  let id = raw.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9_$]/g, "_");
  if (id === "" || /^[0-9]/.test(id)) id = `_${id}`;
  return taken.has(id) ? `${id}_` : id;
}

/**
 * Identifier → key, for names (`raw`) each standing for a distinct `key`. A name that is an identifier already
 * keeps it; so does one whose identifier form no other name shares. The others get the form plus `_` and the hash
 * of their key, hashed again with a counter in the rare case that this is taken, in key order, so the same set of
 * names gives the same identifiers whatever order it comes in.
 */
function identifiers(entries: ReadonlyArray<{ raw: string; key: string }>, taken: ReadonlySet<string>): Map<string, string> {
  const sorted = [...entries].sort((a, b) => byCodePoint(a.key, b.key));
  const forms = sorted.map((e) => ({ ...e, id: identifierOf(e.raw, taken) }));
  const sharing = new Map<string, number>();
  for (const { id } of forms) sharing.set(id, (sharing.get(id) ?? 0) + 1);
  const names = new Map<string, string>();
  const later: Array<{ id: string; key: string }> = [];
  for (const { raw, key, id } of forms) {
    if ((id === raw || sharing.get(id) === 1) && !names.has(id)) names.set(id, key);
    else later.push({ id, key });
  }
  for (const { id, key } of later) {
    let name = `${id}_${shortHash(key)}`;
    for (let n = 1; names.has(name); n++) name = `${id}_${shortHash(`${key}#${n}`)}`;
    names.set(name, key);
  }
  return names;
}

/** Namespace → server, for every configured server (loaded or not, so no name depends on what is loaded). */
export function namespaceNames(servers: readonly string[]): Map<string, string> {
  return identifiers(
    [...new Set(servers)].map((server) => ({ raw: server, key: server })),
    NAMESPACE_TAKEN,
  );
}

/** Method → registry name, for the tools of one server. */
export function methodNames(tools: ReadonlyArray<Pick<CodeNameInput, "tool" | "registryName">>): Map<string, string> {
  return identifiers(
    tools.map((t) => ({ raw: t.tool, key: t.registryName })),
    new Set(UNCALLABLE_METHODS),
  );
}

/**
 * Code path (`namespace.method`) → registry name, for the given tools. `servers` is every configured server,
 * as for `namespaceNames`; a tool of a server not in it is left out.
 */
export function codePaths(servers: readonly string[], tools: readonly CodeNameInput[]): Map<string, string> {
  const paths = new Map<string, string>();
  for (const [namespace, server] of namespaceNames(servers)) {
    for (const [method, registryName] of methodNames(tools.filter((t) => t.server === server))) {
      paths.set(`${namespace}${PATH_SEPARATOR}${method}`, registryName);
    }
  }
  return paths;
}

/** The namespace and method of a code path; undefined unless it is two identifiers joined by one `.`. */
export function splitCodePath(path: string): { namespace: string; method: string } | undefined {
  const [namespace, method, ...rest] = path.split(PATH_SEPARATOR);
  if (rest.length > 0 || namespace === undefined || method === undefined) return undefined;
  return IDENTIFIER.test(namespace) && IDENTIFIER.test(method) ? { namespace, method } : undefined;
}
