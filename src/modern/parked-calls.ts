// Upstream tool calls of 2026-era hosts that wait for the host's input. A 2026 client cannot be sent a request: when
// an upstream asks for input in the middle of a call (a 2025 upstream's elicitation/create or sampling/createMessage,
// or a 2026 upstream's input_required, which the upstream client turns into the same requests), the request is
// parked here, the host's tools/call is answered `input_required` naming it, and the host's retry (with the input
// and the request state) resumes the same call, which this object still holds. Pairings and limits:
// docs/protocol-2026.md.
import type { CallToolResult, ClientCapabilities, Result } from "@modelcontextprotocol/server";

/** One request of the upstream's, waiting for the host's answer. */
interface Park {
  method: string;
  params: Record<string, unknown> | undefined;
  resolve: (result: Result) => void;
  reject: (error: Error) => void;
  /** The proxy's own question asked before the call goes upstream (a call's consent): nothing was sent yet. */
  beforeCall: boolean;
}

/** What a host's request gets of a call: its result, or the input it waits for. */
export type CallTurn =
  | { kind: "result"; result: CallToolResult }
  | {
      kind: "input";
      callId: string;
      requests: Record<string, { method: string; params?: Record<string, unknown> }>;
      /** Every request shown is the proxy's own, asked before the call went upstream (its loss loses no work). */
      beforeCall: boolean;
    };

/** How long a parked call waits for the host's retry before it is cancelled (the request state lives as long). */
export const PARK_TTL_SECONDS = 600;

/** At most this many used round nonces are remembered (the oldest go first). */
const MAX_SPENT = 10_000;

/** The capability each kind of input request needs of the host (as the SDK checks them). */
const NEEDS: Record<string, keyof ClientCapabilities> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

export const capabilityFor = (method: string): keyof ClientCapabilities | undefined => NEEDS[method];

class PendingCall {
  readonly id = crypto.randomUUID();
  readonly cancel = new AbortController();
  /** Requests the host has not been shown yet, and those shown and not answered, by key. */
  readonly open = new Map<string, Park>();
  readonly shown = new Set<string>();
  #seq = 0;
  result: Promise<CallToolResult> | undefined;
  settled: { result: CallToolResult } | { error: unknown } | undefined;
  /** Wakes the host request waiting on this call (a new park, or the result). */
  wake: (() => void) | undefined;
  expiry: ReturnType<typeof setTimeout> | undefined;

  nextKey(): string {
    return `in${++this.#seq}`;
  }
}

export class ParkedCalls {
  readonly #calls = new Map<string, PendingCall>();
  /** The call each host request runs (the bridge finds it by the request an upstream is serving). */
  readonly #byRequest = new WeakMap<object, PendingCall>();

  /** Runs an upstream call on behalf of `request` (the host request's context), cancelled by the returned signal. */
  start(request: object, work: (signal: AbortSignal) => Promise<CallToolResult>): string {
    const call = new PendingCall();
    this.#calls.set(call.id, call);
    this.#byRequest.set(request, call);
    call.result = work(call.cancel.signal);
    call.result.then(
      (result) => this.#settle(call, { result }),
      (error: unknown) => this.#settle(call, { error }),
    );
    return call.id;
  }

  /**
   * An upstream's request during a call: parked until the host answers it. Undefined when `request` runs no call
   * (then the bridge answers as it always has).
   */
  park(request: object, message: { method: string; params?: Record<string, unknown> }, { beforeCall = false } = {}): Promise<Result> | undefined {
    const call = this.#byRequest.get(request);
    if (!call || call.settled) return undefined;
    return new Promise<Result>((resolve, reject) => {
      call.open.set(call.nextKey(), { method: message.method, params: message.params, resolve, reject, beforeCall });
      // Requests the upstream sends together (an input_required with several) are shown together.
      setTimeout(() => call.wake?.(), 0);
    });
  }

  /**
   * The host's next turn of a call: the result when it comes, or the parked requests not shown yet. While it
   * waits, the host request's own cancellation cancels the call.
   */
  async next(callId: string, hostSignal: AbortSignal): Promise<CallTurn | undefined> {
    const call = this.#calls.get(callId);
    // Gone, or another request already waits on it (one round at a time).
    if (!call || call.wake) return undefined;
    const cancel = () => this.#cancel(call, "the host cancelled the request");
    hostSignal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        if (call.settled) {
          this.#forget(call);
          if ("error" in call.settled) throw call.settled.error;
          return { kind: "result", result: call.settled.result };
        }
        const fresh = [...call.open].filter(([key]) => !call.shown.has(key));
        if (fresh.length > 0) {
          for (const [key] of fresh) call.shown.add(key);
          this.#arm(call);
          const shown = [...call.open].filter(([key]) => call.shown.has(key));
          const requests = Object.fromEntries(shown.map(([key, p]) => [key, p.params === undefined ? { method: p.method } : { method: p.method, params: p.params }]));
          return { kind: "input", callId: call.id, requests, beforeCall: shown.every(([, p]) => p.beforeCall) };
        }
        await new Promise<void>((resolve) => (call.wake = resolve));
        call.wake = undefined;
      }
    } finally {
      hostSignal.removeEventListener("abort", cancel);
    }
  }

  /**
   * The host's answers to a call's shown requests (keyed as shown). Answers to keys not open are ignored; false when
   * no such call waits (it ended, timed out, or this object restarted since).
   */
  resume(callId: string, responses: Record<string, unknown>): boolean {
    const call = this.#calls.get(callId);
    if (!call || call.settled) return false;
    for (const [key, answer] of Object.entries(responses)) {
      const park = call.open.get(key);
      if (!park || !call.shown.has(key)) continue;
      call.open.delete(key);
      call.shown.delete(key);
      park.resolve(answer as Result);
    }
    return true;
  }

  /** Cancels a call (the host cannot answer what it asks, or gave up). */
  abandon(callId: string, why: string): void {
    const call = this.#calls.get(callId);
    if (call) this.#cancel(call, why);
  }

  /** Round nonces of passed-through states already used, with when each may be forgotten (its state has expired). */
  readonly #spent = new Map<string, number>();

  /**
   * Marks a passed-through round's nonce used: false when it already was (a replayed state). Kept while its state
   * could still verify; like parks, this lives in the object's memory, so an eviction forgets it.
   */
  spend(nonce: string, now = Date.now()): boolean {
    if (this.#spent.has(nonce)) return false;
    for (const [key, until] of this.#spent) {
      if (until > now && this.#spent.size < MAX_SPENT) break;
      this.#spent.delete(key);
    }
    this.#spent.set(nonce, now + PARK_TTL_SECONDS * 1000);
    return true;
  }

  /** How many calls wait here (tests, and the object's idle check). */
  get size(): number {
    return this.#calls.size;
  }

  #settle(call: PendingCall, outcome: PendingCall["settled"]): void {
    call.settled = outcome;
    for (const park of call.open.values()) park.reject(new Error("the call ended before this input was answered"));
    call.open.clear();
    call.wake?.();
    // Nobody may come for the result (the host gave up between turns): it is kept only as long as a park would be.
    this.#arm(call);
  }

  /** A call nobody comes back to within PARK_TTL_SECONDS is cancelled and forgotten. */
  #arm(call: PendingCall): void {
    if (call.expiry !== undefined) clearTimeout(call.expiry);
    call.expiry = setTimeout(() => {
      this.#cancel(call, "the input it waited for never came");
      this.#forget(call);
    }, PARK_TTL_SECONDS * 1000);
  }

  #cancel(call: PendingCall, why: string): void {
    for (const park of call.open.values()) park.reject(new Error(why));
    call.open.clear();
    call.cancel.abort(new Error(why));
  }

  #forget(call: PendingCall): void {
    if (call.expiry !== undefined) clearTimeout(call.expiry);
    this.#calls.delete(call.id);
  }
}
