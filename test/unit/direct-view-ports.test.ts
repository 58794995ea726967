// The direct view knows no era: the same view asks the host through whichever input port it is given. The 2026 era
// refuses this view at the router (its list would change on a load), so only the 2025 port serves it there; the
// rounds port here shows the view itself has nothing of an era in it. Real registry and upstream client over an
// in-test upstream (test/unit/view-harness.ts).
import { isInputRequiredResult, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { directView } from "../../src/views/direct.ts";
import type { MetaCallKind } from "../../src/views/tool-view.ts";
import { roundRequest, roundsEra, sessionEra, sessionRequest, viewSession } from "../shared/view-harness.ts";

/** A meter that records the kinds of call it is told of. */
const meter = () => {
  const kinds: MetaCallKind[] = [];
  return { kinds, recorder: { listed: () => {}, called: (kind: MetaCallKind) => void kinds.push(kind) } };
};

describe("the direct view", () => {
  it("lists every tool first-class and, with the elicitation port, asks the upstream's question on the call's stream", async () => {
    const era = sessionEra();
    const session = await viewSession(era.bridge, { lazy: true });
    const counted = meter();
    const view = directView({ ...session, meter: counted.recorder }, era.input);
    const host = sessionRequest({ action: "accept", content: { go: 1 } });
    const list = await view.list(undefined, host.extra);
    expect(list.tools.map((t) => t.name)).toEqual(["later__ask", "later__echo", "notes__ask", "notes__echo"]);
    const answer = (await view.call({ name: "notes__ask", arguments: {} }, host.extra)) as CallToolResult;
    expect(answer.content).toEqual([{ type: "text", text: 'answered {"action":"accept","content":{"go":1}}' }]);
    expect(host.sent.map((m) => m.method)).toEqual(["elicitation/create"]);
    expect(counted.kinds).toEqual(["tool"]);
  });

  it("with the rounds port, asks in an input_required round and finishes the parked call at the retry", async () => {
    const era = await roundsEra();
    const session = await viewSession(era.bridge);
    const view = directView(session, era.input);
    const first = await view.call({ name: "notes__ask", arguments: {} }, (await roundRequest()).extra);
    expect(isInputRequiredResult(first)).toBe(true);
    const round = first as InputRequiredResult;
    const [key] = Object.keys(round.inputRequests ?? {});
    const retry = await roundRequest({ state: round.requestState!, answers: { [key!]: { action: "decline" } }, codec: era.codec });
    const done = (await view.call({ name: "notes__ask", arguments: {} }, retry.extra)) as CallToolResult;
    expect(done.content).toEqual([{ type: "text", text: 'answered {"action":"decline"}' }]);
    expect(session.log.calls).toHaveLength(1);
  });

  it("loads a lazy server at the first call of one of its tools, without a list first", async () => {
    const era = sessionEra();
    const session = await viewSession(era.bridge, { lazy: true });
    const view = directView(session, era.input);
    const answer = (await view.call({ name: "later__echo", arguments: { x: 1 } }, sessionRequest().extra)) as CallToolResult;
    expect(answer.content).toEqual([{ type: "text", text: '{"x":1}' }]);
  });
});
