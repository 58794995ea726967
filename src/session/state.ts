// The durable storage of one session object: its keys, and typed access in which every record is read through a
// zod schema (layout in docs/storage.md). A record that does not parse is read as absent, logged once by its key;
// what absent means for each is said at its reader.
import * as z from "zod";
import type { LoggingLevel } from "@modelcontextprotocol/server";
import type { TransportState } from "./transport.ts";
import { logUnreadable } from "../config/keys.ts";
import { CATALOG_BUDGET, SemanticStage, ServerEntry, normalizeEntry } from "../config/schema.ts";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { DEFAULT_VIEW, View } from "../config/view.ts";
import { PolicyRule } from "../config/policy-rules.ts";
import { StoredCatalog } from "../store/catalog-cache.ts";
import { accepted, type Same } from "../store/kv.ts";
import { UPSTREAM_FAULT_KINDS } from "../lib/upstream-fault.ts";
import type { RegistryStore, UpstreamRecord } from "../upstream/records.ts";
import type { LinkStore, StoredLink } from "../relay/resource-links.ts";
import { MAX_PAUSED, PausedRun } from "../views/code/approval.ts";

/** A stored upstream spec: read as an entry plus its name, and normalized as the config's own transform does. */
const StoredSpec = ServerEntry.extend({ name: z.string() }).transform(({ name, ...entry }) => ({ name, ...normalizeEntry(entry) }));
const specMatches: Same<z.output<typeof StoredSpec>, UpstreamSpec> = true;

/** The normalized config a session keeps. */
const StoredConfig = z.object({
  mode: z.enum(["multi", "single"]),
  upstreams: z.array(StoredSpec),
  pinTools: z.literal(true).optional(),
  promote: z.array(z.string()).optional(),
  /** Sessions stored before budgets existed read as the default. */
  catalogBudget: z.number().int().positive().default(CATALOG_BUDGET.default),
  view: View.optional(),
  approve: z.object({ globs: z.array(z.string()), destructive: z.boolean() }).optional(),
  policies: z.array(PolicyRule).optional(),
  audit: z.object({ days: z.number(), hashArguments: z.boolean() }).optional(),
  /** Sessions stored before the setting existed read as the deployment's default. */
  semantic: SemanticStage.optional(),
  invalid: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
});
const configMatches: Same<z.output<typeof StoredConfig>, ResolvedConfig> = true;

/**
 * Written once at initialize; the session keeps this config and view for its whole life. A record written before
 * views existed has no `view` (records are kept as stored): `sessionView` reads it as the default, the only view
 * there was.
 */
const SessionRecord = z.object({
  team: z.string(),
  tokenId: z.string(),
  sessionId: z.string(),
  createdAt: z.string(),
  config: StoredConfig,
  view: View.optional(),
  /** "modern": a 2026-era object (a principal's or a toolset's, docs/protocol-2026.md); absent: a 2025 session. */
  era: z.literal("modern").optional(),
  /** An OAuth caller's user id (docs/oauth.md 3.1); absent for a team token's session. */
  user: z.string().optional(),
  /** The origin the session was opened at: connect links are made with it when PUBLIC_URL is not set. */
  base: z.string().optional(),
});
export type SessionRecord = z.output<typeof SessionRecord>;

/**
 * Who a session acts for, as log lines and usage name it: `u:<user id>` for a signed-in member (stable across their
 * grants and hosts), `t:<token id>` for a team token. Never an email.
 */
export const principalOf = (record: Pick<SessionRecord, "tokenId" | "user">): string => (record.user ? `u:${record.user}` : `t:${record.tokenId}`);

/** The session's view (src/config/view.ts); a record from before views is a meta-tools session. */
export const sessionView = (record: SessionRecord): View => record.view ?? DEFAULT_VIEW;

/** The session transport's state (session/transport.ts); the initialize params are the SDK's, kept as stored (an object when present). */
const StoredTransport = z.object({
  sessionId: z.string().optional(),
  initialized: z.boolean(),
  initializeParams: z.custom<NonNullable<TransportState["initializeParams"]>>((v) => typeof v === "object" && v !== null).optional(),
});
const transportMatches: Same<z.output<typeof StoredTransport>, TransportState> = true;

const StoredLogLevel = z.enum(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);
const logLevelMatches: Same<z.output<typeof StoredLogLevel>, LoggingLevel> = true;

const StoredActivity = z.number().refine(Number.isFinite);

/** The upstream record union of upstream/records.ts, as a schema (checked against the type below). */
const StoredUpstream = z.discriminatedUnion("status", [
  z.object({ status: z.literal("ready"), catalog: StoredCatalog }),
  z.object({
    status: z.literal("failed"),
    reason: z.string(),
    kind: z.enum(UPSTREAM_FAULT_KINDS).optional(),
    connectUrl: z.string().optional(),
    at: z.number().optional(),
  }),
  z.object({ status: z.literal("lazy"), failures: z.number().int().min(0), reason: z.string() }),
  z.object({ status: z.literal("evicted"), reason: z.string() }),
]);
const upstreamMatches: Same<z.output<typeof StoredUpstream>, UpstreamRecord> = true;

const StoredLinkSchema = z.object({ seq: z.number().int(), uri: z.string(), upstream: z.string() });
const linkMatches: Same<z.output<typeof StoredLinkSchema>, StoredLink> = true;

void [specMatches, configMatches, transportMatches, logLevelMatches, upstreamMatches, linkMatches];

const KEY = {
  session: "session",
  transport: "transport",
  logLevel: "logLevel",
  activity: "activity",
  reload: "reload",
  upstreamPrefix: "upstream:",
  linkPrefix: "link:",
  pausedPrefix: "paused:",
} as const;

/** The most keys one storage put or delete takes. */
const BATCH = 128;
const batches = <T>(items: T[]): T[][] => Array.from({ length: Math.ceil(items.length / BATCH) }, (_, i) => items.slice(i * BATCH, (i + 1) * BATCH));

/** What the store uses of the object's storage (a Durable Object's `DurableObjectStorage` is one). */
export interface SessionStorage {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  put(entries: Record<string, unknown>): Promise<void>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  delete(key: string): Promise<boolean>;
  delete(keys: string[]): Promise<number>;
  deleteAll(): Promise<void>;
}

/** A value this store read or wrote itself, kept so that later reads need neither storage nor the schema. */
type Known<T> = { value: T } | undefined;

export class SessionStore implements RegistryStore, LinkStore {
  readonly #storage: SessionStorage;
  /**
   * The session record and the reload flag, read on every request, are kept once known: the object's storage is
   * its own (no one else writes it), so after the first read only this store's own writes change them. A fresh
   * instance (after an eviction) starts empty and reads each once. `#writes` counts this store's writes of the two
   * keys: a read or write that was under way while a later one began keeps nothing (the next read asks storage).
   */
  #session: Known<SessionRecord | undefined>;
  #reload: Known<boolean>;
  #writes = 0;

  constructor(storage: SessionStorage) {
    this.#storage = storage;
  }

  /**
   * Absent when unreadable: the session answers 404 (the host starts a new one) and the alarm wipes the storage.
   * Read from storage (and checked by its schema) once per store; the record returned is shared: read-only.
   */
  async session(): Promise<SessionRecord | undefined> {
    if (this.#session) return this.#session.value;
    const writes = this.#writes;
    const record = await this.#read(KEY.session, "session record", SessionRecord);
    if (writes === this.#writes) this.#session = { value: record };
    return record;
  }
  async putSession(record: SessionRecord): Promise<void> {
    const write = ++this.#writes;
    this.#session = undefined;
    await this.#storage.put(KEY.session, record);
    if (write === this.#writes) this.#session = { value: record };
  }

  /**
   * The session transport's own state (session id, initialized flag, initialize params), written once at initialize.
   * Absent when unreadable: the transport starts uninitialized, so the host's requests are refused until it
   * initializes again.
   */
  transport(): Promise<TransportState | undefined> {
    return this.#read(KEY.transport, "transport state", StoredTransport);
  }
  putTransport(state: TransportState): Promise<void> {
    return this.#storage.put(KEY.transport, state);
  }

  /**
   * The level the host set with logging/setLevel, applied to upstreams connected later too.
   * Absent when unreadable: upstreams keep their own default level.
   */
  logLevel(): Promise<LoggingLevel | undefined> {
    return this.#read(KEY.logLevel, "log level", StoredLogLevel);
  }
  putLogLevel(level: LoggingLevel): Promise<void> {
    return this.#storage.put(KEY.logLevel, level);
  }

  /**
   * When the session was last used (ms since the epoch), written at most once a minute, at least four times per idle period.
   * Absent when unreadable (the alarm then counts from now, never from 0, so it does not delete the session).
   */
  activity(): Promise<number | undefined> {
    return this.#read(KEY.activity, "activity", StoredActivity);
  }
  putActivity(at: number): Promise<void> {
    return this.#storage.put(KEY.activity, at);
  }

  /**
   * An admin asked for the team's current config: taken at the start of the next request (anything but `true` is
   * no). Read from storage once per store, like the session record.
   */
  /** Code view: a program paused for the user's consent (src/views/code/approval.ts). */
  paused(id: string): Promise<PausedRun | undefined> {
    return this.#read(KEY.pausedPrefix + id, "paused program", PausedRun);
  }
  async deletePaused(id: string): Promise<void> {
    await this.#storage.delete(KEY.pausedPrefix + id);
  }
  /** Keeps a paused program, and at most MAX_PAUSED of them: the oldest go. */
  async putPaused(id: string, run: PausedRun): Promise<void> {
    const rows = [...(await this.#storage.list({ prefix: KEY.pausedPrefix }))];
    const at = (value: unknown) => (typeof (value as { at?: unknown } | null)?.at === "number" ? (value as { at: number }).at : 0);
    const oldest = rows.sort(([, a], [, b]) => at(a) - at(b)).slice(0, Math.max(0, rows.length - (MAX_PAUSED - 1)));
    if (oldest.length > 0) await this.#storage.delete(oldest.map(([key]) => key));
    await this.#storage.put(KEY.pausedPrefix + id, run);
  }

  async reloadPending(): Promise<boolean> {
    if (this.#reload) return this.#reload.value;
    const writes = this.#writes;
    const pending = (await this.#storage.get(KEY.reload)) === true;
    if (writes === this.#writes) this.#reload = { value: pending };
    return pending;
  }
  async setReloadPending(on: boolean): Promise<void> {
    const write = ++this.#writes;
    this.#reload = undefined;
    if (on) await this.#storage.put(KEY.reload, true);
    else await this.#storage.delete(KEY.reload);
    if (write === this.#writes) this.#reload = { value: on };
  }

  /**
   * An unreadable record is left out, which is what no record means: an eager upstream not tried yet (connected
   * again), a lazy one untouched (offered to load_mcp again).
   */
  async all(): Promise<Map<string, UpstreamRecord>> {
    const rows = await this.#storage.list({ prefix: KEY.upstreamPrefix });
    const out = new Map<string, UpstreamRecord>();
    for (const [key, value] of rows) {
      const record = this.#check(key, "upstream record", StoredUpstream, value);
      if (record) out.set(key.slice(KEY.upstreamPrefix.length), record);
    }
    return out;
  }
  put(name: string, record: UpstreamRecord): Promise<void> {
    return this.#storage.put(KEY.upstreamPrefix + name, record);
  }
  async remove(name: string): Promise<void> {
    await this.#storage.delete(KEY.upstreamPrefix + name);
  }

  /**
   * The resources tool results linked to, one key per link (`link:<seq>`), bounded by ResourceLinks.
   * An unreadable link is left out: its URI is routed as one no result linked.
   */
  async links(): Promise<StoredLink[]> {
    const rows = await this.#storage.list({ prefix: KEY.linkPrefix });
    return [...rows].flatMap(([key, value]) => this.#check(key, "resource link", StoredLinkSchema, value) ?? []);
  }
  async saveLinks(put: StoredLink[], remove: number[]): Promise<void> {
    for (const batch of batches(put)) await this.#storage.put(Object.fromEntries(batch.map((link) => [KEY.linkPrefix + link.seq, link])));
    for (const batch of batches(remove)) await this.#storage.delete(batch.map((seq) => KEY.linkPrefix + seq));
  }

  /** Forgets the session entirely (DELETE). */
  async clear(): Promise<void> {
    const write = ++this.#writes;
    this.#session = this.#reload = undefined;
    await this.#storage.deleteAll();
    if (write !== this.#writes) return;
    this.#session = { value: undefined };
    this.#reload = { value: false };
  }

  async #read<S extends z.ZodType>(key: string, what: string, schema: S): Promise<z.output<S> | undefined> {
    return this.#check(key, what, schema, await this.#storage.get(key));
  }

  /** The stored value when its schema accepts it (kept as stored); else undefined, logged once by its key. */
  #check<S extends z.ZodType>(key: string, what: string, schema: S, value: unknown): z.output<S> | undefined {
    if (value === undefined) return undefined;
    const record = accepted(schema, value);
    if (record === undefined) logUnreadable(what, key);
    return record;
  }
}
