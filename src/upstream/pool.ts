// A session's live upstream clients: one per upstream, connections coalesced and bounded by the entry's connect
// deadline, new clients brought in line with the session, and each upstream's reconnect budget.
import type { LoggingLevel, Notification } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../lib/errors.ts";
import { ReconnectBudget, backoffDelay, sleep } from "./backoff.ts";
import type { UpstreamClient } from "./client.ts";
import { deadline, exchangeMs } from "./exchange.ts";

/** Opens a client; when `signal` aborts first, the attempt is abandoned (its exchanges aborted) and fails. */
export type Connector = (spec: UpstreamSpec, signal?: AbortSignal) => Promise<UpstreamClient>;

/** Run on every new client before anyone uses it (re-subscribe the host's resources, for instance). */
export type ConnectHook = (name: string, client: UpstreamClient) => Promise<void>;

/** Each upstream's reconnect budget in a session: this many at once, then this many a minute (ReconnectBudget). */
export const RECONNECTS_PER_MINUTE = 10;

export class ClientPool {
  readonly #connect: Connector;
  readonly #onConnect: ConnectHook | undefined;
  readonly #now: () => number;
  readonly #clients = new Map<string, UpstreamClient>();
  /** Connections under way, shared by everyone who needs the same upstream. */
  readonly #connecting = new Map<string, Promise<UpstreamClient>>();
  readonly #budgets = new Map<string, ReconnectBudget>();
  /** Whether live clients keep their standalone GET stream open (while the host holds its own). */
  #streaming = false;
  #logLevel: LoggingLevel | undefined;

  constructor(connect: Connector, onConnect?: ConnectHook, now: () => number = Date.now) {
    this.#connect = connect;
    this.#onConnect = onConnect;
    this.#now = now;
  }

  /** The live client of an upstream, if it has one that is not closed. */
  live(name: string): UpstreamClient | undefined {
    const client = this.#clients.get(name);
    return client && !client.closed ? client : undefined;
  }

  /** Whether a connection to this upstream is under way (joining it costs no reconnect). */
  connecting(name: string): boolean {
    return this.#connecting.has(name);
  }

  /** Set by closeAll: the pool's session has let its upstreams go (idle, reload, end). */
  #closedAll = false;

  /**
   * The live client of an upstream, connecting (once, shared) when there is none. The connection (initialize and
   * bringing the client in line with the session) has the entry's connect deadline; an attempt that fails or
   * outlives it is forgotten, so the next caller starts a new one.
   */
  client(spec: UpstreamSpec): Promise<UpstreamClient> {
    const live = this.live(spec.name);
    if (live) return Promise.resolve(live);
    let pending = this.#connecting.get(spec.name);
    if (!pending) {
      pending = withDeadline(spec, async (signal) => {
        const client = await this.#connect(spec, signal);
        try {
          await this.#prepare(spec.name, client);
          signal.throwIfAborted();
          // The session let its upstreams go meanwhile: nobody would ever close this client.
          if (this.#closedAll) throw new UpstreamError(spec.name, { kind: "closed" });
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

  /**
   * Connects and runs `read` (reading a catalog), within the entry's connect deadline as a whole; on any failure
   * that client is dropped and the error rethrown. A connection lost before any answer is tried once more.
   */
  attach<T>(spec: UpstreamSpec, read: (client: UpstreamClient, signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(spec, async (signal) => {
      const client = await this.client(spec).catch(async (err: unknown) => {
        // A connection lost before any answer (a reused connection the upstream had already closed, say) is
        // worth one more try: nothing was processed. Errors the upstream gave are not retried here.
        if (!(err instanceof UpstreamError) || (err.fault.kind !== "unreachable" && err.fault.kind !== "closed")) throw err;
        await sleep(backoffDelay(0) / 5, signal);
        return this.client(spec);
      });
      try {
        return await read(client, signal);
      } catch (err) {
        // This client only: another call may have replaced it with a healthy one meanwhile. Not waited for: its
        // DELETE may hang on an upstream that does.
        void this.dropClient(spec.name, client);
        throw err;
      }
    });
  }

  /** Brings a new client in line with the session: its log level, its stream, the host's subscriptions. */
  async #prepare(name: string, client: UpstreamClient): Promise<void> {
    if (this.#logLevel && client.capabilities.logging) {
      await client.request({ method: "logging/setLevel", params: { level: this.#logLevel } }).catch(() => {});
    }
    // Not waited for: the stream is for notifications nobody asked for, and a GET that hangs delays no call.
    if (this.#streaming) void client.openStream();
    await this.#onConnect?.(name, client);
  }

  /** Closes an upstream's client, whichever it is. */
  async drop(name: string): Promise<void> {
    const client = this.#clients.get(name);
    this.#clients.delete(name);
    await client?.close();
  }

  /** Drops this very client only: another call may already have replaced it with a healthy one. */
  async dropClient(name: string, client: UpstreamClient): Promise<void> {
    this.forget(name, client);
    await client.close();
  }

  /** Forgets this client if it is still the upstream's (it closed on its own). */
  forget(name: string, client: UpstreamClient): void {
    if (this.#clients.get(name) === client) this.#clients.delete(name);
  }

  /** The upstream's reconnect budget. */
  budget(name: string): ReconnectBudget {
    let budget = this.#budgets.get(name);
    if (!budget) this.#budgets.set(name, (budget = new ReconnectBudget(RECONNECTS_PER_MINUTE, this.#now)));
    return budget;
  }

  /** The error for a spent reconnect budget, saying when the next reconnect is possible. */
  throttled(name: string): UpstreamError {
    const wait = Math.max(1, Math.ceil(this.budget(name).waitMs() / 1000));
    return new UpstreamError(name, { kind: "throttled", detail: `its reconnect budget is spent; the next reconnect in ${wait} s` });
  }

  /** The host's log level, applied to every live upstream that logs and to every one connected later. */
  async setLogLevel(level: LoggingLevel): Promise<void> {
    this.#logLevel = level;
    await Promise.all(
      [...this.#clients.values()]
        .filter((client) => client.capabilities.logging)
        .map((client) => client.request({ method: "logging/setLevel", params: { level } }).catch(() => {})),
    );
  }

  /** Live clients keep their GET streams open while `on`; when it turns off, streaming clients are closed. */
  async setStreaming(on: boolean): Promise<void> {
    if (on === this.#streaming) return;
    this.#streaming = on;
    const live = [...this.#clients.entries()];
    if (on) for (const [, client] of live) void client.openStream();
    else await Promise.all(live.filter(([, client]) => client.streaming).map(([name]) => this.drop(name)));
  }

  /** A notification to every live upstream. */
  async notifyAll(notification: Notification): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.notify(notification)));
  }

  /** Requests under way on this pool's clients (`counted`), and who waits for the last of them to end. */
  #inFlight = 0;
  #idle: (() => void) | undefined;

  /** Runs `work` (a request and its repeats) counted as under way on this pool's clients. */
  async counted<T>(work: () => Promise<T>): Promise<T> {
    this.#inFlight++;
    try {
      return await work();
    } finally {
      if (--this.#inFlight === 0) this.#idle?.();
    }
  }

  /** Closes every client once no counted request is under way: at once when none is. */
  closeWhenIdle(): Promise<void> {
    if (this.#inFlight === 0) return this.closeAll();
    return new Promise((resolve) => {
      this.#idle = () => {
        this.#idle = undefined;
        resolve(this.closeAll());
      };
    });
  }

  /** Closes every live client; a connection still under way is closed as soon as it is up. */
  async closeAll(): Promise<void> {
    this.#closedAll = true;
    await Promise.all([...this.#clients.keys()].map((name) => this.drop(name)));
  }
}

/**
 * Runs `work` under the entry's connect deadline (its timeout, or the default when it has none): past it the
 * signal aborts (whatever `work` is waiting on is abandoned) and the result is a timeout, whether or not `work`
 * has noticed yet.
 */
export function withDeadline<T>(spec: UpstreamSpec, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
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
