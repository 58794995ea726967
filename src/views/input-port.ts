// The port through which a view asks the host for input while it serves a call, injected by the era adapter: a 2025
// session asks on the host request's own stream (an elicitation, an upstream's requests relayed there:
// src/session/elicitation-input.ts); the 2026 era has no such stream, so it answers `input_required` and goes on when
// the host retries with its answers (src/modern/host-rounds.ts). Views call the port and never ask which era it is.
import type { CallToolResult, ClientCapabilities, ElicitRequestFormParams, ElicitResult, InputRequiredResult } from "@modelcontextprotocol/server";
import type { HostExtra } from "../relay/bridge.ts";
import type { RequestOptions } from "../upstream/client.ts";
import type { ToolAnswer } from "./tool-view.ts";

/** Which call a round belongs to: the tool as the host named it, its arguments, its server (when the name has one). */
export interface RoundKey {
  tool: string;
  input: Record<string, unknown>;
  upstream: string | undefined;
}

/** What one upstream call is made with in a round: what cancels it, and (2026) a 2026 upstream's rounds returned and the next one's answers. */
export type UpstreamRound = Pick<RequestOptions, "inputRequired" | "retry"> & { signal?: AbortSignal };

/** The state a view's own round carries to the host and back, signed by the era (a code-mode program paused for consent). */
export interface RoundState {
  /** The tool the round belongs to, and a digest of what it was called with: a retry must repeat both. */
  t: string;
  d: string;
  /** A program paused for the user's consent (its id): the retry resumes it with their answer. */
  p?: string;
  /** The rounds the call has asked so far, this one included. */
  r?: number;
}

/** The round a retry answers: the state it was handed (signed by the era, so it is the proxy's own) and the host's answers. */
export interface AnsweredRound {
  /** Empty when the state is not a view's round at all (whose check then refuses it). */
  state: Partial<RoundState>;
  answers: Record<string, unknown>;
}

/** Asks the user one form question on the request's stream and waits at most `timeoutMs` for the answer. */
export type AskNow = (question: ElicitRequestFormParams, options: { signal: AbortSignal; timeoutMs: number }) => Promise<ElicitResult>;

/** Asks the host in an `input_required` round, the view's state signed into it. */
export interface AskInRound {
  /** Whether this request declared form elicitation (a host that did not cannot answer a question). */
  formDeclared: boolean;
  /** The round asking `questions` (form elicitations, by the key their answers come back under). */
  ask(questions: Record<string, ElicitRequestFormParams>, state: RoundState): Promise<InputRequiredResult>;
}

export interface InputPort {
  /**
   * Runs an upstream tool call that may need the host's input on the way: `call` makes it (once, or again for each
   * round of a 2026 upstream's own). The answer is its result, or the round that asks the host.
   */
  upstreamCall(host: HostExtra, key: RoundKey, call: (round: UpstreamRound) => Promise<CallToolResult>): Promise<ToolAnswer>;
  /** Asking the user now, on the request's stream; undefined where this host cannot be asked so. */
  askNow(host: HostExtra): AskNow | undefined;
  /**
   * Asking the user in the middle of a call made through `upstreamCall` (a call's consent): on the request's stream
   * (2025), or as a question of the call's next round, the call waiting meanwhile (2026). Undefined where this host
   * request cannot answer a form question.
   */
  askDuring(host: HostExtra): AskNow | undefined;
  /** The round this request answers, if it is a retry of one; undefined for a first request. */
  answered(host: HostExtra): AnsweredRound | undefined;
  /** Asking the host in an `input_required` round; undefined where the era has no rounds. */
  askInRound(host: HostExtra): AskInRound | undefined;
}

/** Whether a host can be asked a form question (a bare `elicitation: {}` means form, as before modes existed). */
export function asksForms(capabilities: ClientCapabilities): boolean {
  const e = capabilities.elicitation as { form?: unknown; url?: unknown } | undefined;
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}
