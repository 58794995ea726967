// A call's consent in the meta and direct views of both eras: a tool the caller's policies mark `approve` is called
// only once the user allows that one call. The question is asked inside the call, through the era's input port: on
// the host request's own stream (2025), or as the next round of the call, which waits in its park meanwhile (2026).
// Nothing goes upstream before an explicit yes; a no, a cancel or no answer in time ends the call, and a host that
// cannot be asked is told what waits and how a team lets it run. The user's answer is an `approval` entry in the
// audit trail. (A program's calls ask through its run's consent: src/views/code/consent.ts.)
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { AuditOutcome } from "./audit-entry.ts";
import { APPROVAL_WAIT_MS, allows, cannotAsk, consentQuestion, notAllowed } from "./consent-question.ts";
import type { AskNow } from "./input-port.ts";
import { toolError } from "./tool-errors.ts";

/** One call waiting for consent. */
export interface ConsentAsk {
  /** How the user is asked during this call; undefined where this host cannot be asked. */
  ask: AskNow | undefined;
  /** The tool as the question and the answers name it (`server/tool`). */
  tool: string;
  /** Its server, for the error's `_meta`. */
  upstream: string;
  input: Record<string, unknown>;
  /** Where the rule that asks is written in the team's config (`policies[0].approve`, `approve`…). */
  rule: string;
  /** The call's own cancellation. */
  signal: AbortSignal;
  /** Records the user's answer (`ok`, `approval_refused`, `timeout`, `cancelled`), asked at `askedAt`. */
  answered(outcome: AuditOutcome, askedAt: number): Promise<void>;
}

/**
 * What became of the question: allowed (the call goes on, from the user's answer); not allowed and asked (the user's
 * answer is recorded, and the call is answered with `result`); not allowed and unasked (nobody could be asked:
 * `result` says so, and is the call's own outcome).
 */
export type ConsentOutcome = { allowed: true; asked: true } | { allowed: false; asked: boolean; result: CallToolResult };

/** Asks the user about one call and waits, at most APPROVAL_WAIT_MS, for their answer. */
export async function askConsent(call: ConsentAsk): Promise<ConsentOutcome> {
  if (!call.ask) return { allowed: false, asked: false, result: toolError("approval_required", cannotAsk(call.tool, call.rule), call.upstream) };
  const askedAt = Date.now();
  let outcome: AuditOutcome;
  try {
    const answer = await call.ask(consentQuestion(call.tool, JSON.stringify(call.input), "The agent"), { signal: call.signal, timeoutMs: APPROVAL_WAIT_MS });
    outcome = allows(answer) ? "ok" : "approval_refused";
  } catch {
    // No answer: the host gave up on the request, or the user did not answer in time.
    outcome = call.signal.aborted ? "cancelled" : "timeout";
  }
  await call.answered(outcome, askedAt);
  if (outcome === "ok") return { allowed: true, asked: true };
  const words =
    outcome === "approval_refused"
      ? notAllowed(call.tool)
      : `The user did not answer whether to allow ${call.tool} (${outcome === "cancelled" ? "the request was cancelled" : `no answer within ${APPROVAL_WAIT_MS / 60_000} minutes`}); it was not called.`;
  return { allowed: false, asked: true, result: toolError("approval_refused", words, call.upstream) };
}
