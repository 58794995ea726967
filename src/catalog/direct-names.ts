// Pure: the names the direct view gives upstream tools. Hosts put tool names into model APIs whose strictest common
// rule is `^[a-zA-Z0-9_-]{1,64}$` (Anthropic's tool names, OpenAI's function names), so `server/tool` cannot travel
// as it is. Config-file mode joins server and tool with `__` (`github__create_issue`); single-MCP mode keeps the
// upstream's own name. A name that would break the rule (a `.` or `/` in a tool name, more than 64 characters) or
// could read as another server's tool gets its safe form, shortened, and `-` plus 8 hex digits of a hash of the
// registry name: deterministic, so the same config names the same tool the same way in every session.
import type { ConfigMode } from "../config/validate.ts";
import { byCodePoint } from "./render.ts";

/** The strictest tool-name rule common to the hosts' model APIs. */
export const HOST_SAFE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_HOST_NAME = 64;
/** Between server and tool in config-file mode. */
export const DIRECT_SEPARATOR = "__";
const HASH_DIGITS = 8;

/** One tool to name: its upstream, its upstream name, and the name the registry calls it by. */
export interface DirectNameInput {
  server: string;
  tool: string;
  registryName: string;
}

/** FNV-1a (32 bits) over the UTF-16 code units, as 8 hex digits: short and the same everywhere; no secret in it. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(HASH_DIGITS, "0");
}

/**
 * Servers whose tools could take another server's names: `a` + `__` + `_x` and `a_` + `__` + `x` are both
 * `a___x`, and `a` + `__` + `b__c` is `a__b` + `__` + `c`. That happens only when a server's name is another's
 * followed by `_`; such a server's tools always get a hash, so no name depends on which servers are loaded.
 */
export function ambiguousServers(servers: readonly string[]): Set<string> {
  return new Set(servers.filter((s) => servers.some((other) => other !== s && s.startsWith(`${other}_`))));
}

/** The plain name of a tool and whether it can be used as it is. */
function plain(mode: ConfigMode, entry: DirectNameInput, ambiguous: ReadonlySet<string>): { base: string; exact: boolean } {
  const raw = mode === "single" ? entry.tool : `${entry.server}${DIRECT_SEPARATOR}${entry.tool}`;
  const base = raw.replace(/[^A-Za-z0-9_-]/g, "_");
  return { base, exact: base === raw && base.length <= MAX_HOST_NAME && !ambiguous.has(entry.server) };
}

/** The safe form cut to leave room for `-` and the hash of `key`. */
function hashed(base: string, key: string): string {
  return `${base.slice(0, MAX_HOST_NAME - HASH_DIGITS - 1)}-${shortHash(key)}`;
}

/**
 * Direct name → registry name, for the given tools. Tools whose plain name is usable keep it; the others get a
 * hashed one. The input's order does not matter: the rare hashed name that is taken already (by a plain name, or
 * by a hash that happens to be equal) is hashed again with a counter, in registry-name order, so the same set of
 * tools is always named the same.
 */
export function directNames(mode: ConfigMode, tools: readonly DirectNameInput[], ambiguous: ReadonlySet<string> = new Set()): Map<string, string> {
  const sorted = [...tools].sort((a, b) => byCodePoint(a.registryName, b.registryName));
  const names = new Map<string, string>();
  const later: Array<{ base: string; registryName: string }> = [];
  for (const entry of sorted) {
    const { base, exact } = plain(mode, entry, ambiguous);
    if (exact && !names.has(base)) names.set(base, entry.registryName);
    else later.push({ base, registryName: entry.registryName });
  }
  for (const { base, registryName } of later) {
    let name = hashed(base, registryName);
    for (let n = 1; names.has(name); n++) name = hashed(base, `${registryName}#${n}`);
    names.set(name, registryName);
  }
  return names;
}
