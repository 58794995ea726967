// The way back from upstreams to the host: server-to-client requests, logging, resource updates, list changes.
import {
  BAGGAGE_META_KEY,
  LOG_LEVEL_META_KEY,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  ProtocolError,
  Server,
  ProtocolErrorCode,
  type ClientCapabilities,
  type Notification,
  type Request,
  type Result,
  type LoggingLevel,
  type ServerContext,
  type ServerNotification,
} from "@modelcontextprotocol/server";
import type { CatalogChange } from "../catalog/catalog.ts";
import type { ConfigMode } from "../config/validate.ts";
import { RpcError } from "../lib/errors.ts";
import type { UpstreamHooks } from "../upstream/client.ts";
import { markedAsFrom } from "./provenance.ts";

export type HostExtra = ServerContext;

/** What an upstream call is aborted with when the host gives up on its request. */
const HOST_CANCELLED = "the host cancelled the request";
const hostSignals = new WeakMap<AbortSignal, AbortSignal>();

/**
 * The host request's cancellation, as the signal upstream calls take. Its reason is the proxy's own: when a
 * 2026-era client closes its stream, the SDK aborts the request with its connection-closed error, which an upstream
 * call would otherwise report as its own connection failing (and the upstream client would be dropped, its
 * notifications/cancelled never sent).
 */
export function hostSignal(extra: HostExtra): AbortSignal {
  const from = extra.mcpReq.signal;
  let signal = hostSignals.get(from);
  if (!signal) {
    const controller = new AbortController();
    const abort = () => controller.abort(new Error(HOST_CANCELLED));
    if (from.aborted) abort();
    else from.addEventListener("abort", abort, { once: true });
    signal = controller.signal;
    hostSignals.set(from, signal);
  }
  return signal;
}

/** Which client capability each relayed request needs (the SDK checks each answer against its method's result). */
const RELAYS = {
  "sampling/createMessage": { capability: "sampling" },
  "elicitation/create": { capability: "elicitation" },
  "roots/list": { capability: "roots" },
} as const;

export interface BridgeOptions {
  /** Resource URIs the host subscribed to (resources/updated for others is dropped); the resources handlers keep it. */
  subscriptions: ReadonlySet<string>;
  /** Reads an upstream's catalog again (it said a list changed) and says which parts of ours changed. */
  refresh: (upstream: string) => Promise<CatalogChange>;
}

const NO_CHANGE: CatalogChange = { tools: false, resources: false, prompts: false };

/**
 * Who the bridge talks to. A 2025-era session's SDK server (its host's capabilities, server-to-client requests, and
 * notifications without a request on the GET stream); or, for the 2026 era, `modernHost`: no standing connection,
 * so everything travels on the stream of the request in progress or nowhere, and an upstream's request for input
 * is parked for the host's next round (src/modern/parked-calls.ts).
 */
export interface BridgeHost {
  capabilities(): ClientCapabilities;
  request(message: { method: keyof typeof RELAYS; params?: Record<string, unknown> }): Promise<Result>;
  notification(notification: ServerNotification): Promise<void>;
  /** True for the 2026 era: logs go only to a request that asked for them with its `logLevel`. */
  perRequestLogs: boolean;
  /** 2026 era: parks an upstream's request made during the host request `extra` runs (undefined: not one of those). */
  park?: (extra: HostExtra, message: { method: string; params?: Record<string, unknown> }) => Promise<Result> | undefined;
}

const serverHost = (server: Server): BridgeHost => ({
  capabilities: () => server.getClientCapabilities() ?? {},
  request: (message) => server.request(message as never) as Promise<Result>,
  notification: (notification) => server.notification(notification),
  perRequestLogs: false,
});

/**
 * The 2026 era's host. Upstreams are told it can answer elicitation, sampling and roots: their requests are parked
 * and reach the host as `input_required` results (whether this host request declared the capability is checked
 * then). A notification outside a request has nowhere to go (list changes reach 2026 clients through
 * subscriptions/listen).
 */
export function modernHost(park?: BridgeHost["park"]): BridgeHost {
  return {
    capabilities: () => ({ elicitation: {}, sampling: {}, roots: {} }),
    request: async (message) => {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `A 2026-07-28 client cannot be sent ${message.method} outside a request.`);
    },
    notification: async () => {},
    perRequestLogs: true,
    ...(park ? { park } : {}),
  };
}

/** Trace context keys of a host request's `_meta` (W3C, as MCP names them), passed on to the upstream call. */
const TRACE_KEYS = [TRACEPARENT_META_KEY, TRACESTATE_META_KEY, BAGGAGE_META_KEY] as const;

/**
 * What of the host request's `_meta` an upstream call carries: its trace context, and a 2026 host's `logLevel`
 * (which a 2026 upstream reads per request; a 2025 one ignores it). The progress token is not among them: the
 * upstream gets one of the proxy's, whose progress goes back under the host's own.
 */
export function forwardedMeta(extra: HostExtra): Record<string, unknown> | undefined {
  const meta = extra.mcpReq._meta as Record<string, unknown> | undefined;
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  let out: Record<string, unknown> | undefined;
  for (const key of TRACE_KEYS) if (typeof meta?.[key] === "string") (out ??= {})[key] = meta[key];
  const level = envelope?.[LOG_LEVEL_META_KEY];
  if (typeof level === "string") (out ??= {})[LOG_LEVEL_META_KEY] = level;
  return out;
}

/** Severity order of log levels (RFC 5424, as MCP uses it). */
const LEVELS: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** A 2026-era request hears an upstream's log message only if it carried `logLevel` and the message is at least that severe. */
function wantsLog(extra: HostExtra | undefined, level: unknown): boolean {
  const asked = extra?.mcpReq.envelope?.[LOG_LEVEL_META_KEY as keyof NonNullable<HostExtra["mcpReq"]["envelope"]>] as LoggingLevel | undefined;
  if (asked === undefined || !LEVELS.includes(asked)) return false;
  const at = LEVELS.indexOf(level as LoggingLevel);
  return at >= LEVELS.indexOf(asked);
}

/** A host request in progress with one upstream: its context, and the origin its upstream requests carry. */
interface ActiveCall {
  origin: string;
  extra: HostExtra;
}

export class HostBridge implements UpstreamHooks {
  readonly #host: BridgeHost;
  readonly #mode: ConfigMode;
  readonly #subscriptions: ReadonlySet<string>;
  readonly #refreshUpstream: (upstream: string) => Promise<CatalogChange>;
  /** Host requests in progress per upstream, newest last: upstream messages during a call travel on its stream. */
  readonly #active = new Map<string, ActiveCall[]>();
  /** The last origin given out (origins are this bridge's own, so a counter names them). */
  #origins = 0;

  /** Without options (a bridge only relaying, as in tests): no subscriptions, and list changes are not read again. */
  constructor(host: Server | BridgeHost, mode: ConfigMode, options: BridgeOptions = { subscriptions: new Set(), refresh: async () => NO_CHANGE }) {
    this.#host = host instanceof Server ? serverHost(host) : host;
    this.#mode = mode;
    this.#subscriptions = options.subscriptions;
    this.#refreshUpstream = options.refresh;
  }

  capabilities = (): ClientCapabilities => this.#host.capabilities();

  /**
   * Runs `work` as part of a host request to `upstream`, so what the upstream sends meanwhile goes on that request's
   * stream. `work` gets the call's origin, which its upstream requests carry (RequestOptions.origin): a request the
   * upstream sends while answering one of them is relayed to this call.
   */
  async during<T>(upstream: string, extra: HostExtra, work: (origin: string) => Promise<T>): Promise<T> {
    const stack = this.#active.get(upstream) ?? [];
    const call: ActiveCall = { origin: String(++this.#origins), extra };
    stack.push(call);
    this.#active.set(upstream, stack);
    try {
      return await work(call.origin);
    } finally {
      stack.splice(stack.indexOf(call), 1);
      if (stack.length === 0) this.#active.delete(upstream);
    }
  }

  /** The newest host request in progress with `upstream`: where its notifications go. */
  #newest(upstream: string): HostExtra | undefined {
    return this.#active.get(upstream)?.at(-1)?.extra;
  }

  relay = async (upstream: string, request: Request, origin?: string): Promise<Result> => {
    const relay = RELAYS[request.method as keyof typeof RELAYS];
    if (!relay) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `The proxy does not relay ${request.method}.`);
    if (!this.capabilities()[relay.capability]) {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `The host did not declare the ${relay.capability} capability.`);
    }
    const extra = this.#callOf(upstream, request.method, origin);
    const message = markedAsFrom(upstream, { method: request.method as keyof typeof RELAYS, ...(request.params ? { params: request.params } : {}) });
    const parked = extra && this.#host.park?.(extra, message);
    if (parked) return parked;
    return extra ? extra.mcpReq.send(message) : this.#host.request(message);
  };

  /**
   * The host request an upstream's request is relayed on, never a guess. With its origin known (it came on a call's
   * answer stream, or in its input_required), that call, or a refusal when it is over. Otherwise (the upstream's
   * standalone GET stream, the HTTP+SSE transport's one stream): the only call to that upstream in progress; with
   * none, no request (a 2025 host's GET stream; a 2026 host has none); with several, a refusal, except for
   * roots/list, whose answer is the same on any stream and so goes as with none.
   */
  #callOf(upstream: string, method: string, origin: string | undefined): HostExtra | undefined {
    const calls = this.#active.get(upstream) ?? [];
    if (origin !== undefined) {
      const call = calls.find((c) => c.origin === origin);
      if (call) return call.extra;
      throw new RpcError("unrelated_request", `The proxy did not relay ${method}: the request it belongs to is over.`, undefined, upstream);
    }
    if (calls.length === 1) return calls[0]!.extra;
    if (calls.length === 0 || method === "roots/list") return undefined;
    throw new RpcError(
      "unrelated_request",
      `The proxy did not relay ${method}: ${calls.length} requests to "${upstream}" are in progress and it came on none of their streams, ` +
        "so which one it belongs to is unknown. Send it on the stream of the request it is about.",
      undefined,
      upstream,
    );
  }

  notify = (upstream: string, notification: Notification): void => {
    switch (notification.method) {
      case "notifications/message": {
        if (this.#host.perRequestLogs && !wantsLog(this.#newest(upstream), (notification.params as { level?: unknown } | undefined)?.level)) return;
        // Config-file mode names the server in `logger`; single-MCP mode passes the upstream's own logger on.
        const params = (notification.params ?? {}) as { logger?: string };
        const logger = this.#mode === "single" ? params.logger : params.logger ? `${upstream}/${params.logger}` : upstream;
        const forwarded = { ...notification.params, ...(logger === undefined ? {} : { logger }) };
        void this.#send(upstream, { method: "notifications/message", params: forwarded } as ServerNotification);
        return;
      }
      case "notifications/resources/updated": {
        const uri = (notification.params as { uri?: string } | undefined)?.uri;
        if (uri && this.#subscriptions.has(uri)) void this.#send(upstream, notification as ServerNotification);
        return;
      }
      case "notifications/tools/list_changed":
      case "notifications/resources/list_changed":
      case "notifications/prompts/list_changed":
        void this.#refresh(upstream);
        return;
      default:
        return;
    }
  };

  /** An upstream's list changed: read its catalog again and tell the host what changed in ours. */
  async #refresh(upstream: string): Promise<void> {
    const change = await this.#refreshUpstream(upstream).catch(() => undefined);
    // The call to that upstream still in progress, if any, carries it (the one that was active may be over by now).
    if (change) await this.announce(change, this.#newest(upstream));
  }

  /**
   * Our own list_changed notifications for the parts of the catalog that changed, each sent once: on the stream of
   * the host request `extra` belongs to (load_mcp's, or a call during which an upstream said its list changed),
   * otherwise on the host's GET stream.
   */
  async announce(change: CatalogChange, extra?: HostExtra): Promise<void> {
    const methods = [
      change.tools && "notifications/tools/list_changed",
      change.resources && "notifications/resources/list_changed",
      change.prompts && "notifications/prompts/list_changed",
    ].filter((m): m is string => typeof m === "string");
    for (const method of methods) await this.#deliver({ method } as ServerNotification, extra);
  }

  async #send(upstream: string, notification: ServerNotification): Promise<void> {
    await this.#deliver(notification, this.#newest(upstream));
  }

  /**
   * One notification, sent once. With a host request in progress it goes on that request's own response stream
   * (the transport writes a notification with a related request id there and nowhere else, so the host never gets
   * it twice, and a host without a GET stream still gets it). Without one, or when that request can no longer
   * carry it (cancelled by the host, or answered meanwhile), it goes without a related request: on the host's GET
   * stream, and nowhere if the host holds none.
   */
  async #deliver(notification: ServerNotification, extra?: HostExtra): Promise<void> {
    if (extra && !extra.mcpReq.signal.aborted) {
      try {
        await extra.mcpReq.notify(notification);
        return;
      } catch {
        // The request's stream is gone: fall through to the GET stream.
      }
    }
    await this.#host.notification(notification).catch(() => {});
  }
}
