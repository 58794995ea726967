// The meta view, written once, against both eras' input ports and scopes: a 2025 session (the session's scope, the
// host asked on the call's own stream) and a 2026 object (a toolset's scope, the host asked in input_required
// rounds). The upstream is real client code over an in-test 2025 upstream (test/unit/view-harness.ts).
import { isInputRequiredResult, ProtocolError, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { metaView } from "../../src/views/meta-view.ts";
import { sessionScope } from "../../src/views/session-scope.ts";
import type { ToolAnswer } from "../../src/views/tool-view.ts";
import { toolsetScope } from "../../src/modern/toolset-scope.ts";
import { roundRequest, roundsEra, sessionEra, sessionRequest, viewSession } from "../shared/view-harness.ts";

const text = (answer: ToolAnswer) => ((answer as CallToolResult).content?.[0] as { text: string } | undefined)?.text;

describe("the meta view in a 2025 session (the session's scope, the elicitation port)", () => {
  async function setup(promote?: string[]) {
    const era = sessionEra();
    const session = await viewSession(era.bridge, promote ? { promote } : {});
    return { ...session, view: metaView(session, sessionScope(session), era.input) };
  }

  it("calls through use_tool, the upstream's question asked on the call's own stream, in one request", async () => {
    const { view, log } = await setup();
    const host = sessionRequest({ action: "accept", content: { go: true } });
    const answer = await view.call({ name: "use_tool", arguments: { tool_name: "notes/ask", tool_input: {} } }, host.extra);
    expect(text(answer)).toBe('answered {"action":"accept","content":{"go":true}}');
    expect(host.sent.map((m) => m.method)).toEqual(["elicitation/create"]);
    expect(log.calls).toHaveLength(1);
  });

  it("calls a promoted tool by its own name; an unknown name lists the session's meta-tools", async () => {
    const { view } = await setup(["notes/echo"]);
    const host = sessionRequest();
    expect(text(await view.call({ name: "notes/echo", arguments: { a: 1 } }, host.extra))).toBe('{"a":1}');
    const unknown = await view.call({ name: "nope" }, host.extra);
    expect(errorKindOf(unknown as CallToolResult)?.kind).toBe("unknown_tool");
    expect(text(unknown)).toBe('Unknown tool: "nope". This server offers discover_tool, use_tool; upstream tools are called through use_tool.');
  });

  it("answers discover_tool's lookup with the tool's whole definition, and refuses neither tool_name nor query", async () => {
    const { view } = await setup();
    const host = sessionRequest();
    const details = (await view.call({ name: "discover_tool", arguments: { tool_name: "notes/echo" } }, host.extra)) as CallToolResult;
    expect(details.structuredContent).toMatchObject({ name: "notes/echo", description: "Answers its arguments." });
    const neither = await view.call({ name: "discover_tool", arguments: {} }, host.extra);
    expect(errorKindOf(neither as CallToolResult)?.kind).toBe("invalid_arguments");
  });
});

describe("the meta view in the 2026 era (a toolset's scope, the rounds port)", () => {
  async function setup(route = {}) {
    const era = await roundsEra();
    const session = await viewSession(era.bridge, { promote: ["notes/echo"] });
    // The era's list is the team's catalog (test/workers/modern-list.test.ts); these calls never read it.
    const list = async () => ({ tools: [], ttlMs: 0 });
    return { ...era, ...session, view: metaView(session, toolsetScope(session, list, route), era.input) };
  }

  it("asks the upstream's question in an input_required round, and the retry with the answer finishes the same call", async () => {
    const { view, log, codec, parks } = await setup();
    const params = { name: "use_tool", arguments: { tool_name: "notes/ask", tool_input: { n: 1 } } };
    const first = await view.call(params, (await roundRequest()).extra);
    expect(isInputRequiredResult(first)).toBe(true);
    const round = first as InputRequiredResult;
    const [key, request] = Object.entries(round.inputRequests ?? {})[0]!;
    expect(request).toMatchObject({ method: "elicitation/create", params: { message: "[notes] Go on?" } });
    expect(parks.size).toBe(1);
    const retry = await roundRequest({ state: round.requestState!, answers: { [key]: { action: "accept", content: { go: 2 } } }, codec });
    const done = await view.call(params, retry.extra);
    expect(text(done)).toBe('answered {"action":"accept","content":{"go":2}}');
    // One upstream call: the retry resumed the parked one.
    expect(log.calls).toHaveLength(1);
    expect(parks.size).toBe(0);
  });

  it("refuses a retry whose state belongs to another call, before anything is called", async () => {
    const { view, log, codec } = await setup();
    const first = (await view.call({ name: "use_tool", arguments: { tool_name: "notes/ask", tool_input: {} } }, (await roundRequest()).extra)) as InputRequiredResult;
    const other = await roundRequest({ state: first.requestState!, answers: {}, codec });
    await expect(view.call({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: {} } }, other.extra)).rejects.toBeInstanceOf(ProtocolError);
    expect(log.calls).toHaveLength(1);
  });

  it("answers a call that needs no input at once, a promoted tool by its own name, and a refused handle is said first", async () => {
    const { view } = await setup();
    const host = await roundRequest();
    expect(text(await view.call({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: { a: 1 } } }, host.extra))).toBe('{"a":1}');
    // The era's list carries the promoted tools whole (src/modern/tool-list.ts), so they are called by name here too.
    expect(text(await view.call({ name: "notes/echo", arguments: { b: 2 } }, host.extra))).toBe('{"b":2}');
    const unknown = await view.call({ name: "notes/nowhere", arguments: {} }, host.extra);
    expect(text(unknown)).toBe('Unknown tool: "notes/nowhere". This server offers discover_tool, use_tool and load_mcp; upstream tools are called through use_tool.');
    const refused = await setup({ problem: "This toolset handle has expired." });
    const answer = await refused.view.call({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: {}, toolset: "ts1.x" } }, host.extra);
    expect(errorKindOf(answer as CallToolResult)?.kind).toBe("invalid_toolset");
    expect(text(answer)).toBe("This toolset handle has expired.");
  });
});
