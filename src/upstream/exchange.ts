// Pure: what one outgoing HTTP exchange of an upstream client is, and the deadline it runs under. Every exchange
// can be aborted and none can wait forever: a request's answer is bounded by the SDK's own timeout (its cancel
// aborts the fetch); everything else (notifications, the DELETE that ends a session, a GET stream's response
// headers) gets a deadline of its own here.

/** The fetch an upstream client makes its exchanges with (the platform's, or one a test records or a gate wraps). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The kinds of exchange a streamable-HTTP (or HTTP+SSE) client makes. */
export type Exchange =
  /** A JSON-RPC request: its answer is bounded by the SDK's timeout, which cancels it (and so aborts its fetch). */
  | { kind: "request"; id: string | number }
  /** `notifications/cancelled` for a request: the request's own fetch is aborted at once. */
  | { kind: "cancel"; cancels: string | number }
  /** Any other POST (a notification, something unreadable): the whole exchange has a deadline. */
  | { kind: "notification" }
  /** The client's answer (result or error) to a request of the upstream's: a deadline, as a notification has. */
  | { kind: "answer"; id: string | number }
  /** The DELETE that ends the upstream session: a deadline of its own, outliving the client's close. */
  | { kind: "end" }
  /** A GET (standalone stream, a resumed answer stream): only its response headers have a deadline. */
  | { kind: "stream" };

const isId = (v: unknown): v is string | number => typeof v === "string" || typeof v === "number";

/** What an outgoing fetch is, read with one parse of its body. */
export function classify(init: RequestInit | undefined): Exchange {
  const method = (init?.method ?? "GET").toUpperCase();
  if (method === "GET") return { kind: "stream" };
  if (method === "DELETE") return { kind: "end" };
  if (typeof init?.body !== "string") return { kind: "notification" };
  try {
    const message = JSON.parse(init.body) as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof message.method !== "string") return isId(message.id) ? { kind: "answer", id: message.id } : { kind: "notification" };
    if (isId(message.id)) return { kind: "request", id: message.id };
    const cancelled = message.params?.requestId;
    if (message.method === "notifications/cancelled" && isId(cancelled)) return { kind: "cancel", cancels: cancelled };
  } catch {
    // Not JSON: still an exchange with a deadline.
  }
  return { kind: "notification" };
}

/** An exchange that outlived its deadline; the upstream client reports it as a timeout. */
export class ExchangeTimeout extends Error {
  readonly ms: number;
  constructor(ms: number, what: string) {
    super(`no answer to ${what} within ${ms} ms`);
    this.name = "ExchangeTimeout";
    this.ms = ms;
  }
}

/** Used for deadlines when an entry has `"timeout": 0` (requests then wait as long as they take). */
export const DEFAULT_EXCHANGE_MS = 30_000;

/** How long an exchange that is not a request may take (the entry's timeout, or the default when it has none). */
export const exchangeMs = (timeout: number): number => (timeout > 0 ? timeout : DEFAULT_EXCHANGE_MS);

/** A deadline that aborts its signal with ExchangeTimeout unless cleared first. */
export interface Deadline {
  signal: AbortSignal;
  clear: () => void;
}

export function deadline(ms: number, what: string): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ExchangeTimeout(ms, what)), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** One signal from several (undefined ones left out). */
export function anySignal(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
