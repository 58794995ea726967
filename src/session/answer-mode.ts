// How a 2025 session answers one host request: as plain JSON when the first thing its server sends for the request is
// the answer itself, else as the SSE stream the SDK opened for it. The mode is decided once the first message is known:
// progress, a log line or a request to the host (an elicitation, sampling) sent before the answer keeps the stream,
// which then carries every message as before; a call that has sent nothing after FIRST_MESSAGE_WAIT_MS keeps it too,
// so a long call's headers (and the SDK's keep-alive comments) reach the host as they always did. A JSON answer is
// one complete body: nothing streams through the session object, the router and the host's reader for it.
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/server";

/** How long a request's answer mode may wait for its first message before it stays a stream. */
export const FIRST_MESSAGE_WAIT_MS = 1_000;

/** The SSE answer's headers that a complete JSON answer does not carry (the SDK's own JSON mode sets neither). */
const STREAM_ONLY_HEADERS = ["cache-control", "connection", "x-accel-buffering"];

type Decide = (message: JSONRPCMessage | undefined) => void;

/** A request waiting for its first message: how to decide its mode, and since when it waits (ms). */
interface Waiting {
  decide: Decide;
  since: number;
}

/** The one request of a POST body (an object with a method and an id), if that is what it is. */
export function singleRequestId(body: unknown): RequestId | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const { id, method } = body as { id?: unknown; method?: unknown };
  if (typeof method !== "string") return undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

const isAnswerTo = (id: RequestId, message: JSONRPCMessage): boolean =>
  !("method" in message) && "id" in message && message.id === id && ("result" in message || "error" in message);

export class AnswerModes {
  readonly #waiting = new Map<RequestId, Waiting>();
  /**
   * One timer for all the requests waiting, armed only while some wait: a timer per request would cost every call
   * (the Node-compatible timers the Worker runs with are not free), while hardly any call waits a whole second.
   */
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Starts waiting for request `id`'s first message, before the request is handed to the server. Undefined when a
   * request of that id is already waiting (the host reused an id): that one keeps the stream.
   */
  watch(id: RequestId): Promise<JSONRPCMessage | undefined> | undefined {
    if (this.#waiting.has(id)) return undefined;
    return new Promise((resolve) => {
      const waiting: Waiting = {
        since: Date.now(),
        decide: (message) => {
          if (this.#waiting.get(id) === waiting) this.#waiting.delete(id);
          resolve(message);
        },
      };
      this.#waiting.set(id, waiting);
      this.#arm(FIRST_MESSAGE_WAIT_MS);
    });
  }

  /** Requests that have waited FIRST_MESSAGE_WAIT_MS keep their streams; the timer comes back for the next one due. */
  #expire(): void {
    this.#timer = undefined;
    const now = Date.now();
    let next: number | undefined;
    for (const { decide, since } of [...this.#waiting.values()]) {
      const due = since + FIRST_MESSAGE_WAIT_MS - now;
      if (due <= 0) decide(undefined);
      else next = Math.min(next ?? due, due);
    }
    if (next !== undefined) this.#arm(next);
  }

  #arm(ms: number): void {
    this.#timer ??= setTimeout(() => this.#expire(), ms);
  }

  /** The server sent `message` for request `id` (as the SDK relates it), already written to the request's stream. */
  sent(id: RequestId | undefined, message: JSONRPCMessage): void {
    if (id !== undefined) this.#waiting.get(id)?.decide(message);
  }

  /** The request's answer was made without a stream (a refusal, an accepted notification): nothing to wait for. */
  forget(id: RequestId): void {
    this.#waiting.get(id)?.decide(undefined);
  }

  /**
   * The answer to request `id`: JSON when `first` is its answer (the SDK has then written it to `stream` and closed
   * it, so nothing is lost by dropping that stream), else `stream` untouched, to be read from its start.
   */
  async answer(id: RequestId, first: Promise<JSONRPCMessage | undefined>, stream: Response): Promise<Response> {
    const message = await first;
    if (!message || !isAnswerTo(id, message)) return stream;
    const headers = new Headers(stream.headers);
    for (const name of STREAM_ONLY_HEADERS) headers.delete(name);
    headers.set("content-type", "application/json");
    await stream.body?.cancel();
    return new Response(JSON.stringify(message), { status: stream.status, headers });
  }
}
