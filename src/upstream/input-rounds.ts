// A 2026 upstream's `input_required`, answered on behalf of the call that got it. The SDK's own driver would answer
// such rounds through the client's request handlers, which belong to the client, not to a call: two calls asking
// at once could not be told apart. So the client takes the rounds back (`allowInputRequired`) and runs them here:
// each embedded request is relayed for the call, then the call is made again with the answers and the upstream's
// state, until it returns its result.
import { isInputRequiredResult, type Request, type Result } from "@modelcontextprotocol/client";

/** At most this many rounds per call, as the SDK's driver allows by default. */
export const MAX_INPUT_ROUNDS = 10;
/** The pause before answering a round that carried only state (an upstream shedding load), as the SDK's driver makes. */
const STATE_ONLY_PAUSE_MS = 250;

/** What the call's next round carries: the answers by the upstream's keys, and its state echoed as it came. */
export interface NextRound {
  inputResponses?: Record<string, Result>;
  requestState?: string;
}

export interface InputRounds {
  /** The embedded requests the proxy can relay to this host (sampling, elicitation, roots, as declared). */
  relayable: ReadonlySet<string>;
  /** One embedded request, relayed to the host for the call. */
  ask: (request: Request) => Promise<Result>;
  /** The call made again for its next round. */
  retry: (next: NextRound) => Promise<Result>;
  /** The error a round that cannot go on fails the call with. */
  fail: (detail: string) => Error;
  signal?: AbortSignal | undefined;
}

/** The call's result once every round the upstream asks for is answered; `first` is its first answer. */
export async function answerInputRounds(first: Result, rounds: InputRounds): Promise<Result> {
  let result = first;
  for (let round = 1; isInputRequiredResult(result); round++) {
    if (round > MAX_INPUT_ROUNDS) throw rounds.fail(`it still asked for input after ${MAX_INPUT_ROUNDS} rounds`);
    const asked = Object.entries(result.inputRequests ?? {}) as Array<[string, Request]>;
    const unknown = asked.find(([, request]) => !rounds.relayable.has(request?.method));
    if (unknown) throw rounds.fail(`it asked for input the proxy cannot relay here (${unknown[0]}: ${String(unknown[1]?.method)})`);
    let inputResponses: Record<string, Result> | undefined;
    if (asked.length > 0) {
      inputResponses = Object.fromEntries(await Promise.all(asked.map(async ([key, request]) => [key, await rounds.ask(request)] as const)));
    } else {
      await pause(STATE_ONLY_PAUSE_MS, rounds.signal);
    }
    result = await rounds.retry({
      ...(inputResponses ? { inputResponses } : {}),
      ...(result.requestState === undefined ? {} : { requestState: result.requestState }),
    });
  }
  return result;
}

/** Waits `ms`, or fails at once with the signal's reason when it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}
