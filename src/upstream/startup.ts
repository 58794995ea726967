// Eager upstreams: connected in parallel at session start, shown fast from the team's catalog cache, waited for
// at most EAGER_WAIT_MS by the lists, and tried again in the background (or at once, for a call) when they failed.
import { arrival, catalogChange, type CatalogChange, type UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { LoadError, UpstreamError } from "../lib/errors.ts";
import { keptFailure, type KeptFailure } from "../lib/upstream-fault.ts";
import { waitAtMost } from "./backoff.ts";
import type { ClientPool } from "./pool.ts";
import { RecordBook, UpstreamStatus, failedRecord, isLazy, readyRecord } from "./records.ts";

/**
 * How long after the session started tools/list (and the other lists) wait for eager upstreams still connecting;
 * one still connecting then is shown as such, and the host is told when it is in. A call to one of its tools
 * waits for that upstream alone.
 */
export const EAGER_WAIT_MS = 5_000;
/** How often a failed eager upstream is tried again while the session is in use. */
export const RETRY_FAILED_MS = 15_000;

/** The team's latest reading of an upstream's catalog, as any object of the team may have made it. */
export interface TeamReading {
  /** The team's catalog, when it is newer than anything this cache saw (another object read the upstream since). */
  newer?: UpstreamCatalog;
  /** When the team last read the catalog from its upstream (ms since the epoch); absent when nothing is known. */
  checkedAt?: number;
}

/** The team's last good catalog per upstream config (shared by all of the team's objects, both eras). */
export interface CatalogCache {
  get(spec: UpstreamSpec): Promise<UpstreamCatalog | undefined>;
  /**
   * A catalog read from the upstream by a read begun at `readAt` (what it said, before filters and pins). Resolves to
   * the team's catalog instead when another object's later read found something else: this one is outdated.
   */
  put(spec: UpstreamSpec, catalog: UpstreamCatalog, readAt: number): Promise<UpstreamCatalog | undefined>;
  latest(spec: UpstreamSpec): Promise<TeamReading>;
}

/** What of a freshly read catalog the session may use (filters, sanitizing, pins). */
export type CatalogPolicy = (spec: UpstreamSpec, catalog: UpstreamCatalog) => Promise<UpstreamCatalog>;

/** A catalog read from its upstream: what it said (`raw`), what the session may use of it (policy applied), and when the read began. */
export interface CatalogRead {
  raw: UpstreamCatalog;
  catalog: UpstreamCatalog;
  readAt: number;
}

/** Connects an upstream and reads its catalog. */
export type CatalogReader = (spec: UpstreamSpec) => Promise<CatalogRead>;

export interface StartupDeps {
  upstreams: readonly UpstreamSpec[];
  records: RecordBook;
  pool: ClientPool;
  read: CatalogReader;
  policy: CatalogPolicy;
  cache?: CatalogCache | undefined;
  /** Keeps a catalog read anew for the team, once the session shows it (src/upstream/freshness.ts). */
  share: (spec: UpstreamSpec, read: CatalogRead) => Promise<void>;
  /** A catalog changed outside a host request: the host is to be told. */
  onChange?: ((change: CatalogChange) => void) | undefined;
}

export class EagerStartup {
  readonly #deps: StartupDeps;
  /** Eager upstreams' first connections, by name, while they are under way. */
  readonly #starting = new Map<string, Promise<void>>();
  /** All of them settled, or the wait for them over (EAGER_WAIT_MS after they started). */
  #eager: Promise<void> | undefined;
  #eagerWaitOver = false;
  /** Attempts to bring back a failed eager upstream, by name, while under way. */
  readonly #retrying = new Map<string, Promise<void>>();

  constructor(deps: StartupDeps) {
    this.#deps = deps;
  }

  /**
   * Connects every eager upstream that has no record yet, in parallel (once; started at initialize); one failure
   * does not stop the others. Resolves when all of them are in, or EAGER_WAIT_MS after they started, whichever
   * comes first: an upstream that is slow or hangs never holds up the lists for longer (it is shown as connecting).
   */
  ensureEager(): Promise<void> {
    if (this.#eager) return this.#eager;
    const starts = this.#deps.upstreams
      .filter((spec) => !isLazy(spec) && !this.#deps.records.has(spec.name))
      .map((spec) => {
        // Its outcome is in the records; a storage write that failed leaves the upstream as it was shown.
        const start = this.#startEager(spec).catch(() => {}).finally(() => this.#starting.delete(spec.name));
        this.#starting.set(spec.name, start);
        return start;
      });
    this.#eager = waitAtMost(Promise.all(starts), EAGER_WAIT_MS).then(() => void (this.#eagerWaitOver = true));
    return this.#eager;
  }

  /**
   * Waits for one eager upstream's first connection, if it is under way (bounded by its connect deadline); the
   * others are not waited for. Starts the eager connections if nobody has yet.
   */
  async settled(name: string): Promise<void> {
    void this.ensureEager();
    await this.#starting.get(name);
  }

  /** Whether an eager upstream's first connection is still under way. */
  connecting(name: string): boolean {
    return this.#starting.has(name);
  }

  /**
   * Connects one eager upstream. With a cached catalog (the team's last good one for this very config) the
   * session does not wait for the upstream at all: it is shown from the cache at once, its connection goes on, a
   * call to one of its tools waits for it, and the real catalog replaces the cached one (the host is told only if
   * they differ). Without a cache entry the session waits for the real catalog.
   */
  async #startEager(spec: UpstreamSpec): Promise<void> {
    const { records, cache, share, onChange } = this.#deps;
    const real = this.#deps.read(spec).then(
      async (read) => {
        const { catalog } = read;
        const shown = records.get(spec.name);
        await records.set(spec.name, readyRecord(catalog));
        // The cache keeps what the upstream said; filters and pins are applied whenever it is shown.
        await share(spec, read);
        if (shown?.status === UpstreamStatus.ready) {
          const change = catalogChange(shown.catalog, catalog);
          if (change.tools || change.resources || change.prompts) onChange?.(change);
        } else if (this.#eagerWaitOver) {
          // The lists were already served with this upstream shown as connecting.
          onChange?.(arrival(catalog));
        }
      },
      async (err: unknown) => {
        const shown = records.get(spec.name);
        await records.set(spec.name, failedRecord(failureOf(err), Date.now()));
        if (shown || this.#eagerWaitOver) onChange?.({ tools: true, resources: false, prompts: false });
      },
    );
    const cached = await cache?.get(spec).catch(() => undefined);
    if (!cached) return real;
    if (!records.has(spec.name)) {
      const catalog = await this.#deps.policy(spec, cached);
      if (!records.has(spec.name)) records.show(spec.name, readyRecord(catalog));
    }
  }

  /**
   * An eager upstream that failed (at session start, or later) is tried again in the background, at most every
   * RETRY_FAILED_MS, when the session is used; once it answers, its tools join the catalog and the host is told.
   * Without this, a session started during an upstream's outage would lack its tools for its whole life.
   */
  retryFailed(now = Date.now()): void {
    for (const spec of this.#deps.upstreams) {
      const record = this.#deps.records.get(spec.name);
      if (record?.status !== UpstreamStatus.failed || isLazy(spec) || this.#retrying.has(spec.name)) continue;
      if (now - (record.at ?? 0) < RETRY_FAILED_MS) continue;
      this.#retry(spec);
    }
  }

  /**
   * load_mcp of an eager upstream: ready, or brought back the way a call would (coalesced, within the reconnect
   * budget). The load announces the change on its own stream; an attempt it only joined has announced it already.
   */
  async load(name: string): Promise<{ catalog: UpstreamCatalog; changed: boolean }> {
    await this.settled(name);
    const before = this.#deps.records.get(name);
    if (before?.status === UpstreamStatus.ready) return { catalog: before.catalog, changed: false };
    const retry = await this.retryNow(name, false);
    const after = this.#deps.records.get(name);
    if (after?.status === UpstreamStatus.ready) return { catalog: after.catalog, changed: !retry.joined };
    throw new LoadError("load_failed", `Failed to load "${name}": ${retry.throttled?.message ?? this.#deps.records.unavailable(name) ?? "unavailable"}`, name);
  }

  /**
   * The agent asked for a tool of an unavailable eager upstream: try it again now (or join the attempt under
   * way) instead of leaving the agent to wait for the next background retry. Within the reconnect budget; the
   * attempt is bounded by the entry's timeout. Afterwards the tool is in the catalog if the upstream answered.
   */
  async retryNow(name: string, announce = true): Promise<{ throttled?: UpstreamError; joined?: boolean }> {
    const spec = this.#deps.upstreams.find((u) => u.name === name);
    if (!spec || isLazy(spec) || this.#deps.records.unavailable(name) === undefined) return {};
    const joined = this.#retrying.has(name);
    if (!joined && !this.#retry(spec, announce)) return { throttled: this.#deps.pool.throttled(name) };
    await this.#retrying.get(name);
    return joined ? { joined } : {};
  }

  /**
   * One attempt to bring a failed eager upstream back, if its reconnect budget allows (false when not); the
   * outcome is recorded and, unless the caller announces it itself (load_mcp, on its own stream), the host told
   * when the tools come back.
   */
  #retry(spec: UpstreamSpec, announce = true): boolean {
    const { records, pool, onChange } = this.#deps;
    if (!pool.budget(spec.name).take()) return false;
    const attempt = this.#deps.read(spec).then(
      async (read) => {
        const { catalog } = read;
        await records.set(spec.name, readyRecord(catalog));
        await this.#deps.share(spec, read);
        if (announce) onChange?.(arrival(catalog));
      },
      (err: unknown) => records.set(spec.name, failedRecord(failureOf(err), Date.now())),
    );
    // A storage write that fails is no reason to fail the caller, nor an unhandled rejection.
    const done = attempt.catch(() => {});
    this.#retrying.set(spec.name, done);
    void done.finally(() => this.#retrying.delete(spec.name));
    return true;
  }
}

function failureOf(err: unknown): KeptFailure {
  return err instanceof UpstreamError ? keptFailure(err.fault) : { reason: "unexpected failure" };
}
