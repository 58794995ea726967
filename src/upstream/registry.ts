// The one owner of a session's upstream state: which upstreams are connected, their catalogs, their failures.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, shortReason } from "../errors.ts";
import type { CatalogGroup, CatalogView } from "../meta/render.ts";
import type { UpstreamCatalog, UpstreamClient } from "./client.ts";

/** What the session remembers of one upstream across evictions. */
export const UpstreamStatus = { ready: "ready", failed: "failed" } as const;
export type UpstreamStatus = (typeof UpstreamStatus)[keyof typeof UpstreamStatus];

export type UpstreamRecord =
  | { status: typeof UpstreamStatus.ready; catalog: UpstreamCatalog }
  | { status: typeof UpstreamStatus.failed; reason: string };

/** Durable storage of upstream records, by upstream name. */
export interface RegistryStore {
  all(): Promise<Map<string, UpstreamRecord>>;
  put(name: string, record: UpstreamRecord): Promise<void>;
}

export type Connector = (spec: UpstreamSpec) => Promise<UpstreamClient>;

/** A tool as the host calls it, and where it lives. */
export interface ExposedTool {
  exposedName: string;
  upstream: string;
  tool: Tool;
}

export class UpstreamRegistry {
  readonly #config: ResolvedConfig;
  readonly #store: RegistryStore;
  readonly #connect: Connector;
  readonly #records = new Map<string, UpstreamRecord>();
  readonly #clients = new Map<string, UpstreamClient>();
  /** Connections under way, shared by everyone who needs the same upstream. */
  readonly #connecting = new Map<string, Promise<UpstreamClient>>();
  #eager: Promise<void> | undefined;
  #index: Map<string, ExposedTool> | undefined;

  constructor(config: ResolvedConfig, store: RegistryStore, connect: Connector) {
    this.#config = config;
    this.#store = store;
    this.#connect = connect;
  }

  /** Reads what the session already knows (after an eviction); call once before anything else. */
  async restore(): Promise<void> {
    for (const [name, record] of await this.#store.all()) this.#records.set(name, record);
    this.#index = undefined;
  }

  get mode() {
    return this.#config.mode;
  }

  /** True when the config has any lazy entry (dynamic-discovery mode). */
  get dynamic(): boolean {
    return this.#config.upstreams.some((u) => u.description !== undefined);
  }

  /**
   * Connects every eager upstream that has no record yet, in parallel; one failure does not
   * stop the others. Started at initialize, awaited by the first tools/list.
   */
  ensureEager(): Promise<void> {
    this.#eager ??= Promise.all(
      this.#config.upstreams
        .filter((spec) => spec.description === undefined && !this.#records.has(spec.name))
        .map((spec) => this.#connectAndRecord(spec)),
    ).then(() => {});
    return this.#eager;
  }

  async #connectAndRecord(spec: UpstreamSpec): Promise<void> {
    let record: UpstreamRecord;
    try {
      const client = await this.#client(spec);
      record = { status: UpstreamStatus.ready, catalog: await client.readCatalog() };
    } catch (err) {
      await this.#drop(spec.name);
      const reason = err instanceof UpstreamError ? shortReason(err.fault) : "unexpected failure";
      record = { status: UpstreamStatus.failed, reason };
    }
    await this.#setRecord(spec.name, record);
  }

  async #setRecord(name: string, record: UpstreamRecord): Promise<void> {
    this.#records.set(name, record);
    this.#index = undefined;
    await this.#store.put(name, record);
  }

  /** The live client of an upstream, connecting (once, shared) when there is none. */
  #client(spec: UpstreamSpec): Promise<UpstreamClient> {
    const live = this.#clients.get(spec.name);
    if (live && !live.closed) return Promise.resolve(live);
    let pending = this.#connecting.get(spec.name);
    if (!pending) {
      pending = this.#connect(spec).then(
        (client) => {
          this.#clients.set(spec.name, client);
          return client;
        },
      );
      const settle = () => {
        if (this.#connecting.get(spec.name) === pending) this.#connecting.delete(spec.name);
      };
      pending.then(settle, settle);
      this.#connecting.set(spec.name, pending);
    }
    return pending;
  }

  async #drop(name: string): Promise<void> {
    const client = this.#clients.get(name);
    this.#clients.delete(name);
    await client?.close();
  }

  /** The catalog as discover_tool's description shows it. */
  view(): CatalogView {
    const groups: CatalogGroup[] = [];
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (!record) continue;
      if (record.status === UpstreamStatus.ready) {
        groups.push({ server: spec.name, state: "ready", tools: record.catalog.tools });
      } else {
        groups.push({ server: spec.name, state: "unavailable", reason: record.reason });
      }
    }
    return { mode: this.#config.mode, groups, lazy: [], dynamic: this.dynamic };
  }

  /** Every callable tool by the name the host uses. */
  tools(): Map<string, ExposedTool> {
    if (this.#index) return this.#index;
    const index = new Map<string, ExposedTool>();
    for (const spec of this.#config.upstreams) {
      const record = this.#records.get(spec.name);
      if (record?.status !== UpstreamStatus.ready) continue;
      for (const tool of record.catalog.tools) {
        const exposedName = this.#config.mode === "single" ? tool.name : `${spec.name}/${tool.name}`;
        index.set(exposedName, { exposedName, upstream: spec.name, tool });
      }
    }
    this.#index = index;
    return index;
  }

  /** Calls a tool on its upstream, reconnecting lazily when the session has no live client. */
  async call(target: ExposedTool, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const spec = this.#spec(target.upstream);
    const client = await this.#client(spec);
    try {
      return await client.callTool(target.tool.name, args, signal);
    } finally {
      if (client.closed) this.#clients.delete(spec.name);
    }
  }

  #spec(name: string): UpstreamSpec {
    const spec = this.#config.upstreams.find((u) => u.name === name);
    if (!spec) throw new Error(`no upstream named ${name}`);
    return spec;
  }

  /** Closes every live upstream client (session end, idle). */
  async closeAll(): Promise<void> {
    const names = [...this.#clients.keys()];
    await Promise.all(names.map((name) => this.#drop(name)));
  }
}
