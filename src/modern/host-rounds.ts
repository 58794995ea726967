// The input port of the 2026 era (src/views/input-port.ts): a 2026 client cannot be sent a request, so whatever the
// host must answer during a call comes back as `input_required`, and its retry (with the answers and the signed
// request state) goes on. An upstream call is parked in the object while it waits (src/modern/parked-calls.ts), or a
// 2026 upstream's own round passed through, its state carried inside ours; a view's own round (code mode's consent)
// carries the view's state. Pairings and limits: docs/protocol-2026.md.
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  isInputRequiredResult,
  type CallToolResult,
  type ElicitResult,
  type InputRequiredResult,
  type RequestStateCodec,
} from "@modelcontextprotocol/server";
import { errorKindOf } from "../lib/errors.ts";
import { hostSignal, type HostExtra } from "../relay/bridge.ts";
import { markedAsFrom } from "../relay/provenance.ts";
import { asksForms, type InputPort, type RoundKey, type RoundState, type UpstreamRound } from "../views/input-port.ts";
import { toolError } from "../views/tool-errors.ts";
import type { ToolAnswer } from "../views/tool-view.ts";
import { PARK_TTL_SECONDS, capabilityFor, type CallTurn, type ParkedCalls } from "./parked-calls.ts";
import { argumentsDigest, declaredCapabilities as declared, type ParkState } from "./request-state.ts";

const PARK_MINUTES = PARK_TTL_SECONDS / 60;
/** The key of the URL-mode input request that asks a member to connect an OAuth upstream account. */
const CONNECT_INPUT = "connect_account";

/** What the era's rounds are kept and signed with. */
export interface RoundParts {
  /** Upstream calls waiting for the host's input. */
  parks: ParkedCalls;
  /** The codec of an upstream call's rounds (as long as a park lives). */
  codec: RequestStateCodec<ParkState>;
  /** The codec of a view's own rounds (as long as what they name lives: a paused program), made when first needed. */
  viewCodec: () => Promise<RequestStateCodec<ParkState>>;
}

/** The 2026 era's input port over one object's parked calls. */
export function roundsInput(parts: RoundParts): InputPort {
  return {
    upstreamCall: (host, key, call) => roundOf(parts, key, host, call),
    // A 2026 request has no stream to ask on while it runs.
    askNow: () => undefined,
    // A call's own question waits in its park, as an upstream's would, and goes to the host as its next round.
    askDuring: (host) =>
      asksForms(declared(host) ?? {})
        ? async (question) => {
            const asked = parts.parks.park(host, { method: "elicitation/create", params: question }, { beforeCall: true });
            if (!asked) throw new Error("A question can only be asked during a call this object parks.");
            return (await asked) as ElicitResult;
          }
        : undefined,
    answered: (host) => {
      const state = host.mcpReq.requestState<ParkState>();
      if (state === undefined) return undefined;
      return { state: typeof state === "object" && state !== null ? state : {}, answers: host.mcpReq.inputResponses ?? {} };
    },
    askInRound: (host) => ({
      formDeclared: asksForms(declared(host) ?? {}),
      ask: async (questions, state: RoundState) => {
        const inputRequests = Object.fromEntries(Object.entries(questions).map(([key, question]) => [key, inputRequired.elicit(question)]));
        return inputRequired({ inputRequests, requestState: await (await parts.viewCodec()).mint(state, host) });
      },
    }),
  };
}

/** -32021 when an input request needs a capability this host request did not declare. */
function requireCapabilities(extra: HostExtra, requests: Record<string, { method: string }>, abandon: (why: string) => void): void {
  const caps = declared(extra) ?? {};
  for (const request of Object.values(requests)) {
    const need = capabilityFor(request.method);
    if (need && caps[need] === undefined) {
      abandon(`the host did not declare the ${need} capability`);
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { [need]: {} } },
        `The tool asks for ${request.method}, which needs the ${need} client capability this request did not declare.`,
      );
    }
  }
}

/**
 * One round of an upstream call that may need the host's input. A first call starts it. A 2026 upstream's
 * `input_required` comes back as the result and is passed on, its state carried inside ours (`u`, `s`): the next
 * round calls the upstream again with the host's answers. A 2025 upstream's request for input parks the call here
 * (`c`): the next round hands it the answers and waits for what comes next. Each round ends with the result, or
 * with `input_required` naming what the upstream asks.
 */
async function roundOf(parts: RoundParts, key: RoundKey, extra: HostExtra, call: (round: UpstreamRound) => Promise<CallToolResult>): Promise<ToolAnswer> {
  const { parks } = parts;
  const digest = await argumentsDigest(key.input);
  const state = extra.mcpReq.requestState<ParkState>();
  if (state !== undefined && (typeof state !== "object" || state.t !== key.tool || state.d !== digest)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState belongs to another call: retry with the same tool_name and tool_input.");
  }
  let callId: string;
  if (state?.c !== undefined) {
    if (!parks.resume(state.c, extra.mcpReq.inputResponses ?? {})) {
      const over = `The call this requestState names is over (answered, timed out after ${PARK_MINUTES} minutes, or the proxy restarted)`;
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        state.b === 1
          ? `${over}; it was waiting for the user's consent and was never made: call the tool again to be asked again.`
          : `${over}; the upstream had begun it, so it may have run in part: check before you call the tool again.`,
      );
    }
    callId = state.c;
  } else {
    if (state !== undefined && (state.n === undefined || !parks.spend(state.n))) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState was already used: each round's state is good for one retry.");
    }
    // The member was asked to connect an account: a decline ends the call here; otherwise it is made afresh.
    if (state?.k === 1 && (extra.mcpReq.inputResponses?.[CONNECT_INPUT] as { action?: string } | undefined)?.action !== "accept") {
      return toolError("unavailable", `The user did not connect an account, so ${key.tool} was not called.`, key.upstream);
    }
    // A first call, or the next round of a 2026 upstream's own: its answers and its state go with the call.
    const retry =
      state === undefined || state.k === 1 ? undefined : { inputResponses: extra.mcpReq.inputResponses ?? {}, ...(state.s === undefined ? {} : { requestState: state.s }) };
    callId = parks.start(extra, (signal) => call({ signal, inputRequired: "return", ...(retry ? { retry } : {}) }));
  }
  const turn = await parks.next(callId, hostSignal(extra));
  if (!turn) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "The call this requestState names is already being resumed by another request.");
  return turnAnswer(parts, key, digest, extra, callId, turn);
}

/** What a round answers the host: the call's result, the round its upstream asks for, or the requests its call parked. */
async function turnAnswer(parts: RoundParts, key: RoundKey, digest: string, extra: HostExtra, callId: string, turn: CallTurn): Promise<ToolAnswer> {
  const { parks, codec } = parts;
  if (turn.kind === "result") {
    if (!isInputRequiredResult(turn.result)) {
      // An OAuth upstream without the member's account: a host that takes URL-mode input is asked to open the link.
      const url = errorKindOf(turn.result)?.connectUrl;
      if (url === undefined || declared(extra)?.elicitation?.url === undefined) return turn.result;
      const message = `Connect your account to ${key.upstream ?? "this server"} to call ${key.tool}: open the link, sign in, then continue.`;
      return {
        resultType: "input_required",
        inputRequests: { [CONNECT_INPUT]: inputRequired.elicitUrl({ message, url }) },
        requestState: await codec.mint({ t: key.tool, d: digest, n: crypto.randomUUID(), k: 1 }, extra),
      } as InputRequiredResult;
    }
    // A 2026 upstream asks: its requests go to the host marked as its own (relay/provenance.ts), its state inside ours.
    const asked = turn.result as InputRequiredResult;
    const upstream = key.upstream ?? "";
    const requests = Object.fromEntries(
      Object.entries((asked.inputRequests ?? {}) as Record<string, { method: string; params?: Record<string, unknown> }>).map(([k, request]) => [k, markedAsFrom(upstream, request)]),
    );
    requireCapabilities(extra, requests, () => {});
    const payload: ParkState = { u: upstream, t: key.tool, d: digest, n: crypto.randomUUID(), ...(asked.requestState === undefined ? {} : { s: asked.requestState }) };
    return { resultType: "input_required", ...(asked.inputRequests ? { inputRequests: requests } : {}), requestState: await codec.mint(payload, extra) } as InputRequiredResult;
  }
  requireCapabilities(extra, turn.requests, (why) => parks.abandon(callId, why));
  const requestState = await codec.mint({ c: callId, t: key.tool, d: digest, ...(turn.beforeCall ? { b: 1 as const } : {}) }, extra);
  return { resultType: "input_required", inputRequests: turn.requests, requestState } as InputRequiredResult;
}
