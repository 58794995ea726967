// The facade the session uses for its upstreams: which are loaded (load_mcp, eviction), the catalog view and the
// tool index, calls, and the session-wide switches (log level, streams, reconnect). The parts: records.ts (what is
// remembered), pool.ts (live clients), call-policy.ts (what a call repeats), startup.ts (eager upstreams).
import type { CallToolResult, LoggingLevel, Notification, Tool } from "@modelcontextprotocol/client";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { LoadError, UpstreamError } from "../lib/errors.ts";
import { describeFault, type KeptFailure } from "../lib/upstream-fault.ts";
import { catalogChange, type CatalogChange, type CatalogView, type ReadyUpstream, type UpstreamCatalog } from "../catalog/catalog.ts";
import { exposedName, serverPart } from "../catalog/names.ts";
import { withClient, type WithClientOptions } from "./call-policy.ts";
import type { RequestOptions, UpstreamClient } from "./client.ts";
import { ClientPool, type ConnectHook, type Connector } from "./pool.ts";
import { MAX_LOAD_FAILURES, RecordBook, UpstreamStatus, isLazy, loadFailed, readyRecord, type RegistryStore } from "./records.ts";
import { EagerStartup, type CatalogCache, type CatalogPolicy, type CatalogRead } from "./startup.ts";
import { Freshness } from "./freshness.ts";
import { catalogView } from "./catalog-view.ts";

/** A tool as the host calls it, and where it lives. */
export interface ExposedTool {
  exposedName: string;
  upstream: string;
  tool: Tool;
}

export interface LoadOutcome {
  catalog: UpstreamCatalog;
  /** False when the server was already loaded (nothing changed, nothing was opened). */
  changed: boolean;
}

/** How the registry reaches upstreams, and whom it tells; given once, at construction. */
export interface RegistryOptions {
  connect: Connector;
  /** Filters, safe text and pins over each catalog read (none by default). */
  policy?: CatalogPolicy;
  /** The team's catalog cache, for a fast start. */
  cache?: CatalogCache;
  /** A catalog changed outside a host request (a cached one replaced, an upstream back, a reconnect): tell the host. */
  onChange?: (change: CatalogChange) => void;
  /** Run on every new client before anyone uses it (re-subscribe the host's resources, for instance). */
  onConnect?: ConnectHook;
  /** Whether the caller's policies hide a server whole before its tools are known (a loaded one's catalog says so). */
  hides?: (server: string) => boolean;
}

export class UpstreamRegistry {
  readonly #config: ResolvedConfig;
  readonly #policy: CatalogPolicy;
  readonly #onChange: ((change: CatalogChange) => void) | undefined;
  readonly #hides: (server: string) => boolean;
  readonly #records: RecordBook;
  readonly #pool: ClientPool;
  readonly #startup: EagerStartup;
  readonly #fresh: Freshness;
  /** Loads under way: concurrent load_mcp calls for one server share one attempt. */
  readonly #loading = new Map<string, Promise<LoadOutcome>>();
  #index: { version: number; tools: Map<string, ExposedTool> } | undefined;

  constructor(config: ResolvedConfig, store: RegistryStore, options: RegistryOptions) {
    this.#config = config;
    this.#policy = options.policy ?? (async (_spec, catalog) => catalog);
    this.#onChange = options.onChange;
    this.#hides = options.hides ?? (() => false);
    this.#records = new RecordBook(store);
    this.#pool = new ClientPool(options.connect, options.onConnect);
    this.#fresh = new Freshness({ cache: options.cache, policy: this.#policy, records: this.#records, refresh: (name) => this.refresh(name), onChange: options.onChange });
    this.#startup = new EagerStartup({
      upstreams: config.upstreams,
      records: this.#records,
      pool: this.#pool,
      read: (spec) => this.#read(spec),
      policy: this.#policy,
      cache: options.cache,
      share: (spec, read) => this.#fresh.share(spec, read),
      onChange: options.onChange,
    });
  }

  /** Reads what the session already knows (after an eviction); call once before anything else. */
  restore(): Promise<void> {
    return this.#records.restore();
  }

  get mode() {
    return this.#config.mode;
  }
  /** The session's config (the team's policies are decided over this very object: src/config/tool-access.ts). */
  get config(): ResolvedConfig {
    return this.#config;
  }

  /** Every configured upstream's name, in config order (loaded or not). */
  get servers(): string[] {
    return this.#config.upstreams.map((u) => u.name);
  }

  /** True when the config has any lazy entry (dynamic-discovery mode: load_mcp exists). */
  get dynamic(): boolean {
    return this.#config.upstreams.some(isLazy);
  }

  /** Starts the eager upstreams (once) and waits for them, at most EAGER_WAIT_MS (see EagerStartup). */
  ensureEager(): Promise<void> {
    return this.#startup.ensureEager();
  }

  /** Waits for one eager upstream's first connection, if it is under way (bounded by its connect deadline). */
  settled(name: string): Promise<void> {
    return this.#startup.settled(name);
  }

  /** Whether an eager upstream's first connection is still under way. */
  connecting = (name: string): boolean => this.#startup.connecting(name);

  /** Tries failed eager upstreams again in the background, at most every RETRY_FAILED_MS. */
  retryFailed = (now = Date.now()): void => this.#startup.retryFailed(now);

  /** Tries an unavailable eager upstream again now, or joins the attempt under way (within its reconnect budget). */
  retryNow(name: string, announce = true): Promise<{ throttled?: UpstreamError; joined?: boolean }> {
    return this.#startup.retryNow(name, announce);
  }

  /**
   * The configured upstream a tool name belongs to, by the host's naming: `server/tool` in config-file mode, the
   * one upstream in single-MCP mode; undefined when the name names no configured upstream.
   */
  serverOf(name: string): string | undefined {
    const server = this.#config.mode === "single" ? this.#config.upstreams[0]?.name : serverPart(name);
    return server !== undefined && this.#config.upstreams.some((u) => u.name === server) && !this.hidden(server) ? server : undefined;
  }

  /** Whether the caller's policies hide a configured server whole: it does not exist for this object's caller. */
  hidden(name: string): boolean {
    const record = this.#records.get(name);
    return record?.status === UpstreamStatus.ready ? record.catalog.hiddenFromCaller === true : this.#hides(name);
  }

  /** Why an eager upstream is unavailable in this session (undefined when it is not): its words, or (`failure`) as data. */
  unavailable(name: string): string | undefined {
    return this.#records.unavailable(name);
  }
  failure(name: string): KeptFailure | undefined {
    return this.#records.failure(name);
  }

  /** The tools the config promotes, by the names hosts call them (those not offered are left out by the caller). */
  get promoted(): readonly string[] {
    return this.#config.promote ?? [];
  }

  /** The most tokens the session's tools/list may cost a host. */
  get catalogBudget(): number {
    return this.#config.catalogBudget;
  }

  /** What the config says an upstream is for (every lazy one has it; an eager one may). */
  description(name: string): string | undefined {
    return this.#config.upstreams.find((u) => u.name === name)?.description;
  }

  /** Lazy upstreams the agent may still load, in config order. */
  loadable(): UpstreamSpec[] {
    return this.#config.upstreams.filter((spec) => {
      const status = this.#records.get(spec.name)?.status;
      return isLazy(spec) && (status === undefined || status === UpstreamStatus.lazy) && !this.#hides(spec.name);
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
    if (!spec || record?.status === UpstreamStatus.evicted || this.hidden(name)) {
      const names = this.loadable().map((u) => u.name);
      throw new LoadError("unknown_server", `Unknown MCP server: "${name}". Available servers to load: ${names.length ? names.join(", ") : "(none)"}.`, name);
    }
    if (!isLazy(spec)) return this.#startup.load(name);
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
      const { catalog } = await this.#read(spec);
      await this.#records.set(spec.name, readyRecord(catalog));
      return { catalog, changed: true };
    } catch (err) {
      const reason = err instanceof UpstreamError ? describeFault(spec.name, err.fault) : "unexpected failure";
      // An account not connected yet is no fault of the server: no strike, and the agent is told how to go on.
      if (err instanceof UpstreamError && err.fault.kind === "auth_required") throw new LoadError("load_failed", `Could not load "${spec.name}": ${reason}.`, spec.name);
      const record = loadFailed(this.#records.get(spec.name), reason);
      await this.#records.set(spec.name, record);
      if (record.status === UpstreamStatus.evicted) {
        throw new LoadError(
          "evicted",
          `Failed to load "${spec.name}" after ${MAX_LOAD_FAILURES} attempts; the server will no longer be offered. Underlying error: ${reason}`,
          spec.name,
        );
      }
      throw new LoadError("load_failed", `Failed to load "${spec.name}" (attempt ${record.failures} of ${MAX_LOAD_FAILURES}): ${reason}. It can be loaded again.`, spec.name);
    }
  }

  /**
   * Connects and reads the catalog, within the entry's connect deadline as a whole; on any failure the
   * connection is torn down and the error rethrown. An eager upstream's read is noted as under way.
   */
  #read(spec: UpstreamSpec): Promise<CatalogRead> {
    const readAt = Date.now();
    const read = this.#pool.attach(spec, async (client, signal) => {
      const raw = await client.readCatalog(signal);
      return { raw, catalog: await this.#policy(spec, raw), readAt };
    });
    return this.#fresh.track(spec, read);
  }

  /** The catalog as discover_tool's description shows it in a session: what it loaded, and what it may still load. */
  view(): CatalogView {
    return catalogView(this.#config, this.#records, (name) => this.#startup.connecting(name), this.loadable(), (name) => this.hidden(name));
  }

  /** The catalog as the team offers it, whatever was loaded (the 2026 era's tools/list): every lazy upstream loadable. */
  teamView(): CatalogView {
    const lazy = this.#config.upstreams.filter((spec) => isLazy(spec) && !this.#hides(spec.name));
    return catalogView(this.#config, this.#records, (name) => this.#startup.connecting(name), lazy, (name) => this.hidden(name), true);
  }

  /** Eager catalogs as current as the team's, none older than `maxAgeMs` (src/upstream/freshness.ts). */
  freshen(maxAgeMs: number, now = Date.now()): Promise<void> {
    return this.#fresh.freshen(this.#config.upstreams, maxAgeMs, now);
  }

  /** Every callable tool by the name the host uses. */
  tools(): Map<string, ExposedTool> {
    if (this.#index?.version === this.#records.version) return this.#index.tools;
    const index = new Map<string, ExposedTool>();
    for (const { name: upstream, catalog } of this.ready()) {
      for (const tool of catalog.tools) {
        const name = exposedName(this.#config.mode, upstream, tool.name);
        index.set(name, { exposedName: name, upstream, tool });
      }
    }
    this.#index = { version: this.#records.version, tools: index };
    return index;
  }

  /** Loaded upstreams with their catalogs, in config order. */
  ready(): ReadyUpstream[] {
    return this.#config.upstreams.flatMap((spec) => {
      const record = this.#records.get(spec.name);
      return record?.status === UpstreamStatus.ready && record.catalog.hiddenFromCaller !== true ? [{ name: spec.name, catalog: record.catalog }] : [];
    });
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

  /** Runs `use` with the upstream's live client, connecting and repeating by the rules of call-policy.ts. */
  withClient<T>(name: string, use: (client: UpstreamClient) => Promise<T>, options: WithClientOptions = {}): Promise<T> {
    const spec = this.#spec(name);
    return this.#pool.counted(() => withClient(this.#pool, spec, use, options));
  }

  /** Reads an upstream's catalog again (it said a list changed, or it is due) and says which parts differ. */
  async refresh(name: string): Promise<CatalogChange> {
    const before = this.#records.get(name);
    if (before?.status !== UpstreamStatus.ready) return { tools: false, resources: false, prompts: false };
    const spec = this.#spec(name);
    const readAt = Date.now();
    const raw = await this.#fresh.track(spec, this.withClient(name, (client) => client.readCatalog(), { safeToRepeat: true }));
    const catalog = await this.#policy(spec, raw);
    await this.#records.set(name, readyRecord(catalog));
    await this.#fresh.share(spec, { raw, catalog, readAt });
    return catalogChange(before.catalog, catalog);
  }

  /** The host's log level, applied to every live upstream that logs and to every one connected later. */
  setLogLevel(level: LoggingLevel): Promise<void> {
    return this.#pool.setLogLevel(level);
  }

  /** Upstreams keep their streams open while the host holds its GET stream; closed when it lets go (eviction free). */
  setStreaming(on: boolean): Promise<void> {
    return this.#pool.setStreaming(on);
  }

  /** A notification to every live upstream (the host's roots changed). */
  notifyAll = (notification: Notification): Promise<void> => this.#pool.notifyAll(notification);

  #spec(name: string): UpstreamSpec {
    const spec = this.#config.upstreams.find((u) => u.name === name);
    if (spec) return spec;
    throw new Error(`no upstream named ${name}`);
  }

  /**
   * Closes an upstream's client and connects it again now, reading its catalog anew (admin "reconnect"); an eager
   * upstream that is unavailable is tried again. A lazy one not loaded stays unloaded.
   */
  async reconnect(name: string): Promise<boolean> {
    if (!this.#config.upstreams.some((u) => u.name === name)) return false;
    await this.#pool.drop(name);
    if (this.unavailable(name) !== undefined) {
      await this.retryNow(name);
      return true;
    }
    if (this.#records.get(name)?.status !== UpstreamStatus.ready) return true;
    const change = await this.refresh(name).catch(() => undefined);
    if (change) this.#onChange?.(change);
    return true;
  }

  /** A reload replaced this registry: the new one owns the upstream records; this one writes none from now on. */
  retire = (): void => this.#records.close();

  /** Closes every live upstream client once no request through it is under way (a retired registry's last step). */
  closeWhenIdle = (): Promise<void> => this.#pool.closeWhenIdle();
  /** Closes every live upstream client (session end, idle). */
  closeAll(): Promise<void> {
    // Whatever settles after this (a connection or retry under way) neither keeps a client nor writes a record.
    this.#records.close();
    return this.#pool.closeAll();
  }
}
