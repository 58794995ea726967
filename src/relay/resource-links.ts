// The resources that tool results linked to, by upstream: how a URI that no list or template claims finds the
// server that handed it out (config-file mode; single-MCP mode has only one server to ask).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { log } from "../lib/log.ts";

/** At most this many links are remembered per session; past it the oldest are forgotten first. */
export const MAX_LINKS = 2000;
/** Longer URIs are not remembered (they still go through the other routing rules). */
export const MAX_LINK_URI = 2048;

/** One remembered link as stored; `seq` orders links oldest first. */
export interface StoredLink {
  seq: number;
  uri: string;
  upstream: string;
}

/** Durable storage of the links (the session object's), so they survive its eviction. */
export interface LinkStore {
  /** Every stored link, in any order. */
  links(): Promise<StoredLink[]>;
  /** Writes the links in `put` and deletes those numbered in `remove`. */
  saveLinks(put: StoredLink[], remove: number[]): Promise<void>;
}

/** The URIs a tool result points at: its `resource_link` items and its embedded `resource` items. */
export function linkedUris(result: CallToolResult): string[] {
  const content: unknown = result.content;
  if (!Array.isArray(content)) return [];
  const uris: string[] = [];
  for (const item of content as unknown[]) {
    if (typeof item !== "object" || item === null) continue;
    const { type, uri, resource } = item as { type?: unknown; uri?: unknown; resource?: unknown };
    const found = type === "resource_link" ? uri : type === "resource" && typeof resource === "object" && resource !== null ? (resource as { uri?: unknown }).uri : undefined;
    if (typeof found === "string" && found.length > 0 && found.length <= MAX_LINK_URI) uris.push(found);
  }
  return uris;
}

function unsaved(what: "read" | "written", err: unknown): void {
  log({ event: "unhandled", error: `resource links could not be ${what}: ${err instanceof Error ? err.message : String(err)}` });
}

/**
 * Which upstream's tool result last linked each URI, for the session. Bounded (`max`, oldest out); read from the
 * store on first use after the object started, and written only when a result brings a link not known yet.
 */
export class ResourceLinks {
  readonly #store: LinkStore;
  readonly #max: number;
  /** URI → who linked it and the link's number; a Map keeps insertion order, so the first entry is the oldest. */
  readonly #links = new Map<string, { upstream: string; seq: number }>();
  #next = 0;
  #loaded: Promise<void> | undefined;

  constructor(store: LinkStore, max = MAX_LINKS) {
    this.#store = store;
    this.#max = Math.max(1, max);
  }

  /**
   * Remembers the resources `result` links to as `upstream`'s; a relink by another upstream moves the URI to it.
   * Never throws: a storage failure costs only the memory, never the tool call.
   */
  async remember(upstream: string, result: CallToolResult): Promise<void> {
    const uris = linkedUris(result);
    if (uris.length === 0) return;
    try {
      await this.#load();
    } catch (err) {
      return unsaved("read", err);
    }
    const put = new Map<number, StoredLink>();
    const remove: number[] = [];
    for (const uri of uris) {
      const known = this.#links.get(uri);
      if (known?.upstream === upstream) continue;
      if (known) {
        this.#links.delete(uri);
        remove.push(known.seq);
      }
      const seq = this.#next++;
      this.#links.set(uri, { upstream, seq });
      put.set(seq, { seq, uri, upstream });
    }
    for (const seq of this.#trim()) if (!put.delete(seq)) remove.push(seq);
    if (put.size === 0 && remove.length === 0) return;
    // On failure the links still route in this instance; only surviving an eviction is lost.
    await this.#store.saveLinks([...put.values()], remove).catch((err: unknown) => unsaved("written", err));
  }

  /** The upstream whose tool result linked `uri`, if one did in this session. */
  async linkedBy(uri: string): Promise<string | undefined> {
    await this.#load();
    return this.#links.get(uri)?.upstream;
  }

  /** How many links are remembered (for tests and the bound). */
  get size(): number {
    return this.#links.size;
  }

  #load(): Promise<void> {
    this.#loaded ??= this.#store.links().then(
      (rows) => {
        // Nothing is remembered before the store answered: every change waits for this load first.
        for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
          this.#links.set(row.uri, { upstream: row.upstream, seq: row.seq });
          this.#next = Math.max(this.#next, row.seq + 1);
        }
        // A smaller bound than the one the links were stored under.
        const extra = this.#trim();
        if (extra.length > 0) void this.#store.saveLinks([], extra).catch((err: unknown) => unsaved("written", err));
      },
      (err: unknown) => {
        this.#loaded = undefined;
        throw err;
      },
    );
    return this.#loaded;
  }

  /** Forgets the oldest links beyond the bound; returns their numbers. */
  #trim(): number[] {
    const dropped: number[] = [];
    for (const [uri, link] of this.#links) {
      if (this.#links.size <= this.#max) break;
      this.#links.delete(uri);
      dropped.push(link.seq);
    }
    return dropped;
  }
}
