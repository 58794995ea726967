// The one function every upstream tool call of every view and era passes through (`callTool`): use_tool and a
// promoted tool (meta view), a tool of the direct view, a call from a code-view program, in a 2025 session or a 2026
// object. The name is resolved (its upstream waited for or tried again), the arguments checked against the tool's
// inputSchema (src/views/argument-check.ts), progress and cancellation pass through, what the upstream sends
// meanwhile stays on the host request's stream (or goes to the host in rounds, through the era's input port),
// resource links are remembered, the call is logged, and every failure the proxy names is an isError result. This
// is where per-member policy (hidden tools, consent) and audit hook in: nothing reaches an upstream tool without
// coming through here.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { UpstreamError, toToolResult } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import { forwardedMeta, hostSignal, type HostExtra } from "../relay/bridge.ts";
import type { ExposedTool } from "../upstream/registry.ts";
import { argumentRefusal } from "./argument-check.ts";
import { auditApproval, beginAudit, resultOutcome, thrownOutcome } from "./call-audit.ts";
import { askConsent, type ConsentAsk } from "./call-consent.ts";
import { callerDecides, callerSees, findTool, hiddenFound, type ToolNames } from "./find-tool.ts";
import { toolAccess, type AccessDecision } from "../config/tool-access.ts";
import type { InputPort, UpstreamRound } from "./input-port.ts";
import { isResult } from "./tool-errors.ts";
import type { CallSession, ToolAnswer } from "./tool-view.ts";

/** The tool a call is for: a name the view's naming resolves, or (code mode: consent is decided on it) a tool already found. */
export type ToolRef = { name: string; naming: ToolNames } | { name: string; found: ExposedTool };

/** One tool call, every field named. */
export interface ToolCallRequest {
  /** What the call uses of the session: the registry, the way back to the host, who it is, where links go. */
  session: CallSession;
  tool: ToolRef;
  /** The tool's arguments, as the upstream gets them. */
  input: Record<string, unknown>;
  /** The context of the host request the call is made for. */
  host: HostExtra;
  /** The host request's progress token: the upstream's progress goes back under it. */
  progressToken?: string | number | undefined;
  /** What cancels the call instead of the host request's own cancellation (a code-mode run's end). */
  signal?: AbortSignal | undefined;
  /**
   * How the host's input reaches the call (the era's port); absent for a program's calls, whose upstream requests
   * go as the bridge relays them.
   */
  rounds?: InputPort | undefined;
  /**
   * The user's consent was settled before the call (a program's run asks for its calls: src/views/code/consent.ts).
   * Otherwise a tool the caller's policies mark `approve` is asked about here, and with no port nobody can be asked.
   */
  consented?: true | undefined;
  /** The arguments were already checked against this tool's schema (a program's call, before its consent). */
  argumentsChecked?: true | undefined;
}

/** Calls the upstream tool `call.tool` names: its result, or (through the era's rounds) the round that asks the host. */
export function callTool(call: ToolCallRequest & { rounds?: undefined }): Promise<CallToolResult>;
export function callTool(call: ToolCallRequest): Promise<ToolAnswer>;
export function callTool(call: ToolCallRequest): Promise<ToolAnswer> {
  const { rounds, tool, input, host } = call;
  if (!rounds) return resolveAndCall(call, {});
  const upstream = "found" in tool ? tool.found.upstream : tool.naming.serverOf(tool.name);
  return rounds.upstreamCall(host, { tool: tool.name, input, upstream }, (round) => resolveAndCall(call, round));
}

/**
 * The tool found (unless it was given), its consent asked where the caller's policies want it, then called; a name
 * that finds nothing is answered as findTool words it. The call's audit entry is in the session's storage before the
 * answer goes (src/views/call-audit.ts); a call the user was asked about and did not allow has its answer's entry
 * (src/views/call-consent.ts) and no other, as it was never made.
 */
async function resolveAndCall(call: ToolCallRequest, round: UpstreamRound): Promise<CallToolResult> {
  const { tool, session } = call;
  let audit = beginAudit(session.who, session.audit, "tool_call", call.host, call.input);
  const signal = round.signal ?? call.signal ?? hostSignal(call.host);
  let name = tool.name;
  try {
    const { target, denied, decision } = await resolveForCaller(call);
    if (denied) name = denied;
    else if (!isResult(target)) name = `${target.upstream}/${target.tool.name}`;
    // Arguments the tool's schema refuses are answered before anyone is asked or anything is sent.
    const refused = isResult(target) || call.argumentsChecked ? undefined : refusedArguments(session, target, call.input, tool.name);
    let result: CallToolResult;
    if (isResult(target)) result = target;
    else if (refused) result = refused;
    else {
      const consent = decision?.access === "approve" && call.consented !== true ? await askConsent(consentAsk(call, target, decision, signal)) : undefined;
      if (consent?.allowed === false && consent.asked) return consent.result;
      // Allowed after a question: the call's own entry starts now (its time is the call's, not the person's).
      if (consent?.allowed) audit = beginAudit(session.who, session.audit, "tool_call", call.host, call.input);
      result = consent?.allowed === false ? consent.result : await callFound(call, target, round);
    }
    await audit?.end(name, denied ? "denied" : resultOutcome(result, signal.aborted), result);
    return result;
  } catch (err) {
    await audit?.end(name, thrownOutcome(err, signal.aborted), undefined);
    throw err;
  }
}

/**
 * The `invalid_arguments` answer for a call of `target` (by the host's `name`) whose `input` its schema refuses, unless
 * the team turned the check off for its upstream. A program asks it before consent (src/views/code/execute.ts).
 */
export function refusedArguments(session: CallSession, target: ExposedTool, input: Record<string, unknown>, name: string): CallToolResult | undefined {
  const spec = session.registry.config.upstreams.find((u) => u.name === target.upstream);
  return spec?.validate_arguments === false ? undefined : argumentRefusal(session.who.team, target, input, name);
}

/** The question about one call of `target`, asked through the era's port (none for a call without one: it cannot ask). */
function consentAsk(call: ToolCallRequest, target: ExposedTool, decision: AccessDecision, signal: AbortSignal): ConsentAsk {
  const { session, host, input } = call;
  const tool = `${target.upstream}/${target.tool.name}`;
  return {
    ask: call.rounds?.askDuring(host),
    tool,
    upstream: target.upstream,
    input,
    rule: decision.rule?.at ?? "approve",
    signal,
    answered: (outcome, askedAt) => auditApproval(session.who, session.audit, host, tool, outcome, askedAt),
  };
}

/**
 * The tool as the caller may see it, and what its policies decide on it: they are asked again at the call, and a
 * tool they hide is answered as one that does not exist (`denied` names it, for the audit trail only).
 */
async function resolveForCaller(call: ToolCallRequest): Promise<{ target: ExposedTool | CallToolResult; denied?: string; decision?: AccessDecision }> {
  const { tool, session } = call;
  const decides = callerDecides(session.registry, session.subject);
  const sees = (found: ExposedTool) => decides(found).access !== "hidden";
  if ("found" in tool) {
    const decision = decides(tool.found);
    return decision.access !== "hidden" ? { target: tool.found, decision } : { target: hiddenFound(session.registry, tool.name, sees), denied: named(tool.found) };
  }
  const target = await findTool(session.registry, tool.naming, tool.name, sees);
  if (!isResult(target)) return { target, decision: decides(target) };
  const denied = deniedName(session, tool.naming, tool.name);
  return denied === undefined ? { target } : { target, denied };
}

const named = (found: ExposedTool) => `${found.upstream}/${found.tool.name}`;

/**
 * The `server/tool` a name that found nothing calls when the caller's policies hide that tool: a denial in the trail,
 * whatever the answer says. Hidden since the catalog was filtered (the caller's groups changed), filtered out (the
 * view's name of a hidden tool), or a `server/tool` name of a configured server that the policies hide.
 */
function deniedName(session: CallSession, naming: ToolNames, name: string): string | undefined {
  const hidden = naming.find(name);
  if (hidden && !callerSees(session.registry, session.subject)(hidden)) return named(hidden);
  const concealed = naming.concealed?.(name);
  if (concealed !== undefined) return concealed;
  const server = name.includes("/") ? name.slice(0, name.indexOf("/")) : undefined;
  if (server === undefined || !session.registry.config.upstreams.some((u) => u.name === server)) return undefined;
  const access = toolAccess(session.registry.config, session.subject);
  return !access.open && access.decide({ name }).access === "hidden" ? name : undefined;
}

/**
 * The entry of a call whose tool was not found before it could be made (a program's: it finds its tool itself, then
 * decides consent on it, before `callTool`): a hidden tool's name recorded as denied, any other as its answer says.
 */
export async function recordNotFound(call: ToolCallRequest & { tool: { name: string; naming: ToolNames } }, answer: CallToolResult): Promise<void> {
  const { session, tool } = call;
  const audit = beginAudit(session.who, session.audit, "tool_call", call.host, call.input);
  const denied = deniedName(session, tool.naming, tool.name);
  await audit?.end(denied ?? tool.name, denied === undefined ? resultOutcome(answer, false) : "denied", answer);
}

/** The call of exactly `target` upstream, within the host request's context (relays reach the host on its stream). */
async function callFound(call: ToolCallRequest, target: ExposedTool, round: UpstreamRound): Promise<CallToolResult> {
  const { session, host, progressToken } = call;
  const { registry, bridge, who, links } = session;
  // A progress token of the host's travels upstream; the upstream's progress comes back under it.
  const onprogress =
    progressToken === undefined
      ? undefined
      : (p: { progress: number; total?: number; message?: string }) =>
          void host.mcpReq.notify({ method: "notifications/progress", params: { ...p, progressToken } }).catch(() => {});
  const meta = forwardedMeta(host);
  const { signal, ...rounds } = round;
  const started = Date.now();
  const done = (outcome: "ok" | "tool_error" | "failed") =>
    log({ event: "tool_call", ...who, upstream: target.upstream, tool: target.tool.name, ms: Date.now() - started, outcome });
  try {
    const result = await bridge.during(target.upstream, host, (origin) =>
      registry.call(target, call.input, {
        signal: signal ?? call.signal ?? hostSignal(host),
        origin,
        ...(onprogress ? { onprogress } : {}),
        ...(meta ? { meta } : {}),
        ...rounds,
      }),
    );
    done(result.isError ? "tool_error" : "ok");
    // A resource the result links to and no list claims is routed back to this upstream later.
    await links?.remember(target.upstream, result);
    return result;
  } catch (err) {
    done("failed");
    if (err instanceof UpstreamError) return toToolResult(err, `${call.tool.name} failed: ${err.message}`);
    throw err;
  }
}
