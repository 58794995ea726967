// The durable storage of one session object: its keys and typed access (layout in docs/storage.md).
import type { ResolvedConfig } from "../config/validate.ts";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { TransportState } from "agents/mcp";
import type { RegistryStore, UpstreamRecord } from "../upstream/records.ts";
import type { LinkStore, StoredLink } from "../forward/resource-links.ts";

/** Written once at initialize; the session keeps this config for its whole life. */
export interface SessionRecord {
  team: string;
  tokenId: string;
  sessionId: string;
  createdAt: string;
  config: ResolvedConfig;
}


const KEY = {
  session: "session",
  transport: "transport",
  logLevel: "logLevel",
  activity: "activity",
  reload: "reload",
  upstreamPrefix: "upstream:",
  linkPrefix: "link:",
} as const;

/** The most keys one storage put or delete takes. */
const BATCH = 128;
const batches = <T>(items: T[]): T[][] => Array.from({ length: Math.ceil(items.length / BATCH) }, (_, i) => items.slice(i * BATCH, (i + 1) * BATCH));

export class SessionStore implements RegistryStore, LinkStore {
  readonly #storage: DurableObjectStorage;
  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  session(): Promise<SessionRecord | undefined> {
    return this.#storage.get<SessionRecord>(KEY.session);
  }
  putSession(record: SessionRecord): Promise<void> {
    return this.#storage.put(KEY.session, record);
  }

  /** The MCP transport's own state (session id, initialize params), as agents' WorkerTransport persists it. */
  transport(): Promise<TransportState | undefined> {
    return this.#storage.get<TransportState>(KEY.transport);
  }
  putTransport(state: TransportState): Promise<void> {
    return this.#storage.put(KEY.transport, state);
  }

  /** The level the host set with logging/setLevel, applied to upstreams connected later too. */
  logLevel(): Promise<LoggingLevel | undefined> {
    return this.#storage.get<LoggingLevel>(KEY.logLevel);
  }
  putLogLevel(level: LoggingLevel): Promise<void> {
    return this.#storage.put(KEY.logLevel, level);
  }

  /** When the session was last used (ms since the epoch), written at most once a minute, at least four times per idle period. */
  activity(): Promise<number | undefined> {
    return this.#storage.get<number>(KEY.activity);
  }
  putActivity(at: number): Promise<void> {
    return this.#storage.put(KEY.activity, at);
  }

  /** An admin asked for the team's current config: taken at the start of the next request. */
  async reloadPending(): Promise<boolean> {
    return (await this.#storage.get<boolean>(KEY.reload)) === true;
  }
  async setReloadPending(on: boolean): Promise<void> {
    if (on) await this.#storage.put(KEY.reload, true);
    else await this.#storage.delete(KEY.reload);
  }

  async all(): Promise<Map<string, UpstreamRecord>> {
    const rows = await this.#storage.list<UpstreamRecord>({ prefix: KEY.upstreamPrefix });
    return new Map([...rows].map(([key, value]) => [key.slice(KEY.upstreamPrefix.length), value]));
  }
  put(name: string, record: UpstreamRecord): Promise<void> {
    return this.#storage.put(KEY.upstreamPrefix + name, record);
  }
  async remove(name: string): Promise<void> {
    await this.#storage.delete(KEY.upstreamPrefix + name);
  }

  /** The resources tool results linked to, one key per link (`link:<seq>`), bounded by ResourceLinks. */
  async links(): Promise<StoredLink[]> {
    return [...(await this.#storage.list<StoredLink>({ prefix: KEY.linkPrefix })).values()];
  }
  async saveLinks(put: StoredLink[], remove: number[]): Promise<void> {
    for (const batch of batches(put)) await this.#storage.put(Object.fromEntries(batch.map((link) => [KEY.linkPrefix + link.seq, link])));
    for (const batch of batches(remove)) await this.#storage.delete(batch.map((seq) => KEY.linkPrefix + seq));
  }

  /** Forgets the session entirely (DELETE). */
  clear(): Promise<void> {
    return this.#storage.deleteAll();
  }
}
