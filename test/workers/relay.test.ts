// An upstream's question reaches the call that caused it, marked as the upstream's. Two calls to one upstream ask at
// once (harness/modern-upstream.ts's `confirm_together`: each asks "Run <action>?" once both are in progress), each
// answered according to the call whose stream carried the question: a question relayed to the other call gets the
// other call's answer, and the results show it. For 2025 sessions (raw, so the test sees which stream carried what)
// and 2026 hosts, against a 2025 upstream (elicitation/create on the call's answer stream) and a 2026 one
// (input_required). A question on the upstream's GET stream, whose call is unknown, goes to the only call in
// progress, and is refused while there are two.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SERVER_META_KEY } from "../../src/relay/provenance.ts";
import { modernUseTool, rawSession, resultText, type Message, type RawCall } from "../shared/raw-hosts.ts";
import { BASE, seedTeam, workerFetch } from "./helpers.ts";

const url = (team: string) => `${BASE}/t/${team}/mcp`;
const fetchFn = (input: string, init: RequestInit) => workerFetch(input, init);

/** The one question a call was asked on its own stream: its message and the server `_meta` names. */
function question(call: RawCall): { message: unknown; server: unknown } {
  expect(call.asked.map((m) => m.method)).toEqual(["elicitation/create"]);
  const params = call.asked[0]!.params!;
  return { message: params["message"], server: (params["_meta"] as Record<string, unknown> | undefined)?.[SERVER_META_KEY] };
}

/** Confirms only on the stream of the call about "alpha": a question relayed to the wrong call gets the wrong answer. */
const answerFor = (ok: boolean) => () => ({ action: "accept", content: { ok } });

describe.each([
  ["a 2025 upstream (its elicitation on the call's answer stream)", "rl-legacy", () => env.LEGACY_INPUT_URL],
  ["a 2026 upstream (its input_required, answered round by round)", "rl-modern", () => env.MODERN_URL],
])("two calls of a 2025 session asking at once, to %s", (_label, team, upstreamUrl) => {
  it("each question arrives on its own call's stream, marked as the upstream's, and each call gets its own answer", async () => {
    const token = await seedTeam(team, { mcp: { up: { url: upstreamUrl() } } });
    const session = await rawSession(fetchFn, url(team), token, { elicitation: {} });
    const group = crypto.randomUUID();
    const input = (action: string) => ({ tool_name: "up/confirm_together", tool_input: { action, group, together: 2 } });
    const [alpha, beta] = await Promise.all([
      session.call("use_tool", input("alpha"), answerFor(true)),
      session.call("use_tool", input("beta"), answerFor(false)),
    ]);
    expect(question(alpha)).toEqual({ message: "[up] Run alpha?", server: "up" });
    expect(question(beta)).toEqual({ message: "[up] Run beta?", server: "up" });
    expect([resultText(alpha.result), resultText(beta.result)]).toEqual(["alpha: confirmed", "beta: refused"]);
    await session.close();
  });
});

describe.each([
  ["a 2025 upstream (parked)", "rl-mod-legacy", () => env.LEGACY_INPUT_URL],
  ["a 2026 upstream (passed on)", "rl-mod-modern", () => env.MODERN_URL],
])("two use_tool calls of a 2026 host asking at once, to %s", (_label, team, upstreamUrl) => {
  it("each call's input_required holds its own question, marked, and its answer completes that call", async () => {
    const token = await seedTeam(team, { mcp: { up: { url: upstreamUrl() } } });
    const group = crypto.randomUUID();
    const input = (action: string) => ({ tool_name: "up/confirm_together", tool_input: { action, group, together: 2 } });
    const rounds = await Promise.all(["alpha", "beta"].map((action) => modernUseTool(fetchFn, url(team), token, input(action))));
    const asked = rounds.map((round) => {
      const requests = Object.entries((round.result?.["inputRequests"] ?? {}) as Record<string, Message>);
      expect(requests).toHaveLength(1);
      const [key, request] = requests[0]!;
      return { key, message: request.params?.["message"], server: (request.params?.["_meta"] as Record<string, unknown>)[SERVER_META_KEY], state: round.result?.["requestState"] };
    });
    expect(asked.map(({ message, server }) => ({ message, server }))).toEqual([
      { message: "[up] Run alpha?", server: "up" },
      { message: "[up] Run beta?", server: "up" },
    ]);
    const done = await Promise.all(
      ["alpha", "beta"].map((action, i) =>
        modernUseTool(fetchFn, url(team), token, input(action), {
          inputResponses: { [asked[i]!.key]: { action: "accept", content: { ok: action === "alpha" } } },
          requestState: asked[i]!.state,
        }),
      ),
    );
    expect(done.map((d) => resultText(d.result))).toEqual(["alpha: confirmed", "beta: refused"]);
  });
});

describe("a question on the upstream's GET stream, unrelated to any call", () => {
  it("goes to the only call in progress, marked; with two in progress it is refused, and neither call is asked", async () => {
    const token = await seedTeam("rl-aside", { mcp: { up: { url: env.LEGACY_INPUT_URL } } });
    const session = await rawSession(fetchFn, url("rl-aside"), token, { elicitation: {} });
    // The proxy opens the upstream's GET stream only while the host holds its own.
    const onHostStream: Message[] = [];
    const closeStream = await session.openStream(onHostStream);
    const one = await session.call("use_tool", { tool_name: "up/ask_aside", tool_input: { action: "gamma", group: crypto.randomUUID(), together: 1 } }, answerFor(true));
    expect(question(one)).toEqual({ message: "[up] Run gamma?", server: "up" });
    expect(resultText(one.result)).toBe("gamma: confirmed");

    const group = crypto.randomUUID();
    const input = (action: string) => ({ tool_name: "up/ask_aside", tool_input: { action, group, together: 2 } });
    const both = await Promise.all([session.call("use_tool", input("delta"), answerFor(true)), session.call("use_tool", input("eps"), answerFor(true))]);
    for (const [call, action] of [[both[0], "delta"], [both[1], "eps"]] as const) {
      expect(call.asked).toEqual([]);
      expect(resultText(call.result)).toContain(`${action}: not asked:`);
      expect(resultText(call.result)).toContain('2 requests to "up" are in progress');
    }
    expect(onHostStream).toEqual([]);
    await closeStream();
    await session.close();
  });
});
