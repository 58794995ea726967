// The code view's `execute`: the agent's program run in a sandbox (src/views/code/sandbox.ts), each of its tool calls
// resolved as use_tool's are and made through the one call function (src/views/tool-call.ts), and a call that needs
// the user's consent asked through the era's input port: now, on the request's stream, where the host can be asked so;
// else in an `input_required` round whose answer resumes the paused run; else the run pauses for `approve`.
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from "@modelcontextprotocol/server";
import { log } from "../../lib/log.ts";
import { hostSignal, type HostExtra } from "../../relay/bridge.ts";
import { PATH_SEPARATOR } from "../../catalog/code-names.ts";
import { auditApproval } from "../call-audit.ts";
import { allows, consentQuestion } from "../consent-question.ts";
import { callerDecides, findTool } from "../find-tool.ts";
import type { AskInRound, InputPort } from "../input-port.ts";
import { callTool, recordNotFound, refusedArguments } from "../tool-call.ts";
import { isResult, parseArgs, toolError } from "../tool-errors.ts";
import type { ToolAnswer } from "../tool-view.ts";
import type { ExposedTool } from "../../upstream/registry.ts";
import { namespaceList, type CodeContext, type CodeRuntime, type CodeSessionParts } from "./code-context.ts";
import { RunConsent, markAsked, programHash, resumable, waitingRun, type Pause } from "./consent.ts";
import { CODE_EXECUTE } from "./definitions.ts";
import { failureMessage, programValue, runAnswer } from "./result.ts";
import type { RunReport, ToolCall } from "./run-state.ts";
import { runProgram } from "./sandbox.ts";
import { CodeExecuteInput } from "./schemas.ts";

/**
 * Programs one session may run at once. A Durable Object may have 10 Dynamic Workers with requests in flight
 * (Cloudflare's documented limit); a few per session leaves room for a program still winding down after its deadline.
 */
export const MAX_CONCURRENT_RUNS = 4;
/**
 * Consent rounds one execute asks at most; past them the run answers with its `approve` id instead, so a host whose
 * SDK stops after a number of rounds (the v2 SDK's default is 10) never loses the paused run.
 */
export const MAX_CONSENT_ROUNDS = 8;
/** The key of the consent question in an `input_required` round of execute. */
const CONSENT_INPUT = "consent";

/** execute over one code view: its programs, at most MAX_CONCURRENT_RUNS at once. */
export class Execute {
  readonly #context: CodeContext;
  readonly #runtime: CodeRuntime;
  readonly #parts: CodeSessionParts;
  readonly #rounds: InputPort;
  #running = 0;

  constructor(context: CodeContext, runtime: CodeRuntime, parts: CodeSessionParts, rounds: InputPort) {
    this.#context = context;
    this.#runtime = runtime;
    this.#parts = parts;
    this.#rounds = rounds;
  }

  async answer(raw: unknown, host: HostExtra): Promise<ToolAnswer> {
    const args = parseArgs(CodeExecuteInput, raw, CODE_EXECUTE);
    if (isResult(args)) return args;
    if (this.#running >= MAX_CONCURRENT_RUNS) {
      return toolError("program_failed", `This session already runs ${this.#running} programs, the most it may run at once; wait for one to finish.`, undefined, { cause: "busy" });
    }
    // Counted before the first await: requests interleave there, and each must see the others' runs.
    this.#running++;
    try {
      return await this.#counted(args, host);
    } finally {
      this.#running--;
    }
  }

  /** One execute within the session's cap on runs at once (the caller counts it). */
  async #counted(args: { code: string; approve?: string | undefined }, host: HostExtra): Promise<ToolAnswer> {
    const { paused } = this.#parts;
    const codeHash = await programHash(args.code);
    // The answer to a consent round: its state names the paused run (and wins over an `approve` given beside it),
    // its answer says yes or no.
    const answered = this.#rounds.answered(host);
    const state = answered?.state;
    if (state !== undefined && (state.t !== CODE_EXECUTE || state.d !== codeHash || state.p === undefined)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState belongs to another call: retry execute with the same code.");
    }
    const answer = answered?.answers[CONSENT_INPUT] as { action?: unknown; content?: unknown } | undefined;
    const inRound = this.#rounds.askInRound(host);
    if (state?.p !== undefined && inRound !== undefined && answer === undefined) {
      // A retry without the answer (the user was never asked): ask again, the paused run left as it is.
      const waiting = await waitingRun(paused, state.p, codeHash);
      if (typeof waiting !== "string") return this.#consentRound(inRound, codeHash, { id: state.p, ...waiting.pending }, state.r ?? 1);
    }
    const resumeId = state?.p ?? args.approve;
    const resume = resumeId === undefined ? undefined : await resumable(paused, resumeId, codeHash, state?.p !== undefined ? "round" : "approve");
    if (typeof resume === "string") return toolError("program_failed", resume, undefined, { cause: "approval" });
    // Anything but an explicit yes (a decline, a cancel) is a no, as a question on a 2025 request's stream is.
    const denied = answered !== undefined && !allows(answer);
    const { who, audit, registry, subject } = this.#context.session;
    const audited = (found: ExposedTool, allowed: boolean, askedAt: number) => auditApproval(who, audit, host, `${found.upstream}/${found.tool.name}`, allowed ? "ok" : "approval_refused", askedAt);
    const decides = callerDecides(registry, subject);
    const consent = new RunConsent({ needs: (found) => decides(found).access === "approve", ask: this.#rounds.askNow(host), paused, codeHash, resume, denied, answered: audited });
    const report = await this.#run(args.code, consent, host);
    const pause = consent.paused;
    const round = (state?.r ?? 0) + 1;
    if (inRound?.formDeclared && pause !== undefined && report.failure?.cause === "approval" && round <= MAX_CONSENT_ROUNDS) {
      // The user is asked in this round; the retry with their answer resumes the run (src/views/code/consent.ts).
      return this.#consentRound(inRound, codeHash, pause, round);
    }
    return runAnswer(report, this.#hint(report));
  }

  /** Runs the program, its calls through `consent`, and logs the run. */
  async #run(code: string, consent: RunConsent, host: HostExtra): Promise<RunReport> {
    const { session, names } = this.#context;
    const started = Date.now();
    const report = await runProgram(this.#runtime, code, names.namespaces(), this.#programCall(consent, host), this.#runtime.limits, hostSignal(host));
    log({ event: "execute", ...session.who, ms: Date.now() - started, calls: report.calls.length, outcome: report.ok ? "ok" : (report.failure?.cause ?? "failed") });
    return report;
  }

  /**
   * A call from the program: the tool resolved first (a lazy server loaded, an eager one still connecting waited
   * for or tried again, as use_tool does), consent decided on that tool, then exactly that tool called.
   */
  #programCall(consent: RunConsent, host: HostExtra): ToolCall {
    const { session, names, naming, lazy } = this.#context;
    const { registry, meter } = session;
    return (namespace, method, input, signal, hold) => {
      const path = `${namespace}${PATH_SEPARATOR}${method}`;
      const server = names.serverOf(namespace);
      // A call that finds no tool is in the audit trail too (a hidden tool's as denied), as callTool records the rest.
      const notFound = async (answer: CallToolResult): Promise<never> => {
        await recordNotFound({ session, tool: { name: path, naming }, input, host, signal }, answer);
        throw new Error(failureMessage(answer));
      };
      const find = async (): Promise<ExposedTool> => {
        registry.retryFailed();
        if (server !== undefined && names.find(path) === undefined) {
          const failedLoad = await lazy.ensure(server, host);
          if (failedLoad) return notFound(failedLoad);
        }
        const target = await findTool(registry, naming, path);
        if (isResult(target)) return notFound(target);
        // Arguments the schema refuses are the program's error before anyone is asked about the call (callTool
        // refuses them again and records the entry; nothing is sent); arguments that pass are not checked again.
        if (refusedArguments(session, target, input, path)) throw new Error(failureMessage(await callFound(target, undefined)));
        return target;
      };
      const callFound = (target: ExposedTool, argumentsChecked: true | undefined) =>
        callTool({ session, tool: { name: path, found: target }, input, host, signal, consented: true, argumentsChecked });
      const make = async (target: ExposedTool): Promise<{ value: unknown } | { error: string }> => {
        const result = await callFound(target, true);
        meter?.called("tool");
        return result.isError ? { error: failureMessage(result) } : { value: programValue(result) };
      };
      return consent.call(path, input, signal, hold, find, make);
    };
  }

  /** A name that is no namespace (an unknown method already got the closest paths): the answer says which there are. */
  #hint(report: RunReport): string {
    return report.failure?.cause === "error" && report.failure.thrown === "ReferenceError" ? ` (the namespaces are: ${namespaceList(this.#context.names)})` : "";
  }

  /**
   * A round asking the user about the call a paused run waits at; its state names the run and the round. The run is
   * marked first: from now on only the answer resumes it (the state is signed, not secret, and names it).
   */
  async #consentRound(inRound: AskInRound, codeHash: string, pause: Pause, round: number): Promise<ToolAnswer> {
    await markAsked(this.#parts.paused, pause.id);
    return inRound.ask({ [CONSENT_INPUT]: consentQuestion(pause.path, pause.args) }, { t: CODE_EXECUTE, d: codeHash, p: pause.id, r: round });
  }
}
