// One SDK connection of an upstream client: the SDK Client, its transport (streamable HTTP, or the older HTTP+SSE),
// and the fetch chain under it, built with every message of the upstream's cleaned as it arrives, the host's relayed
// capabilities declared, and server-to-client requests relayed to the call they belong to. An UpstreamClient speaks
// on one at a time (era-negotiation.ts replaces one whose cached era proved stale).
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type AuthProvider,
  type ClientCapabilities,
  type Implementation,
  type Notification,
  type Request as McpRequest,
  type Result,
} from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../config/validate.ts";
import { classify, type FetchLike } from "./exchange.ts";
import { staleStatus, type PriorVerdict } from "./era-verdict.ts";
import { FetchChain } from "./fetch-chain.ts";
import type { FetchGate, ResponseTooLarge } from "./fetch-gate.ts";
import { cleanInbound, type Withheld } from "./withheld.ts";

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

/** What a link is built from, besides its upstream's entry and headers (part of the client's ClientDeps). */
export interface LinkDeps {
  /** The fetch every upstream request goes through (tests inject a recording one). */
  fetch: FetchLike;
  clientInfo: Implementation;
  hooks?: UpstreamHooks;
  /** Connection slots and the response size limit of the session. */
  gate?: FetchGate;
  /**
   * An OAuth upstream's bearer tokens (docs/oauth.md 3.3): asked before every request, told of a 401 (then the
   * request is sent once more). Each token it gives is withheld from whatever the upstream says, like `withheld`.
   */
  auth?: AuthProvider;
}

/** One SDK connection: the client, its transport, and the fetch chain under it. An UpstreamClient holds one at a time. */
export interface Link {
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

/** What a link tells, and asks of, the client it belongs to. */
export interface LinkOwner {
  /** The link the client speaks on now (undefined before the first is up). */
  current(): Link | undefined;
  /** An answer on `link` (not retired) outgrew the response size limit. */
  overflowed(link: Link, error: ResponseTooLarge): void;
  /** Whether the standalone GET stream is wanted (fetch-chain.ts holds it back until it is). */
  streamWanted(): boolean;
  closed(): boolean;
  /** The SDK closed the link in use. */
  lost(): void;
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

/** The auth provider, with every token it hands out withheld from what the upstream says. */
function withholdingTokens(auth: AuthProvider, withheld: Withheld): AuthProvider {
  return {
    token: async () => {
      const token = await auth.token();
      if (token !== undefined) withheld.learn(token);
      return token;
    },
    ...(auth.onUnauthorized ? { onUnauthorized: (ctx) => auth.onUnauthorized!(ctx) } : {}),
  };
}

/** The entry's transport over the chain; every message it reads cleaned before anything else sees it. */
function transportOf(spec: UpstreamSpec, headers: Record<string, string>, chain: FetchChain, deps: LinkDeps, withheld: Withheld): Link["transport"] {
  const requestInit = { headers };
  const transport =
    spec.transport === "sse"
      ? // The older HTTP+SSE transport: its one GET stream carries every answer, so it stays open while connected.
        new SSEClientTransport(new URL(spec.url), { fetch: chain.fetch, requestInit })
      : new StreamableHTTPClientTransport(new URL(spec.url), {
          fetch: chain.streamableFetch,
          requestInit,
          ...(deps.auth ? { authProvider: withholdingTokens(deps.auth, withheld) } : {}),
          // One reconnect attempt for a dropped GET stream; call-level retries are the registry's business.
          reconnectionOptions: { maxRetries: 1, initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2 },
        });
  // Before anything reads a message of the upstream's (the era probe, the SDK, the chain's watch, the catalog).
  cleanInbound(transport, (message) => withheld.message(message));
  return transport;
}

/** The SDK client, declaring the host's relayed capabilities and relaying the requests that need them. */
function sdkClientOf(spec: UpstreamSpec, deps: LinkDeps, chain: FetchChain): { client: Client; relays: Set<string> } {
  const hooks = deps.hooks;
  const capabilities = relayedCapabilities(hooks?.capabilities() ?? {});
  // `auto`: `server/discover` first, `initialize` when the upstream shows no 2026 evidence (a 401/403, a 5xx or a
  // timeout fails the connect instead). The default for `input_required` stays: the SDK fulfils each embedded
  // request through the relay handlers below and retries the call itself. Only the normalized streamable-HTTP
  // spelling negotiates (config/validate.ts turns "http" into it).
  const client = new Client(deps.clientInfo, {
    capabilities,
    versionNegotiation: { mode: spec.transport === "streamable-http" ? "auto" : "legacy" },
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
  return { client, relays };
}

/** A new SDK client and transport over a new fetch chain, nothing sent yet. */
export function buildLink(
  spec: UpstreamSpec,
  headers: Record<string, string>,
  deps: LinkDeps,
  withheld: Withheld,
  owner: LinkOwner,
  fromModernVerdict: boolean,
): Link {
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
      if (!link.retired) owner.overflowed(link, error);
    },
    streamWanted: () => owner.streamWanted(),
    closed: () => owner.closed() || link.retired,
  });
  const transport = transportOf(spec, headers, chain, deps, withheld);
  const { client, relays } = sdkClientOf(spec, deps, chain);
  link = { client, transport, chain, unconfirmed: fromModernVerdict, rejected: false, retired: false, relays };
  // Only the link in use closes this client: one being brought up is closed by the SDK when its handshake fails,
  // and a retired one by the renegotiation that replaced it.
  client.onclose = () => {
    if (owner.current() === link && !link.retired) owner.lost();
  };
  return link;
}

/**
 * Connects the link (probe, `initialize`, or a verdict adopted) under `options` (the request timeout, the signal);
 * on failure it is retired and closed.
 */
export async function bringUp(link: Link, options: { timeout: number; signal?: AbortSignal }, prior: PriorVerdict | undefined, signal?: AbortSignal): Promise<void> {
  // Closing the transport as well: while the SDK probes, the transport is not yet the client's to close.
  const abort = () => {
    void link.client.close().catch(() => {});
    void link.transport.close().catch(() => {});
  };
  signal?.addEventListener("abort", abort, { once: true });
  try {
    if (signal?.aborted) throw signal.reason;
    await link.client.connect(link.transport, { ...options, ...(prior ? { prior } : {}) });
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
