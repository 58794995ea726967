// The input port of a 2025 session (src/views/input-port.ts): the host request's own stream stays open while a call
// runs, so an upstream's requests are relayed on it as they come (HostBridge) and a question is an elicitation sent
// on it, answered before the call goes on. There are no rounds: every call is answered once, in one request.
import type { HostBridge } from "../relay/bridge.ts";
import { asksForms, type InputPort } from "../views/input-port.ts";

/** The session's port: asking needs a host that declared form elicitation at initialize. */
export function elicitationInput(bridge: HostBridge): InputPort {
  const askNow: InputPort["askNow"] = (host) =>
    asksForms(bridge.capabilities())
      ? (question, { signal, timeoutMs }) => host.mcpReq.send({ method: "elicitation/create", params: question }, { timeout: timeoutMs, signal })
      : undefined;
  return {
    upstreamCall: (_host, _key, call) => call({}),
    askNow,
    askDuring: askNow,
    answered: () => undefined,
    askInRound: () => undefined,
  };
}
