// The fetch one upstream client's transport goes through: the session's gate (slots, size limit), a deadline for
// every exchange that is not a request, a request's fetch aborted when it is cancelled, a 429's Retry-After kept,
// answer streams that end without their answer failed at once, the standalone GET stream held back until
// it is wanted, and which host call each request the upstream sends on an answer stream belongs to.
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../config/validate.ts";
import { tapResponse } from "../lib/streams.ts";
import { parseRetryAfter } from "./backoff.ts";
import { anySignal, classify, deadline, exchangeMs, type FetchLike } from "./exchange.ts";
import type { FetchGate, ResponseTooLarge } from "./fetch-gate.ts";
import { ANSWER_STREAM_ENDED, CONNECTION_CLOSED } from "./faults.ts";
import { requestsIn, type RequestId } from "./sse-requests.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";

/** How long after an answer stream ends its answer may still be on its way through the SDK's parser. */
export const ANSWER_GRACE_MS = 100;

/**
 * The header on which the upstream client tells the chain which host call a request is made for (RequestOptions.origin
 * in client.ts). The chain takes it off before the fetch: it never reaches the upstream.
 */
export const ORIGIN_HEADER = "x-dynmcp-origin";

/** At most this many requests of the upstream's wait for their answer with a known origin (the oldest are forgotten). */
const MAX_ORIGINS = 256;

/** What the chain asks of the client it serves. */
export interface ChainHooks {
  /** An answer outgrew the size limit (the client closes). */
  overflowed: (error: ResponseTooLarge) => void;
  /** Whether the standalone GET stream is wanted now. */
  streamWanted: () => boolean;
  /** Whether the client is closed (nothing is failed on its behalf then). */
  closed: () => boolean;
}

export interface ChainDeps {
  /** The fetch every upstream request goes through (tests inject a recording one). */
  fetch: FetchLike;
  /** Connection slots and the response size limit of the session. */
  gate?: FetchGate | undefined;
}

export class FetchChain {
  readonly #hooks: ChainHooks;
  /** The last Retry-After of a 429, in ms. */
  retryAfterMs: number | undefined;
  /**
   * Requests whose answer stream is watched (see #watchAnswerStream) and whose answer has not arrived: an id
   * leaves when its answer comes or its stream is over, so the set holds at most the requests in flight.
   * Undefined until the client is connected.
   */
  #awaiting: Set<string | number> | undefined;
  #deliver: ((message: JSONRPCMessage) => void) | undefined;
  /**
   * Requests the upstream sent on the answer stream of a request made for a host call, by their id, with that
   * call's origin. An id leaves when the client answers it, so the map holds the requests not yet answered.
   */
  readonly #origins = new BoundedCache<RequestId, string>({ max: MAX_ORIGINS });
  /** Every exchange bounded, cancels honoured, 429s noted, answer streams watched: for the HTTP+SSE transport. */
  readonly fetch: FetchLike;
  /** The same, with the standalone GET stream answered 405 while it is not wanted: for streamable HTTP. */
  readonly streamableFetch: FetchLike;

  constructor(spec: UpstreamSpec, deps: ChainDeps, hooks: ChainHooks) {
    this.#hooks = hooks;
    const gated = deps.gate ? deps.gate.wrap(deps.fetch, (error) => hooks.overflowed(error), spec.name) : deps.fetch;
    this.fetch = this.#watched(gated, exchangeMs(spec.timeout));
    this.streamableFetch = (input, init) =>
      isStandaloneStream(init) && !hooks.streamWanted() ? Promise.resolve(NO_STREAM()) : this.fetch(input, init);
  }

  /**
   * The origin of the host call a request of the upstream's belongs to: the call whose request's answer stream it
   * came on. Undefined when it came elsewhere (the standalone GET stream, the HTTP+SSE transport's one stream) or on
   * the answer stream of a request made for no host call.
   */
  originOf(id: RequestId): string | undefined {
    return this.#origins.get(id);
  }

  /**
   * Every exchange can be aborted and none waits forever (see exchange.ts). A request's fetch is aborted when the
   * SDK gives up on it (timeout, the host cancelled): the SDK sends notifications/cancelled upstream but leaves
   * the POST open; seeing that notification go out, the request's fetch is aborted, so its slot is freed at once.
   */
  #watched(gated: FetchLike, limitMs: number): FetchLike {
    const inFlight = new Map<string | number, AbortController>();
    return async (input, sent) => {
      const { init, origin } = takeOrigin(sent);
      const exchange = classify(init);
      if (exchange.kind === "answer") this.#origins.delete(exchange.id);
      if (exchange.kind === "cancel") inFlight.get(exchange.cancels)?.abort(new Error("the request was cancelled"));
      const id = exchange.kind === "request" ? exchange.id : undefined;
      const own = id === undefined ? undefined : new AbortController();
      if (own && id !== undefined) inFlight.set(id, own);
      const limit = exchange.kind === "request" ? undefined : deadline(limitMs, EXCHANGE_NAMES[exchange.kind]);
      // The DELETE is not tied to the client's life: close() aborts everything else at once and lets it finish.
      const signal = anySignal(exchange.kind === "end" ? undefined : (init?.signal ?? undefined), own?.signal, limit?.signal);
      let response: Response;
      try {
        response = await gated(input, { ...init, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (id !== undefined) inFlight.delete(id);
        limit?.clear();
        throw limit?.signal.aborted ? limit.signal.reason : err;
      }
      // A stream's deadline is on its headers; any other exchange's on its whole body.
      if (exchange.kind === "stream") limit?.clear();
      else if (limit) response = tapResponse(response, { end: () => limit.clear() });
      if (id !== undefined) {
        response = tapResponse(response, { end: () => inFlight.get(id) === own && inFlight.delete(id) });
      }
      if (response.status === 429) this.retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      if (origin !== undefined && response.body && isEventStream(response)) response = this.#noteRequests(response, origin);
      if (this.#awaiting && id !== undefined && response.body && isEventStream(response)) {
        return this.#watchAnswerStream(response, id);
      }
      return response;
    };
  }

  /** Notes each request the upstream sends on this answer stream as belonging to the host call `origin`. */
  #noteRequests(response: Response, origin: string): Response {
    const read = requestsIn((id) => {
      this.#origins.set(id, origin);
    });
    return tapResponse(response, {
      chunk: (value) => {
        read(value);
        return undefined;
      },
      end: () => {},
    });
  }

  /**
   * From now on (the client is connected), notes which watched requests got their answer, so one whose stream
   * ends without it is failed at once. `deliver` is the transport's own message handler; the returned one, which
   * wraps it, takes its place.
   */
  watchAnswers(deliver: ((message: JSONRPCMessage) => void) | undefined): (message: JSONRPCMessage) => void {
    const awaiting = new Set<string | number>();
    this.#awaiting = awaiting;
    this.#deliver = deliver;
    return (message) => {
      if ("id" in message && !("method" in message) && (typeof message.id === "string" || typeof message.id === "number")) awaiting.delete(message.id);
      deliver?.(message);
    };
  }

  /**
   * The SDK waits until the timeout when a POST's SSE stream ends (or breaks) before the answer and cannot be
   * resumed. Watch such a stream: when it is over and no answer with the request's id came, fail the request
   * with ConnectionClosed at once (after a short grace for the SDK's parser to hand over the last event). A
   * stream that carried an event id can be resumed (the SDK reconnects with Last-Event-ID): it is left alone.
   */
  #watchAnswerStream(response: Response, id: string | number): Response {
    const decoder = new TextDecoder();
    let resumable = false;
    this.#awaiting?.add(id);
    return tapResponse(response, {
      chunk: (value) => {
        if (!resumable && /(^|\n)id:/.test(decoder.decode(value, { stream: true }))) resumable = true;
        return undefined;
      },
      end: () => {
        // A resumable stream's answer may come on the SDK's reconnection: it is not waited for here.
        if (resumable) return void this.#awaiting?.delete(id);
        setTimeout(() => {
          if (!this.#awaiting?.delete(id) || this.#hooks.closed()) return;
          this.#deliver?.({
            jsonrpc: "2.0",
            id,
            error: { code: CONNECTION_CLOSED, message: "the answer stream ended before the answer", data: ANSWER_STREAM_ENDED },
          });
        }, ANSWER_GRACE_MS);
      },
    });
  }
}

/**
 * The SDK opens a standalone GET (SSE) stream after initialize. An open upstream stream keeps the session
 * object from ever being evicted, so it is opened only while the host holds its own GET stream (the upstream's
 * notifications then have a way to the host; see UpstreamClient.openStream). Otherwise the client is told the
 * server has none (405, as the spec lets servers answer).
 */
function isStandaloneStream(init: RequestInit | undefined): boolean {
  if ((init?.method ?? "GET").toUpperCase() !== "GET") return false;
  // A GET with Last-Event-ID resumes a request's own answer stream: always allowed.
  return !new Headers(init?.headers).has("last-event-id");
}
const isEventStream = (response: Response): boolean => (response.headers.get("content-type") ?? "").includes("text/event-stream");

/** What a deadline's error names each kind of exchange that has one. */
const EXCHANGE_NAMES = { end: "the DELETE ending the session", stream: "a GET stream", notification: "a notification", answer: "an answer to the upstream", cancel: "a notification" } as const;

/** The fetch's own init, without the origin header (and that header's value). */
function takeOrigin(init: RequestInit | undefined): { init: RequestInit | undefined; origin: string | undefined } {
  if (init?.headers === undefined) return { init, origin: undefined };
  const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
  const origin = given.get(ORIGIN_HEADER) ?? undefined;
  if (origin === undefined) return { init, origin };
  const headers = new Headers(given);
  headers.delete(ORIGIN_HEADER);
  return { init: { ...init, headers }, origin };
}

const NO_STREAM = () => new Response(null, { status: 405, headers: { Allow: "POST, DELETE" } });
