// One upstream MCP server over the SDK Client: negotiate its protocol era, connect, read its catalog, call its tools,
// close; foreign errors become UpstreamError here (the fetch its transport goes through is fetch-chain.ts, the
// classification of faults faults.ts, where era verdicts are kept between connections teams/era-cache.ts).
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SSEClientTransport,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type AuthProvider,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type Notification,
  type PriorDiscovery,
  type Request as McpRequest,
  type RequestMethod,
  type Result,
  type ResultTypeMap,
  type ServerCapabilities,
} from "@modelcontextprotocol/client";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../errors.ts";
import { waitAtMost } from "./backoff.ts";
import { classify, type FetchLike } from "./exchange.ts";
import { faultOf, scrub } from "./faults.ts";
import { FetchChain, ORIGIN_HEADER } from "./fetch-chain.ts";
import { answerInputRounds } from "./input-rounds.ts";
import type { FetchGate, ResponseTooLarge } from "./fetch-gate.ts";
import { Withheld, cleanInbound, errorSecrets } from "./withheld.ts";

/** How an upstream reaches the host through the session: capabilities, server-to-client requests, notifications. */
export interface UpstreamHooks {
  /** The host's own client capabilities; the upstream is told the ones the proxy can relay. */
  capabilities: () => ClientCapabilities;
  /**
   * A server-to-client request (sampling, elicitation, roots) relayed to the host; its answer goes back up. A 2025
   * upstream sends these as requests on its session; a 2026 upstream embeds them in an `input_required` result,
   * which the client answers through the same relay before it makes the call again (input-rounds.ts). `origin` is
   * the origin of the host call the request belongs to (RequestOptions.origin), when the upstream said which: it
   * sent the request on that call's answer stream, or in that call's `input_required`.
   */
  relay: (upstream: string, request: McpRequest, origin: string | undefined) => Promise<Result>;
  /** Every notification the upstream sends (logging, resource updates, list changes). */
  notify: (upstream: string, notification: Notification) => void;
}

/**
 * A cached era verdict, exactly what the SDK's `connect({ prior })` takes: `modern` with the upstream's
 * `server/discover` result (connecting then costs no round trip), or `legacy` (no probe, straight to `initialize`).
 */
export type PriorVerdict = PriorDiscovery;

/**
 * Where era verdicts are kept between connections (teams/era-cache.ts). The client asks before it connects a
 * streamable-HTTP upstream, writes only what a successful negotiation established (never after an auth failure,
 * a 5xx or a timeout: those fail the connect), and drops a verdict the upstream proved stale.
 */
export interface EraCache {
  /** The verdict to supply for this entry, if one is known and young enough to be trusted. */
  get(spec: UpstreamSpec): Promise<PriorVerdict | undefined>;
  put(spec: UpstreamSpec, verdict: PriorVerdict): Promise<void>;
  drop(spec: UpstreamSpec): Promise<void>;
}

export interface ClientDeps {
  /** The fetch every upstream request goes through (tests inject a recording one). */
  fetch: FetchLike;
  clientInfo: Implementation;
  hooks?: UpstreamHooks;
  /** Connection slots and the response size limit of the session. */
  gate?: FetchGate;
  /** Era verdicts kept between connections; without it every streamable-HTTP connect probes. */
  eras?: EraCache;
  /**
   * An OAuth upstream's bearer tokens (docs/oauth.md 3.3): asked before every request, told of a 401 (then the
   * request is sent once more). Each token it gives is withheld from whatever the upstream says, like `withheld`.
   */
  auth?: AuthProvider;
  /**
   * What the upstream must never show back (resolveHeaders' `withheld`: the team's secrets in its headers, literal
   * values that look like credentials): every message it sends is cleaned of them as it arrives (withheld.ts).
   */
  withheld?: readonly string[];
}

export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * The host call this request is made for (HostBridge.during names it): a request the upstream sends while it
   * answers (on this request's answer stream, or in its `input_required`) is relayed with it, so it reaches that call.
   */
  origin?: string;
  /** Called for each upstream progress notification of this request. */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** `_meta` entries of the host's request that travel on (trace context, a 2026 host's log level). */
  meta?: Record<string, unknown>;
  /**
   * "return": a 2026 upstream's `input_required` comes back as the result (for a 2026 host to answer), instead of
   * being answered through the hooks' relay. Ignored for a 2025 upstream, whose requests always take the relay.
   */
  inputRequired?: "return";
  /** The next round of a call a 2026 upstream answered `input_required`: the host's answers and its state. */
  retry?: { inputResponses?: Record<string, unknown>; requestState?: string };
}

/** Client capabilities the proxy relays to the host, and the upstream request that needs each. */
const RELAYED = [
  ["sampling", "sampling/createMessage"],
  ["elicitation", "elicitation/create"],
  ["roots", "roots/list"],
] as const;

/**
 * What the proxy tells an upstream it can do as a client: the host's capabilities among those it relays. An upstream's
 * catalog may depend on them (some register tools only for clients that can answer elicitation or sampling).
 */
export function relayedCapabilities(host: ClientCapabilities): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  for (const [name] of RELAYED) if (host[name]) Object.assign(capabilities, { [name]: host[name] });
  return capabilities;
}

/** Lists are followed through their cursors, but never forever. */
const MAX_PAGES = 100;
const NO_TIMEOUT = 2_147_483_647;
/** How long close() waits for the DELETE that ends the upstream session before it returns (the DELETE goes on). */
export const CLOSE_GRACE_MS = 1_000;

/**
 * HTTP statuses that, answering the first request sent on a cached modern verdict, say the verdict is stale: the
 * upstream turned the 2026 request away before running it (a 2025 server wants its session, a 2026 one no longer
 * serves that revision). Not among them: auth (401, 403), a timeout (408), a body too large (413) and rate limits
 * (429), which say nothing about the era.
 */
const staleStatus = (status: number): boolean => status >= 400 && status < 500 && ![401, 403, 408, 413, 429].includes(status);

/** One SDK connection: the client, its transport, and the fetch chain under it. An UpstreamClient holds one at a time. */
interface Link {
  client: Client;
  transport: StreamableHTTPClientTransport | SSEClientTransport;
  chain: FetchChain;
  /** Connected from a cached modern verdict, and no answer has confirmed the verdict yet. */
  unconfirmed: boolean;
  /**
   * A status in `staleStatus` that one of this link's POSTs got while unconfirmed. The SDK turns a 400 whose body
   * is a JSON-RPC error for the request into a plain ProtocolError, which no longer shows the status.
   */
  rejected: boolean;
  /** Replaced (or never brought up): its closing and its faults are no longer this client's. */
  retired: boolean;
  /** The server-to-client requests this link relays to the host (those of the capabilities it declared). */
  relays: ReadonlySet<string>;
}

export class UpstreamClient {
  readonly spec: UpstreamSpec;
  readonly #headers: Record<string, string>;
  readonly #deps: ClientDeps;
  /** What every message of the upstream is cleaned of (and its error text scrubbed of). */
  readonly #withheld: Withheld;
  /** Header values error text is scrubbed of as well. */
  readonly #errorSecrets: string[];
  /** The connection in use: set once connect() succeeds, replaced only when a cached modern verdict proved stale. */
  #link!: Link;
  #closed = false;
  /** The standalone GET stream is opened only on demand (see isStandaloneStream); a modern upstream has none. */
  #streamWanted = false;
  /** Set when an answer outgrew the limit: the client was closed because of it. */
  #overflow: ResponseTooLarge | undefined;
  /** The renegotiation under way after a stale verdict, shared by every request that ran into it. */
  #renegotiating: Promise<void> | undefined;

  private constructor(spec: UpstreamSpec, headers: Record<string, string>, deps: ClientDeps) {
    this.spec = spec;
    this.#headers = headers;
    this.#deps = deps;
    this.#withheld = new Withheld(deps.withheld ?? []);
    this.#errorSecrets = errorSecrets(headers);
  }

  /**
   * Opens the connection. A streamable-HTTP upstream's era is negotiated: a cached verdict is supplied when there
   * is one (a modern one costs no round trip, a legacy one goes straight to `initialize`), otherwise the SDK
   * probes with `server/discover` and falls back to `initialize` when the upstream shows no 2026 evidence. The
   * older HTTP+SSE transport always runs `initialize`. Headers come resolved (secret references filled in). When
   * `signal` aborts before the connection is up, the client is closed (every exchange under way is aborted) and
   * the attempt fails with the signal's reason.
   */
  static async connect(spec: UpstreamSpec, headers: Record<string, string>, deps: ClientDeps, signal?: AbortSignal): Promise<UpstreamClient> {
    const upstream = new UpstreamClient(spec, headers, deps);
    await upstream.#start(signal);
    return upstream;
  }

  /**
   * Only the normalized streamable-HTTP spelling negotiates (config/validate.ts turns "http" into it): the SSE
   * transport, and anything else, keeps the 2025 handshake with no probe.
   */
  get #negotiates(): boolean {
    return this.spec.transport === "streamable-http";
  }

  async #start(signal?: AbortSignal): Promise<void> {
    const eras = this.#negotiates ? this.#deps.eras : undefined;
    const prior = eras ? await eras.get(this.spec).catch(() => undefined) : undefined;
    const first = this.#build(prior?.kind === "modern");
    try {
      await this.#bringUp(first, prior, signal);
      this.#link = first;
    } catch (err) {
      if (!eras || !prior || signal?.aborted || !staleAtConnect(prior, err)) throw this.#convert(signal?.aborted ? signal.reason : err, first);
      // The cached verdict no longer holds: forget it and negotiate afresh, once.
      await eras.drop(this.spec).catch(() => {});
      const second = this.#build(false);
      try {
        await this.#bringUp(second, undefined, signal);
      } catch (again) {
        throw this.#convert(signal?.aborted ? signal.reason : again, second);
      }
      this.#link = second;
      await this.#remember(second);
      return;
    }
    if (eras && !prior) await this.#remember(first);
  }

  /** A new SDK client and transport over a new fetch chain, nothing sent yet. */
  #build(fromModernVerdict: boolean): Link {
    const spec = this.spec;
    const deps = this.#deps;
    // The chain's hooks need the link the chain becomes part of.
    let link: Link;
    // Notes a stale-looking status to a request before the SDK may hide it (see Link.rejected).
    const observed: FetchLike = async (input, init) => {
      const response = await deps.fetch(input, init);
      if (link.unconfirmed && staleStatus(response.status) && classify(init).kind === "request") link.rejected = true;
      return response;
    };
    const chain = new FetchChain(spec, { fetch: observed, gate: deps.gate }, {
      overflowed: (error) => {
        if (link.retired) return;
        // While the link is being brought up it is not yet the one close() ends: closing its SDK client fails the connect.
        if (this.#link === link) this.#overflowed(error);
        else {
          this.#overflow = error;
          void link.client.close().catch(() => {});
        }
      },
      streamWanted: () => this.#streamWanted,
      closed: () => this.#closed || link.retired,
    });
    const requestInit = { headers: this.#headers };
    const transport =
      spec.transport === "sse"
        ? // The older HTTP+SSE transport: its one GET stream carries every answer, so it stays open while connected.
          new SSEClientTransport(new URL(spec.url), { fetch: chain.fetch, requestInit })
        : new StreamableHTTPClientTransport(new URL(spec.url), {
            fetch: chain.streamableFetch,
            requestInit,
            ...(deps.auth ? { authProvider: this.#scrubbing(deps.auth) } : {}),
            // One reconnect attempt for a dropped GET stream; call-level retries are the registry's business.
            reconnectionOptions: { maxRetries: 1, initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2 },
          });
    // Before anything reads a message of the upstream's (the era probe, the SDK, the chain's watch, the catalog).
    cleanInbound(transport, (message) => this.#withheld.message(message));
    const hooks = deps.hooks;
    const capabilities = relayedCapabilities(hooks?.capabilities() ?? {});
    // `auto`: `server/discover` first, `initialize` when the upstream shows no 2026 evidence (a 401/403, a 5xx or a
    // timeout fails the connect instead). The default for `input_required` stays: the SDK fulfils each embedded
    // request through the relay handlers below and retries the call itself.
    const client = new Client(deps.clientInfo, {
      capabilities,
      versionNegotiation: { mode: this.#negotiates ? "auto" : "legacy" },
    });
    const relays = new Set<string>();
    if (hooks) {
      for (const [name, method] of RELAYED) {
        if (!capabilities[name]) continue;
        relays.add(method);
        // The answer stream the request came on names the call it belongs to (fetch-chain.ts).
        client.setRequestHandler(method, (request, ctx) => hooks.relay(spec.name, request as McpRequest, chain.originOf(ctx.mcpReq.id)) as never);
      }
      client.fallbackNotificationHandler = async (notification) => hooks.notify(spec.name, notification);
    }
    link = { client, transport, chain, unconfirmed: fromModernVerdict, rejected: false, retired: false, relays };
    // Only the link in use closes this client: one being brought up is closed by the SDK when its handshake fails,
    // and a retired one by the renegotiation that replaced it.
    client.onclose = () => {
      if (this.#link === link && !link.retired) this.#closed = true;
    };
    return link;
  }

  /** The auth provider, with every token it hands out withheld from what the upstream says. */
  #scrubbing(auth: AuthProvider): AuthProvider {
    return {
      token: async () => {
        const token = await auth.token();
        if (token !== undefined) this.#withheld.learn(token);
        return token;
      },
      ...(auth.onUnauthorized ? { onUnauthorized: (ctx) => auth.onUnauthorized!(ctx) } : {}),
    };
  }

  /** Connects the link (probe, `initialize`, or a verdict adopted); on failure it is retired and closed. */
  async #bringUp(link: Link, prior: PriorVerdict | undefined, signal?: AbortSignal): Promise<void> {
    // Closing the transport as well: while the SDK probes, the transport is not yet the client's to close.
    const abort = () => {
      void link.client.close().catch(() => {});
      void link.transport.close().catch(() => {});
    };
    signal?.addEventListener("abort", abort, { once: true });
    try {
      if (signal?.aborted) throw signal.reason;
      await link.client.connect(link.transport, { ...this.#options(signal), ...(prior ? { prior } : {}) });
    } catch (err) {
      link.retired = true;
      await link.client.close().catch(() => {});
      await link.transport.close().catch(() => {});
      throw err;
    } finally {
      signal?.removeEventListener("abort", abort);
    }
    // From now on, note which watched requests got their answer, so one whose stream ends without it is failed
    // at once.
    link.transport.onmessage = link.chain.watchAnswers(link.transport.onmessage);
  }

  /** Keeps what a negotiation established (best-effort: a cache that fails costs a probe next time, nothing more). */
  async #remember(link: Link): Promise<void> {
    const eras = this.#deps.eras;
    if (!eras || !this.#negotiates) return;
    const era = link.client.getProtocolEra();
    const discover = link.client.getDiscoverResult();
    const verdict: PriorVerdict | undefined =
      era === "modern" && discover ? { kind: "modern", discover } : era === "legacy" ? { kind: "legacy" } : undefined;
    if (verdict) await eras.put(this.spec, verdict).catch(() => {});
  }

  /**
   * Runs one request on the current link. When the first request sent on a cached modern verdict is turned away
   * as the verdict's era (see staleStatus, -32022), the verdict is dropped, the era negotiated afresh on a new
   * link, and the request sent once more there: the upstream did not run it the first time.
   */
  async #send<T>(work: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const link = this.#link;
    try {
      const result = await work(link.client);
      link.unconfirmed = false;
      return result;
    } catch (err) {
      if (!link.unconfirmed || this.#closed || !staleOnRequest(err, link)) throw err;
      await this.#renegotiate(link, signal);
      return await work(this.#link.client);
    }
  }

  /** Replaces a link whose modern verdict proved stale; a renegotiation that fails closes this client. */
  async #renegotiate(stale: Link, signal?: AbortSignal): Promise<void> {
    if (this.#link === stale && !this.#renegotiating) {
      this.#renegotiating = (async () => {
        await this.#deps.eras?.drop(this.spec).catch(() => {});
        const fresh = this.#build(false);
        try {
          await this.#bringUp(fresh, undefined, signal);
        } catch (err) {
          const error = this.#convert(err, fresh);
          await this.close();
          throw error;
        }
        if (this.#closed) {
          fresh.retired = true;
          await fresh.client.close().catch(() => {});
          throw new UpstreamError(this.spec.name, { kind: "closed" });
        }
        stale.retired = true;
        this.#link = fresh;
        // A modern link holds no session: closing it sends nothing.
        void stale.client.close().catch(() => {});
        // A 2025 link opens its GET stream by itself after initialize: the chain lets it through if it is wanted.
        await this.#remember(fresh);
      })().finally(() => {
        this.#renegotiating = undefined;
      });
    }
    await this.#renegotiating;
  }

  /** An answer outgrew the limit: close, so every pending request ends now, and remember why. */
  #overflowed(error: ResponseTooLarge): void {
    this.#overflow = error;
    void this.close();
  }

  /** What the upstream said it can do (its initialize result, or the capabilities of its discover result). */
  get capabilities(): ServerCapabilities {
    return this.#link.client.getServerCapabilities() ?? {};
  }

  /** Which protocol era the connection speaks: `modern` (2026-07-28, no session) or `legacy` (a 2025 session). */
  get era(): "modern" | "legacy" {
    return this.#link.client.getProtocolEra() === "modern" ? "modern" : "legacy";
  }

  /**
   * Opens the standalone GET stream (server-initiated notifications and requests). Only while the host holds
   * its own stream: an open upstream stream keeps the session object from being evicted. A modern upstream has
   * no such stream (and no session to hang it on): nothing is sent, but the wish is kept, so a link that turns
   * out to be legacy after all (see #renegotiate) opens its stream, and the pool closes this client like any
   * streaming one when the host's stream ends (which costs a modern upstream nothing: no session, no DELETE).
   */
  async openStream(): Promise<void> {
    if (this.#streamWanted || this.#closed) return;
    this.#streamWanted = true;
    const transport = this.#link.transport;
    if (transport instanceof StreamableHTTPClientTransport && this.era === "legacy") await transport.resumeStream("").catch(() => {});
  }

  get streaming(): boolean {
    return this.#streamWanted;
  }

  /**
   * Any request to the upstream (its answer is checked against the method's result schema); failures become
   * UpstreamError. A 2026 upstream's `input_required` is answered here, round by round, through the hooks' relay
   * (or returned as it is, with `inputRequired: "return"`).
   */
  async request<M extends RequestMethod>(request: { method: M; params?: McpRequest["params"] }, options: RequestOptions = {}): Promise<ResultTypeMap[M]> {
    const work = async (client: Client): Promise<Result> => {
      const modern = client.getProtocolEra() === "modern";
      const send = (params: McpRequest["params"]) =>
        client.request({ method: request.method, ...(params === undefined ? {} : { params }) } as never, {
          ...this.#options(options.signal),
          ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
          ...(modern ? { allowInputRequired: true } : {}),
          ...(options.origin === undefined ? {} : { headers: { [ORIGIN_HEADER]: options.origin } }),
        }) as Promise<Result>;
      const first = await send(request.params);
      if (!modern || options.inputRequired === "return") return first;
      return answerInputRounds(first, {
        relayable: this.#link.relays,
        // Only a client with hooks relays anything (relays is empty without them).
        ask: (asked) => this.#deps.hooks!.relay(this.spec.name, asked, options.origin),
        retry: (next) => send({ ...request.params, ...next }),
        fail: (detail) => new UpstreamError(this.spec.name, { kind: "protocol", detail }),
        signal: options.signal,
      });
    };
    try {
      return (await this.#send(work, options.signal)) as ResultTypeMap[M];
    } catch (err) {
      throw this.#convert(err);
    }
  }

  /** A notification to the upstream (roots changed, cancellations are the SDK's own). */
  async notify(notification: Notification): Promise<void> {
    await this.#link.client.notification(notification as never).catch(() => {});
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** tools/list to the end (required), then resources, templates and prompts (best-effort). */
  async readCatalog(signal?: AbortSignal): Promise<UpstreamCatalog> {
    // tools/list first: on a stale verdict it is the request that renegotiates, so what follows reads the new link.
    let tools: UpstreamCatalog["tools"];
    try {
      tools = await this.#pages((cursor) => this.#list("tools/list", cursor, signal), (r) => r.tools);
    } catch (err) {
      throw this.#convert(err);
    }
    const client = this.#link.client;
    const caps = client.getServerCapabilities() ?? {};
    const catalog: UpstreamCatalog = {
      capabilities: caps,
      tools,
      resources: [],
      resourceTemplates: [],
      prompts: [],
      notes: [],
    };
    const info = client.getServerVersion();
    if (info) catalog.serverInfo = info;
    const transport = this.#link.transport;
    const version = transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined;
    if (version) catalog.protocolVersion = version;
    const instructions = client.getInstructions();
    if (instructions) catalog.instructions = instructions;

    const optional = async <T>(what: string, enabled: unknown, read: () => Promise<T[]>): Promise<T[]> => {
      if (!enabled) return [];
      try {
        return await read();
      } catch (err) {
        const fault = this.#fault(err);
        // -32601 to an advertised list is common (see shared/corpus): the list is empty, not a failure.
        if (!(fault.kind === "rpc" && fault.code === ProtocolErrorCode.MethodNotFound)) {
          catalog.notes.push(`${what}: ${new UpstreamError(this.spec.name, fault).message}`);
        }
        return [];
      }
    };
    [catalog.resources, catalog.resourceTemplates, catalog.prompts] = await Promise.all([
      optional("resources/list", caps.resources, () =>
        this.#pages((cursor) => this.#list("resources/list", cursor, signal), (r) => r.resources),
      ),
      optional("resources/templates/list", caps.resources, () =>
        this.#pages((cursor) => this.#list("resources/templates/list", cursor, signal), (r) => r.resourceTemplates),
      ),
      optional("prompts/list", caps.prompts, () =>
        this.#pages((cursor) => this.#list("prompts/list", cursor, signal), (r) => r.prompts),
      ),
    ]);
    return catalog;
  }

  /** tools/call, result passed through as the upstream gave it (no output-schema validation in between). */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions = {}): Promise<CallToolResult> {
    const params = { name, arguments: args, ...(options.meta ? { _meta: options.meta } : {}), ...options.retry };
    return this.request({ method: "tools/call", params }, options) as Promise<CallToolResult>;
  }

  /**
   * Closes the client: every exchange under way is aborted at once (its slot freed, its request failed), and a
   * 2025 upstream session is ended with a DELETE (best-effort) that runs under its own deadline. Waits for that
   * DELETE at most CLOSE_GRACE_MS: a healthy upstream has answered by then, a hanging one delays no caller. A
   * modern upstream holds no session, so nothing is sent (the SDK sends a DELETE only for a session id it holds).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const link = this.#link as Link | undefined;
    if (!link) return;
    const transport = link.transport;
    const ending = transport instanceof StreamableHTTPClientTransport && transport.sessionId ? transport.terminateSession().catch(() => {}) : undefined;
    await link.client.close().catch(() => {});
    if (ending) await waitAtMost(ending, CLOSE_GRACE_MS);
  }

  #options(signal?: AbortSignal) {
    const timeout = this.spec.timeout === 0 ? NO_TIMEOUT : this.spec.timeout;
    return signal ? { timeout, signal } : { timeout };
  }

  /**
   * One page of a list, as a plain request: the SDK's list helpers would walk every page themselves, keep a
   * response cache, and (for 2026-era servers) filter tools; the proxy pages, caches and filters on its own terms.
   */
  #list<M extends "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list">(method: M, cursor: string | undefined, signal?: AbortSignal): Promise<ResultTypeMap[M]> {
    return this.#send(
      (client) => client.request({ method, ...(cursor === undefined ? {} : { params: { cursor } }) } as never, this.#options(signal)) as Promise<ResultTypeMap[M]>,
      signal,
    );
  }

  async #pages<R extends { nextCursor?: string | undefined }, T>(
    read: (cursor: string | undefined) => Promise<R>,
    items: (r: R) => T[],
  ): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await read(cursor);
      out.push(...items(result));
      cursor = result.nextCursor;
      if (!cursor) return out;
    }
    throw new UpstreamError(this.spec.name, { kind: "protocol", detail: `list did not end after ${MAX_PAGES} pages` });
  }

  #convert(err: unknown, link?: Link): UpstreamError {
    if (err instanceof UpstreamError) return err;
    return new UpstreamError(this.spec.name, this.#fault(err, link));
  }

  /** What error text is scrubbed of: every withheld value in every form, and the header values. */
  get #scrubbed(): string[] {
    return [...this.#withheld.needles, ...this.#errorSecrets];
  }

  /**
   * By type, never by message text (faults.ts); messages are scrubbed of the URL and header values before they
   * travel. A probe that failed for want of the upstream (network, an unusable reply) is judged by its cause, as
   * the same failure of `initialize` would be.
   */
  #fault(err: unknown, link: Link | undefined = this.#link as Link | undefined): UpstreamFault {
    const cause = err instanceof SdkError && !(err instanceof SdkHttpError) && err.code === SdkErrorCode.EraNegotiationFailed ? err.cause : undefined;
    // The 2026 wire answers some JSON-RPC errors with an HTTP status (unknown method: 404), and the SDK passes on
    // only a 400's body as the error itself: the error is the upstream's, whatever status framed it.
    if (err instanceof SdkHttpError && link?.client.getProtocolEra() === "modern" && staleStatus(err.status)) {
      const error = rpcError(err);
      if (error) return { kind: "rpc", code: error.code, detail: scrub(error.message, this.spec.url, this.#scrubbed) };
    }
    const transport = link?.transport;
    return faultOf(cause ?? err, {
      spec: this.spec,
      secrets: this.#scrubbed,
      overflowLimit: this.#overflow?.limit,
      sessionId: transport instanceof StreamableHTTPClientTransport ? transport.sessionId : undefined,
      retryAfterMs: link?.chain.retryAfterMs,
      closed: this.#closed,
    });
  }
}

/** The JSON-RPC error in the body of an HTTP error, if its body is one. */
function rpcError(err: SdkHttpError): { code: number; message: string } | undefined {
  if (typeof err.data.text !== "string") return undefined;
  try {
    const body = JSON.parse(err.data.text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code !== "number") return undefined;
    return { code: body.error.code, message: typeof body.error.message === "string" ? body.error.message : "" };
  } catch {
    return undefined;
  }
}

/** The JSON-RPC error code of a failure: a ProtocolError's own, or the one in the body of an HTTP error. */
function rpcCode(err: unknown): number | undefined {
  if (err instanceof ProtocolError) return err.code;
  return err instanceof SdkHttpError ? rpcError(err)?.code : undefined;
}

/**
 * Whether a connect from a cached verdict failed because the verdict is stale. Modern: the SDK refused the stored
 * discover result (no mutual 2026 revision, or a malformed one). Legacy: the upstream answered `initialize` with
 * -32022, as a server that now speaks only 2026 does.
 */
function staleAtConnect(prior: PriorVerdict, err: unknown): boolean {
  if (prior.kind === "modern") return err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed;
  return rpcCode(err) === ProtocolErrorCode.UnsupportedProtocolVersion;
}

/**
 * JSON-RPC errors only a 2026 server answers a 2026 request with (it understood the request and refused it for
 * what it asked, not for its era): unknown method (404 -32601), bad params or envelope (-32602), a missing client
 * capability (-32021), a header mismatch (-32020). A fresh probe would change none of them.
 */
const MODERN_REFUSALS: ReadonlySet<number> = new Set([ProtocolErrorCode.MethodNotFound, ProtocolErrorCode.InvalidParams, ProtocolErrorCode.MissingRequiredClientCapability, -32020]);

/** Whether the first request on a cached modern verdict was turned away as that era (see staleStatus). */
function staleOnRequest(err: unknown, link: Link): boolean {
  const code = rpcCode(err);
  if (code !== undefined && MODERN_REFUSALS.has(code)) return false;
  if (err instanceof SdkHttpError) return staleStatus(err.status);
  if (err instanceof SdkError) return err.code === SdkErrorCode.EraNegotiationFailed;
  if (err instanceof ProtocolError) return code === ProtocolErrorCode.UnsupportedProtocolVersion || link.rejected;
  return false;
}
