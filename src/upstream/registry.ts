// The one owner of a session's upstream state: eager and lazy upstreams, loads, retry budgets, live clients.
import type { CallToolResult, LoggingLevel, Notification, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, describeFault, shortReason } from "../errors.ts";
import { arrival, catalogChange, type CatalogChange, type CatalogGroup, type CatalogView, type LazyServer, type UpstreamCatalog } from "../catalog/catalog.ts";
import { exposedName, serverPart } from "../catalog/names.ts";
import { EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { ReconnectBudget, backoffDelay, sleep, waitAtMost } from "./backoff.ts";
import type { RequestOptions, UpstreamClient } from "./client.ts";
import { deadline, exchangeMs } from "./exchange.ts";

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
  | { status: typeof UpstreamStatus.failed; reason: string; at?: number }
  | { status: typeof UpstreamStatus.lazy; failures: number; reason: string }
  | { status: typeof UpstreamStatus.evicted; reason: string };

/** Durable storage of upstream records, by upstream name. */
export interface RegistryStore {
  all(): Promise<Map<string, UpstreamRecord>>;
  put(name: string, record: UpstreamRecord): Promise<void>;
}

/** Opens a client; when `signal` aborts first, the attempt is abandoned (its exchanges aborted) and fails. */
export type Connector = (spec: UpstreamSpec, signal?: AbortSignal) => Promise<UpstreamClient>;

/** The team's last good catalog per upstream config (shared by all of the team's sessions). */
export interface CatalogCache {
  get(spec: UpstreamSpec): Promise<UpstreamCatalog | undefined>;
  put(spec: UpstreamSpec, catalog: UpstreamCatalog): Promise<void>;
}

/** How long a new session waits for eager upstreams that have a cached catalog. */
export const FAST_START_MS = 250;
/**
 * How long after the session started tools/list (and the other lists) wait for eager upstreams still connecting;
 * one still connecting then is shown as such, and the host is told when it is in. A call to one of its tools
 * waits for that upstream alone.
 */
export const EAGER_WAIT_MS = 5_000;
/** How often a failed eager upstream is tried again while the session is in use. */
export const RETRY_FAILED_MS = 15_000;

/** What of a freshly read catalog the session may use (filters, sanitizing, pins). */
export type CatalogPolicy = (spec: UpstreamSpec, catalog: UpstreamCatalog) => Promise<UpstreamCatalog>;

/** A tool as the host calls it, and where it lives. */
export interface ExposedTool {
  exposedName: string;
  upstream: string;
  tool: Tool;
}

/** Why load_mcp did not load: the agent reads `message`. */
export class LoadError extends Error {
  /** True when this failure changed the catalog (the server was evicted). */
  readonly catalogChanged: boolean;
  /** False when nothing was tried (no such server to load): the agent's mistake, not an event to log. */
  readonly attempted: boolean;
  constructor(message: string, options: { catalogChanged?: boolean; attempted?: boolean } = {}) {
    super(message);
    this.name = "LoadError";
    this.catalogChanged = options.catalogChanged ?? false;
    this.attempted = options.attempted ?? true;
  }
}

/** A loaded upstream with its catalog, in config order. */
export interface ReadyUpstream {
  name: string;
  catalog: UpstreamCatalog;
}

export interface WithClientOptions {
  /**
   * The request may run twice without harm. True by default: reads (catalogs, resources, prompts, completion)
   * are; only a tool call says otherwise, unless the tool is annotated read-only or idempotent.
   */
  safeToRepeat?: boolean;
  signal?: AbortSignal;
}

/** Each upstream's reconnect budget in a session: this many at once, then this many a minute (ReconnectBudget). */
export const RECONNECTS_PER_MINUTE = 10;

/** How long a 429's Retry-After may be waited out: within the entry's timeout (a minute when it has none). */
const retryWindow = (spec: UpstreamSpec) => (spec.timeout === 0 ? 60_000 : spec.timeout);

export interface LoadOutcome {
  catalog: UpstreamCatalog;
  /** False when the server was already loaded (nothing changed, nothing was opened). */
  changed: boolean;
}

export class UpstreamRegistry {
  readonly #config: ResolvedConfig;
  readonly #store: RegistryStore;
  readonly #connect: Connector;
  readonly #policy: CatalogPolicy;
  readonly #records = new Map<string, UpstreamRecord>();
  readonly #clients = new Map<string, UpstreamClient>();
  /** Connections under way, shared by everyone who needs the same upstream. */
  readonly #connecting = new Map<string, Promise<UpstreamClient>>();
  /** Loads under way: concurrent load_mcp calls for one server share one attempt. */
  readonly #loading = new Map<string, Promise<LoadOutcome>>();
  /** Eager upstreams' first connections, by name, while they are under way. */
  readonly #starting = new Map<string, Promise<void>>();
  /** All of them settled, or the wait for them over (EAGER_WAIT_MS after they started). */
  #eager: Promise<void> | undefined;
  #eagerWaitOver = false;
  #index: Map<string, ExposedTool> | undefined;
  /** Whether live clients keep their standalone GET stream open (while the host holds its own). */
  #streaming = false;
  #logLevel: LoggingLevel | undefined;
  readonly #budgets = new Map<string, ReconnectBudget>();
  readonly #retrying = new Map<string, Promise<void>>();
  /** Told when a catalog changed outside a host request (a cached one replaced, a refresh), to tell the host. */
  onChange: ((change: CatalogChange) => void) | undefined;
  readonly #cache: CatalogCache | undefined;
  /** Run on every new client before anyone uses it (re-subscribe resources, for instance). */
  onConnect: ((name: string, client: UpstreamClient) => Promise<void>) | undefined;

  constructor(
    config: ResolvedConfig,
    store: RegistryStore,
    connect: Connector,
    policy: CatalogPolicy = async (_s, c) => c,
    cache?: CatalogCache,
  ) {
    this.#config = config;
    this.#store = store;
    this.#connect = connect;
    this.#policy = policy;
    this.#cache = cache;
  }

  /** Reads what the session already knows (after an eviction); call once before anything else. */
  async restore(): Promise<void> {
    for (const [name, record] of await this.#store.all()) this.#records.set(name, record);
    this.#index = undefined;
  }

  get mode() {
    return this.#config.mode;
  }

  /** True when the config has any lazy entry (dynamic-discovery mode: load_mcp exists). */
  get dynamic(): boolean {
    return this.#config.upstreams.some(isLazy);
  }

  /**
   * Connects every eager upstream that has no record yet, in parallel (once; started at initialize); one failure
   * does not stop the others. Resolves when all of them are in, or EAGER_WAIT_MS after they started, whichever
   * comes first: an upstream that is slow or hangs never holds up the lists for longer (it is shown as connecting).
   */
  ensureEager(): Promise<void> {
    if (this.#eager) return this.#eager;
    const starts = this.#config.upstreams
      .filter((spec) => !isLazy(spec) && !this.#records.has(spec.name))
      .map((spec) => {
        const start = this.#startEager(spec).finally(() => this.#starting.delete(spec.name));
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
   * session waits at most FAST_START_MS: an upstream still connecting then is shown from the cache, its
   * connection goes on, a call to one of its tools waits for it, and the real catalog replaces the cached one
   * (the host is told if they differ). Without a cache entry the session waits for the real catalog.
   */
  async #startEager(spec: UpstreamSpec): Promise<void> {
    // The cache keeps what the upstream said; filters and pins are applied whenever it is shown.
    const keep = async (raw: UpstreamCatalog) => void (await this.#cache?.put(spec, raw).catch(() => {}));
    const real = this.#attach(spec, keep).then(
      async (catalog) => {
        const shown = this.#records.get(spec.name);
        await this.#setRecord(spec.name, { status: UpstreamStatus.ready, catalog });
        if (shown?.status === UpstreamStatus.ready) {
          const change = catalogChange(shown.catalog, catalog);
          if (change.tools || change.resources || change.prompts) this.onChange?.(change);
        } else if (this.#eagerWaitOver) {
          // The lists were already served with this upstream shown as connecting.
          this.onChange?.(arrival(catalog));
        }
      },
      async (err: unknown) => {
        const shown = this.#records.get(spec.name);
        await this.#setRecord(spec.name, { status: UpstreamStatus.failed, reason: reasonOf(err), at: Date.now() });
        if (shown || this.#eagerWaitOver) this.onChange?.({ tools: true, resources: false, prompts: false });
      },
    );
    const cached = await this.#cache?.get(spec).catch(() => undefined);
    if (!cached) return real;
    const settled = await Promise.race([real.then(() => true), sleep(FAST_START_MS).then(() => false)]);
    if (!settled && !this.#records.has(spec.name)) {
      const catalog = await this.#policy(spec, cached);
      if (!this.#records.has(spec.name)) {
        this.#records.set(spec.name, { status: UpstreamStatus.ready, catalog });
        this.#index = undefined;
      }
    }
  }

  /**
   * An eager upstream that failed (at session start, or later) is tried again in the background, at most every
   * RETRY_FAILED_MS, when the session is used; once it answers, its tools join the catalog and the host is told.
   * Without this, a session started during an upstream's outage would lack its tools for its whole life.
   */
  retryFailed(now = Date.now()): void {
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (record?.status !== UpstreamStatus.failed || isLazy(spec) || this.#retrying.has(spec.name)) continue;
      if (now - (record.at ?? 0) < RETRY_FAILED_MS) continue;
      this.#retry(spec);
    }
  }

  /**
   * The configured upstream a tool name belongs to, by the host's naming: `server/tool` in config-file mode, the
   * one upstream in single-MCP mode; undefined when the name names no configured upstream.
   */
  serverOf(name: string): string | undefined {
    if (this.#config.mode === "single") return this.#config.upstreams[0]?.name;
    const server = serverPart(name);
    return this.#config.upstreams.some((u) => u.name === server) ? server : undefined;
  }

  /** Why an eager upstream is unavailable in this session, or undefined when it is not. */
  unavailable(name: string): string | undefined {
    const record = this.#records.get(name);
    return record?.status === UpstreamStatus.failed ? record.reason : undefined;
  }

  /**
   * The agent asked for a tool of an unavailable eager upstream: try it again now (or join the attempt under
   * way) instead of leaving the agent to wait for the next background retry. Within the reconnect budget; the
   * attempt is bounded by the entry's timeout. Afterwards the tool is in the catalog if the upstream answered.
   */
  async retryNow(name: string, announce = true): Promise<{ throttled?: UpstreamError; joined?: boolean }> {
    const spec = this.#config.upstreams.find((u) => u.name === name);
    if (!spec || isLazy(spec) || this.unavailable(name) === undefined) return {};
    const joined = this.#retrying.has(name);
    if (!joined && !this.#retry(spec, announce)) return { throttled: this.#throttled(name) };
    await this.#retrying.get(name);
    return joined ? { joined } : {};
  }

  /**
   * One attempt to bring a failed eager upstream back, if its reconnect budget allows (false when not); the
   * outcome is recorded and, unless the caller announces it itself (load_mcp, on its own stream), the host told
   * when the tools come back.
   */
  #retry(spec: UpstreamSpec, announce = true): boolean {
    if (!this.#budget(spec.name).take()) return false;
    const attempt = this.#attach(spec).then(
      async (catalog) => {
        await this.#setRecord(spec.name, { status: UpstreamStatus.ready, catalog });
        if (announce) this.onChange?.(arrival(catalog));
      },
      (err: unknown) => this.#setRecord(spec.name, { status: UpstreamStatus.failed, reason: reasonOf(err), at: Date.now() }),
    );
    this.#retrying.set(spec.name, attempt);
    void attempt.finally(() => this.#retrying.delete(spec.name));
    return true;
  }

  /** Lazy upstreams the agent may still load, in config order. */
  loadable(): UpstreamSpec[] {
    return this.#config.upstreams.filter((spec) => {
      const status = this.#records.get(spec.name)?.status;
      return isLazy(spec) && (status === undefined || status === UpstreamStatus.lazy);
    });
  }

  /**
   * load_mcp: idempotent (a loaded or eager server answers its listing and opens nothing), coalesced (one attempt
   * per server at a time), atomic (a failed attempt leaves no connection and no tools), and budgeted (the
   * third consecutive failure evicts the server).
   */
  async load(name: string): Promise<LoadOutcome> {
    const spec = this.#config.upstreams.find((u) => u.name === name);
    const record = this.#records.get(name);
    if (!spec || record?.status === UpstreamStatus.evicted) {
      const names = this.loadable().map((u) => u.name);
      throw new LoadError(`Unknown MCP server: "${name}". Available servers to load: ${names.length ? names.join(", ") : "(none)"}.`, {
        attempted: false,
      });
    }
    if (!isLazy(spec)) {
      // An eager server: ready, or brought back the way a call would (coalesced, within the reconnect budget).
      await this.settled(name);
      const before = this.#records.get(name);
      if (before?.status === UpstreamStatus.ready) return { catalog: before.catalog, changed: false };
      // The load announces the change on its own stream; an attempt it only joined has announced it already.
      const retry = await this.retryNow(name, false);
      const after = this.#records.get(name);
      if (after?.status === UpstreamStatus.ready) return { catalog: after.catalog, changed: !retry.joined };
      throw new LoadError(`Failed to load "${name}": ${retry.throttled?.message ?? this.unavailable(name) ?? "unavailable"}`);
    }
    const current = this.#records.get(name);
    if (current?.status === UpstreamStatus.ready) return { catalog: current.catalog, changed: false };

    let pending = this.#loading.get(name);
    if (!pending) {
      pending = this.#attempt(spec);
      const settle = () => {
        if (this.#loading.get(name) === pending) this.#loading.delete(name);
      };
      pending.then(settle, settle);
      this.#loading.set(name, pending);
    }
    return pending;
  }

  async #attempt(spec: UpstreamSpec): Promise<LoadOutcome> {
    try {
      const catalog = await this.#attach(spec);
      await this.#setRecord(spec.name, { status: UpstreamStatus.ready, catalog });
      return { catalog, changed: true };
    } catch (err) {
      const reason = err instanceof UpstreamError ? describeFault(spec.name, err.fault) : "unexpected failure";
      const previous = this.#records.get(spec.name);
      const failures = (previous?.status === UpstreamStatus.lazy ? previous.failures : 0) + 1;
      if (failures >= MAX_LOAD_FAILURES) {
        await this.#setRecord(spec.name, { status: UpstreamStatus.evicted, reason });
        throw new LoadError(
          `Failed to load "${spec.name}" after ${failures} attempts; the server will no longer be offered. Underlying error: ${reason}`,
          { catalogChanged: true },
        );
      }
      await this.#setRecord(spec.name, { status: UpstreamStatus.lazy, failures, reason });
      throw new LoadError(
        `Failed to load "${spec.name}" (attempt ${failures} of ${MAX_LOAD_FAILURES}): ${reason}. It can be loaded again.`,
      );
    }
  }

  /**
   * Connects and reads the catalog, within the entry's connect deadline as a whole; on any failure the
   * connection is torn down and the error rethrown.
   */
  #attach(spec: UpstreamSpec, onRaw?: (raw: UpstreamCatalog) => Promise<void>): Promise<UpstreamCatalog> {
    return withDeadline(spec, async (signal) => {
      const client = await this.#client(spec).catch(async (err: unknown) => {
        // A connection lost before any answer (a reused connection the upstream had already closed, say) is
        // worth one more try: nothing was processed. Errors the upstream gave are not retried here.
        if (!(err instanceof UpstreamError) || (err.fault.kind !== "unreachable" && err.fault.kind !== "closed")) throw err;
        await sleep(backoffDelay(0) / 5, signal);
        return this.#client(spec);
      });
      try {
        const raw = await client.readCatalog(signal);
        await onRaw?.(raw);
        return await this.#policy(spec, raw);
      } catch (err) {
        // This client only: another call may have replaced it with a healthy one meanwhile. Not waited for: its
        // DELETE may hang on an upstream that does.
        void this.#dropClient(spec.name, client);
        throw err;
      }
    });
  }

  async #setRecord(name: string, record: UpstreamRecord): Promise<void> {
    this.#records.set(name, record);
    this.#index = undefined;
    await this.#store.put(name, record);
  }

  /**
   * The live client of an upstream, connecting (once, shared) when there is none. The connection (initialize and
   * bringing the client in line with the session) has the entry's connect deadline; an attempt that fails or
   * outlives it is forgotten, so the next caller starts a new one.
   */
  #client(spec: UpstreamSpec): Promise<UpstreamClient> {
    const live = this.#clients.get(spec.name);
    if (live && !live.closed) return Promise.resolve(live);
    let pending = this.#connecting.get(spec.name);
    if (!pending) {
      pending = withDeadline(spec, async (signal) => {
        const client = await this.#connect(spec, signal);
        try {
          await this.#prepare(spec.name, client);
          signal.throwIfAborted();
        } catch (err) {
          void client.close();
          throw err;
        }
        this.#clients.set(spec.name, client);
        return client;
      });
      const settle = () => {
        if (this.#connecting.get(spec.name) === pending) this.#connecting.delete(spec.name);
      };
      pending.then(settle, settle);
      this.#connecting.set(spec.name, pending);
    }
    return pending;
  }

  /** Brings a new client in line with the session: its log level, its stream, the host's subscriptions. */
  async #prepare(name: string, client: UpstreamClient): Promise<void> {
    if (this.#logLevel && client.capabilities.logging) {
      await client.request({ method: "logging/setLevel", params: { level: this.#logLevel } }, EmptyResultSchema).catch(() => {});
    }
    // Not waited for: the stream is for notifications nobody asked for, and a GET that hangs delays no call.
    if (this.#streaming) void client.openStream();
    await this.onConnect?.(name, client);
  }

  async #drop(name: string): Promise<void> {
    const client = this.#clients.get(name);
    this.#clients.delete(name);
    await client?.close();
  }

  /** Drops this very client only: another call may already have replaced it with a healthy one. */
  async #dropClient(name: string, client: UpstreamClient): Promise<void> {
    if (this.#clients.get(name) === client) this.#clients.delete(name);
    await client.close();
  }

  /** The catalog as discover_tool's description shows it. */
  view(): CatalogView {
    const groups: CatalogGroup[] = [];
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (record?.status === UpstreamStatus.ready) {
        groups.push({ server: spec.name, state: "ready", tools: record.catalog.tools });
      } else if (record?.status === UpstreamStatus.failed) {
        groups.push({ server: spec.name, state: "unavailable", reason: record.reason });
      } else if (!record && this.#starting.has(spec.name)) {
        groups.push({ server: spec.name, state: "connecting" });
      }
    }
    for (const entry of this.#config.invalid ?? []) {
      groups.push({ server: entry.name, state: "unavailable", reason: `invalid config entry: ${entry.reason}` });
    }
    const lazy: LazyServer[] = this.loadable().map((spec) => ({ name: spec.name, description: spec.description ?? "" }));
    return { mode: this.#config.mode, groups, lazy, dynamic: this.dynamic };
  }

  /** Every callable tool by the name the host uses. */
  tools(): Map<string, ExposedTool> {
    if (this.#index) return this.#index;
    const index = new Map<string, ExposedTool>();
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (record?.status !== UpstreamStatus.ready) continue;
      for (const tool of record.catalog.tools) {
        const name = exposedName(this.#config.mode, spec.name, tool.name);
        index.set(name, { exposedName: name, upstream: spec.name, tool });
      }
    }
    this.#index = index;
    return index;
  }

  /**
   * Calls a tool on its upstream. A call that may have reached the upstream is repeated only when the tool says
   * it is read-only or idempotent; otherwise a broken connection is reported as an unknown outcome.
   */
  call(target: ExposedTool, args: Record<string, unknown>, options: RequestOptions = {}): Promise<CallToolResult> {
    const hints = target.tool.annotations ?? {};
    const safeToRepeat = hints.readOnlyHint === true || hints.idempotentHint === true;
    return this.withClient(target.upstream, (client) => client.callTool(target.tool.name, args, options), {
      safeToRepeat,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /**
   * Runs `use` with the live client of a loaded upstream, connecting it when the session has none, and recovers
   * from what can be recovered without doing anything twice:
   * - connect or initialize failed (nothing reached the upstream): one more try after a jittered backoff;
   * - the upstream forgot our session (404/400 to its id): a new session, and the request once more;
   * - 429 with a Retry-After that fits in the timeout: wait, then once more;
   * - the connection broke mid-request: once more on a new connection if `safeToRepeat`, else an unknown outcome;
   * - an answer that breaks the protocol: reported as it is, the connection not used again.
   * Reconnects per upstream are budgeted (ReconnectBudget), so a flapping upstream is not stormed.
   */
  async withClient<T>(name: string, use: (client: UpstreamClient) => Promise<T>, options: WithClientOptions = {}): Promise<T> {
    const spec = this.#spec(name);
    let repeated = false;
    for (;;) {
      const client = await this.#connectForCall(spec, options.signal);
      try {
        return await use(client);
      } catch (err) {
        if (!(err instanceof UpstreamError) || repeated) throw err;
        const fault = err.fault;
        if (fault.kind === "expired") {
          await this.#dropClient(name, client);
        } else if (fault.kind === "http" && fault.status === 429 && fault.retryAfterMs !== undefined && fault.retryAfterMs <= retryWindow(spec)) {
          await sleep(fault.retryAfterMs, options.signal);
        } else if (fault.kind === "protocol") {
          // The upstream answered, but not in MCP: nothing was lost in transit, so nothing is repeated. The
          // connection may be out of step, so it is not used again.
          await this.#dropClient(name, client);
          throw err;
        } else if (fault.kind === "closed" || fault.kind === "unreachable") {
          await this.#dropClient(name, client);
          if (options.safeToRepeat === false) throw new UpstreamError(name, { kind: "unknown_outcome", detail: describeFault(name, fault) });
        } else {
          throw err;
        }
        repeated = true;
      } finally {
        if (client.closed && this.#clients.get(name) === client) this.#clients.delete(name);
      }
    }
  }

  /** The live client, or a new connection: one retry after a backoff when connecting fails for want of the upstream. */
  async #connectForCall(spec: UpstreamSpec, signal?: AbortSignal): Promise<UpstreamClient> {
    const live = this.#clients.get(spec.name);
    if (live && !live.closed) return live;
    for (let attempt = 0; ; attempt++) {
      const budget = this.#budget(spec.name);
      if (!this.#connecting.has(spec.name) && !budget.take()) {
        throw this.#throttled(spec.name);
      }
      try {
        return await this.#client(spec);
      } catch (err) {
        const retryable = err instanceof UpstreamError && (err.fault.kind === "unreachable" || err.fault.kind === "closed" || (err.fault.kind === "http" && err.fault.status >= 500));
        if (!retryable || attempt >= 1) throw err;
        await sleep(backoffDelay(attempt), signal);
      }
    }
  }

  /** The error for a spent reconnect budget, saying when the next reconnect is possible. */
  #throttled(name: string): UpstreamError {
    const wait = Math.max(1, Math.ceil(this.#budget(name).waitMs() / 1000));
    return new UpstreamError(name, { kind: "throttled", detail: `its reconnect budget is spent; the next reconnect in ${wait} s` });
  }

  #budget(name: string): ReconnectBudget {
    let budget = this.#budgets.get(name);
    if (!budget) this.#budgets.set(name, (budget = new ReconnectBudget(RECONNECTS_PER_MINUTE)));
    return budget;
  }

  /** Loaded upstreams with their catalogs, in config order. */
  ready(): ReadyUpstream[] {
    const out: ReadyUpstream[] = [];
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (record?.status === UpstreamStatus.ready) out.push({ name: spec.name, catalog: record.catalog });
    }
    return out;
  }

  /** Reads an upstream's catalog again (it said a list changed) and says which parts differ. */
  async refresh(name: string): Promise<CatalogChange> {
    const before = this.#records.get(name);
    if (before?.status !== UpstreamStatus.ready) return { tools: false, resources: false, prompts: false };
    const catalog = await this.#policy(this.#spec(name), await this.withClient(name, (client) => client.readCatalog(), { safeToRepeat: true }));
    await this.#setRecord(name, { status: UpstreamStatus.ready, catalog });
    return catalogChange(before.catalog, catalog);
  }

  /** The host's log level, applied to every live upstream that logs and to every one connected later. */
  async setLogLevel(level: LoggingLevel): Promise<void> {
    this.#logLevel = level;
    await Promise.all(
      [...this.#clients.values()]
        .filter((client) => client.capabilities.logging)
        .map((client) => client.request({ method: "logging/setLevel", params: { level } }, EmptyResultSchema).catch(() => {})),
    );
  }

  /**
   * While the host holds its own GET stream, upstreams keep theirs open too (their notifications have a way
   * to the host, and the object stays up anyway). When it lets go, streaming clients are closed, so nothing
   * keeps the object from being evicted; they reconnect on their next use.
   */
  async setStreaming(on: boolean): Promise<void> {
    if (on === this.#streaming) return;
    this.#streaming = on;
    const live = [...this.#clients.entries()];
    if (on) for (const [, client] of live) void client.openStream();
    else await Promise.all(live.filter(([, client]) => client.streaming).map(([name]) => this.#drop(name)));
  }

  /** A notification to every live upstream (the host's roots changed). */
  async notifyAll(notification: Notification): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.notify(notification)));
  }

  #spec(name: string): UpstreamSpec {
    const spec = this.#config.upstreams.find((u) => u.name === name);
    if (!spec) throw new Error(`no upstream named ${name}`);
    return spec;
  }

  /**
   * Closes an upstream's client and connects it again now, reading its catalog anew (admin "reconnect"); an eager
   * upstream that is unavailable is tried again. A lazy one not loaded stays unloaded.
   */
  async reconnect(name: string): Promise<boolean> {
    if (!this.#config.upstreams.some((u) => u.name === name)) return false;
    await this.#drop(name);
    if (this.unavailable(name) !== undefined) {
      await this.retryNow(name);
      return true;
    }
    if (this.#records.get(name)?.status !== UpstreamStatus.ready) return true;
    const change = await this.refresh(name).catch(() => undefined);
    if (change) this.onChange?.(change);
    return true;
  }

  /** Closes every live upstream client (session end, idle). */
  async closeAll(): Promise<void> {
    const names = [...this.#clients.keys()];
    await Promise.all(names.map((name) => this.#drop(name)));
  }
}

const isLazy = (spec: UpstreamSpec): boolean => spec.description !== undefined;

/**
 * Runs `work` under the entry's connect deadline (its timeout, or the default when it has none): past it the
 * signal aborts (whatever `work` is waiting on is abandoned) and the result is a timeout, whether or not `work`
 * has noticed yet.
 */
function withDeadline<T>(spec: UpstreamSpec, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ms = exchangeMs(spec.timeout);
  const limit = deadline(ms, "connecting");
  const expired = new Promise<never>((_, reject) =>
    limit.signal.addEventListener("abort", () => reject(new UpstreamError(spec.name, { kind: "timeout", ms })), { once: true }),
  );
  const run = work(limit.signal);
  // Whichever loses the race is settled all the same, unobserved.
  run.catch(() => {});
  expired.catch(() => {});
  return Promise.race([run, expired]).finally(() => limit.clear());
}

function reasonOf(err: unknown): string {
  return err instanceof UpstreamError ? shortReason(err.fault) : "unexpected failure";
}
