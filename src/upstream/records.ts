// What a session remembers of each upstream across evictions: the record union, its transitions as pure
// functions, the durable store's interface, and the in-memory book of records written through to it.
import type { UpstreamSpec } from "../config/validate.ts";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { KeptFailure } from "../lib/upstream-fault.ts";

/** Consecutive failed loads after which a lazy upstream is no longer offered. */
export const MAX_LOAD_FAILURES = 3;

/** What the session remembers of one upstream across evictions (no record: eager not tried yet, or lazy untouched). */
export const UpstreamStatus = {
  /** Connected once; its catalog is known (an eager upstream, or a lazy one that was loaded). */
  ready: "ready",
  /** An eager upstream that failed at session start. */
  failed: "failed",
  /** A lazy upstream whose loads failed, not yet too often. */
  lazy: "lazy",
  /** A lazy upstream that failed MAX_LOAD_FAILURES times in a row: unknown from then on. */
  evicted: "evicted",
} as const;
export type UpstreamStatus = (typeof UpstreamStatus)[keyof typeof UpstreamStatus];

export type UpstreamRecord =
  | { status: typeof UpstreamStatus.ready; catalog: UpstreamCatalog }
  | ({ status: typeof UpstreamStatus.failed; at?: number } & KeptFailure)
  | { status: typeof UpstreamStatus.lazy; failures: number; reason: string }
  | { status: typeof UpstreamStatus.evicted; reason: string };

/** Durable storage of upstream records, by upstream name. */
export interface RegistryStore {
  all(): Promise<Map<string, UpstreamRecord>>;
  put(name: string, record: UpstreamRecord): Promise<void>;
}

/** A lazy entry (it has a description): no connection before load_mcp. */
export const isLazy = (spec: UpstreamSpec): boolean => spec.description !== undefined;

/** Connected (or loaded), with its catalog. */
export const readyRecord = (catalog: UpstreamCatalog): UpstreamRecord => ({ status: UpstreamStatus.ready, catalog });

/** An eager upstream that could not be connected, why (its words, kind and connect link as data), and when (background retries wait from then). */
export const failedRecord = (failure: KeptFailure, at: number): UpstreamRecord => ({ status: UpstreamStatus.failed, ...failure, at });

/**
 * A lazy upstream's load failed: one more failure counted on top of the previous lazy record, and evicted at the
 * MAX_LOAD_FAILURES-th in a row.
 */
export function loadFailed(previous: UpstreamRecord | undefined, reason: string): UpstreamRecord & { status: "lazy" | "evicted" } {
  const failures = (previous?.status === UpstreamStatus.lazy ? previous.failures : 0) + 1;
  return failures >= MAX_LOAD_FAILURES
    ? { status: UpstreamStatus.evicted, reason }
    : { status: UpstreamStatus.lazy, failures, reason };
}

/** The session's records in memory, written through to its store; `version` changes with every change. */
export class RecordBook {
  readonly #store: RegistryStore;
  readonly #records = new Map<string, UpstreamRecord>();
  #version = 0;

  constructor(store: RegistryStore) {
    this.#store = store;
  }

  /** Reads what the session already knows (after an eviction). */
  async restore(): Promise<void> {
    for (const [name, record] of await this.#store.all()) this.#records.set(name, record);
    this.#version++;
  }

  get(name: string): UpstreamRecord | undefined {
    return this.#records.get(name);
  }

  has(name: string): boolean {
    return this.#records.has(name);
  }

  get version(): number {
    return this.#version;
  }

  /** Set once the session let its upstreams go: an attempt that settles later stores nothing (it may be wiped). */
  #closed = false;

  close(): void {
    this.#closed = true;
  }

  /** Records and stores. */
  async set(name: string, record: UpstreamRecord): Promise<void> {
    if (this.#closed) return;
    this.#records.set(name, record);
    this.#version++;
    await this.#store.put(name, record);
  }

  /** Records in memory only (a catalog shown from the cache, until the real one replaces it). */
  show(name: string, record: UpstreamRecord): void {
    this.#records.set(name, record);
    this.#version++;
  }

  /** Why an eager upstream is unavailable, or undefined when it is not. */
  unavailable(name: string): string | undefined {
    return this.failure(name)?.reason;
  }

  /** An eager upstream's failure as kept (words, kind, connect link), or undefined when it is available. */
  failure(name: string): KeptFailure | undefined {
    const record = this.#records.get(name);
    if (record?.status !== UpstreamStatus.failed) return undefined;
    const { status: _status, at: _at, ...failure } = record;
    return failure;
  }
}
