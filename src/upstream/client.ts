// One upstream MCP server over the SDK Client: connect, read its catalog (catalog-read.ts), call its tools, close;
// foreign errors become UpstreamError here. The connection it speaks on is client-link.ts's; which era that connection
// speaks, and its replacement when a kept era verdict proves stale, era-negotiation.ts's (the fetch its transport goes
// through is fetch-chain.ts, the classification of faults faults.ts, where era verdicts are kept between connections
// store/era-cache.ts).
import {
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Client,
  type Notification,
  type Request as McpRequest,
  type RequestMethod,
  type Result,
  type ResultTypeMap,
  type ServerCapabilities,
} from "@modelcontextprotocol/client";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../lib/errors.ts";
import { waitAtMost } from "./backoff.ts";
import { readCatalog, type ListMethod } from "./catalog-read.ts";
import { bringUp, buildLink, type Link, type LinkDeps, type LinkOwner, type UpstreamHooks } from "./client-link.ts";
import { NegotiatedLink } from "./era-negotiation.ts";
import { rpcError, staleStatus, type EraCache } from "./era-verdict.ts";
import { faultOf, scrub } from "./faults.ts";
import { ORIGIN_HEADER } from "./fetch-chain.ts";
import { answerInputRounds } from "./input-rounds.ts";
import type { ResponseTooLarge } from "./fetch-gate.ts";
import { Withheld, errorSecrets } from "./withheld.ts";

export { relayedCapabilities, type UpstreamHooks } from "./client-link.ts";
export type { EraCache, PriorVerdict } from "./era-verdict.ts";

export interface ClientDeps extends LinkDeps {
  /** Era verdicts kept between connections; without it every streamable-HTTP connect probes. */
  eras?: EraCache;
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

const NO_TIMEOUT = 2_147_483_647;
/** How long close() waits for the DELETE that ends the upstream session before it returns (the DELETE goes on). */
export const CLOSE_GRACE_MS = 1_000;

export class UpstreamClient {
  readonly spec: UpstreamSpec;
  readonly #hooks: UpstreamHooks | undefined;
  /** What every message of the upstream is cleaned of (and its error text scrubbed of). */
  readonly #withheld: Withheld;
  /** Header values error text is scrubbed of as well. */
  readonly #errorSecrets: string[];
  /** The connection in use (set once connect() succeeds), replaced only when a cached modern verdict proved stale. */
  readonly #links: NegotiatedLink;
  #closed = false;
  /** The standalone GET stream is opened only on demand (see isStandaloneStream); a modern upstream has none. */
  #streamWanted = false;
  /** Set when an answer outgrew the limit: the client was closed because of it. */
  #overflow: ResponseTooLarge | undefined;

  /** What each of this client's links tells it and asks of it. */
  readonly #owner: LinkOwner = {
    current: () => this.#links.current,
    overflowed: (link, error) => {
      // While the link is being brought up it is not yet the one close() ends: closing its SDK client fails the connect.
      if (this.#links.current === link) this.#overflowed(error);
      else {
        this.#overflow = error;
        void link.client.close().catch(() => {});
      }
    },
    streamWanted: () => this.#streamWanted,
    closed: () => this.#closed,
    lost: () => {
      this.#closed = true;
    },
  };

  private constructor(spec: UpstreamSpec, headers: Record<string, string>, deps: ClientDeps) {
    this.spec = spec;
    this.#hooks = deps.hooks;
    this.#withheld = new Withheld(deps.withheld ?? []);
    this.#errorSecrets = errorSecrets(headers);
    this.#links = new NegotiatedLink({
      spec,
      eras: this.#negotiates ? deps.eras : undefined,
      build: (fromModernVerdict) => buildLink(spec, headers, deps, this.#withheld, this.#owner, fromModernVerdict),
      bringUp: (link, prior, signal) => bringUp(link, this.#options(signal), prior, signal),
      convert: (err, link) => this.#convert(err, link),
      closed: () => this.#closed,
      close: () => this.close(),
    });
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
    await upstream.#links.start(signal);
    return upstream;
  }

  /**
   * Only the normalized streamable-HTTP spelling negotiates (config/validate.ts turns "http" into it): the SSE
   * transport, and anything else, keeps the 2025 handshake with no probe.
   */
  get #negotiates(): boolean {
    return this.spec.transport === "streamable-http";
  }

  /** The link in use: always set once connect() has returned. */
  get #link(): Link {
    return this.#links.current!;
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
   * out to be legacy after all (era-negotiation.ts) opens its stream, and the pool closes this client like any
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
        ask: (asked) => this.#hooks!.relay(this.spec.name, asked, options.origin),
        retry: (next) => send({ ...request.params, ...next }),
        fail: (detail) => new UpstreamError(this.spec.name, { kind: "protocol", detail }),
        signal: options.signal,
      });
    };
    try {
      return (await this.#links.send(work, options.signal)) as ResultTypeMap[M];
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

  /** tools/list to the end (required), then resources, templates and prompts (best-effort): catalog-read.ts. */
  readCatalog(signal?: AbortSignal): Promise<UpstreamCatalog> {
    return readCatalog({
      name: this.spec.name,
      page: (method, cursor) => this.#list(method, cursor, signal),
      link: () => this.#link,
      fault: (err) => this.#fault(err),
      convert: (err) => this.#convert(err),
    });
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
    const link = this.#links.current;
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
  #list<M extends ListMethod>(method: M, cursor: string | undefined, signal?: AbortSignal): Promise<ResultTypeMap[M]> {
    return this.#links.send(
      (client) => client.request({ method, ...(cursor === undefined ? {} : { params: { cursor } }) } as never, this.#options(signal)) as Promise<ResultTypeMap[M]>,
      signal,
    );
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
  #fault(err: unknown, link: Link | undefined = this.#links.current): UpstreamFault {
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

