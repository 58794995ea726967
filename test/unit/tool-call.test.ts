// The one call function (src/views/tool-call.ts) with a fake input port, which records what it is asked and plays a
// 2026 upstream's two rounds (the second with the host's answers and the upstream's state), over a real registry
// and upstream client (test/unit/view-harness.ts).
import { describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { errorKindOf } from "../../src/lib/errors.ts";
import { registryNames } from "../../src/views/find-tool.ts";
import type { InputPort, RoundKey } from "../../src/views/input-port.ts";
import { callTool } from "../../src/views/tool-call.ts";
import { sessionEra, sessionRequest, viewSession } from "../shared/view-harness.ts";

/** An input port that makes the call twice: once as a first round, once as the next round with the host's answers. */
function twoRoundPort() {
  const keys: RoundKey[] = [];
  const port: InputPort = {
    upstreamCall: async (_host, key, call) => {
      keys.push(key);
      const signal = new AbortController().signal;
      await call({ signal, inputRequired: "return" });
      return call({ signal, inputRequired: "return", retry: { inputResponses: { q: { action: "accept" } }, requestState: "upstream-state" } });
    },
    askNow: () => undefined,
    askDuring: () => undefined,
    answered: () => undefined,
    askInRound: () => undefined,
  };
  return { port, keys };
}

async function setup() {
  const { bridge } = sessionEra();
  const session = await viewSession(bridge);
  return { session, naming: registryNames(session.registry, "load_mcp") };
}

describe("callTool, the one call function", () => {
  it("resolves the name, calls the upstream with the arguments and answers its result; no port, one call", async () => {
    const { session, naming } = await setup();
    const host = sessionRequest();
    const result = await callTool({ session, tool: { name: "notes/echo", naming }, input: { a: 1 }, host: host.extra });
    expect(result.content).toEqual([{ type: "text", text: '{"a":1}' }]);
    expect(session.log.calls).toEqual([{ name: "echo", arguments: { a: 1 } }]);
  });

  it("hands the port the call's key and makes each round it asks for, the next round's answers and state going upstream", async () => {
    const { session, naming } = await setup();
    const { port, keys } = twoRoundPort();
    const answer = await callTool({ session, tool: { name: "notes/echo", naming }, input: { b: 2 }, host: sessionRequest().extra, rounds: port });
    expect(keys).toEqual([{ tool: "notes/echo", input: { b: 2 }, upstream: "notes" }]);
    expect(session.log.calls).toEqual([
      { name: "echo", arguments: { b: 2 } },
      { name: "echo", arguments: { b: 2 }, inputResponses: { q: { action: "accept" } }, requestState: "upstream-state" },
    ]);
    expect((answer as CallToolResult).content).toEqual([{ type: "text", text: '{"b":2}' }]);
  });

  it("calls a tool already found as it is, whatever the naming would resolve (code mode decides consent on it)", async () => {
    const { session } = await setup();
    await session.registry.ensureEager();
    const found = session.registry.tools().get("notes/echo")!;
    const result = await callTool({ session, tool: { name: "mail.send", found }, input: {}, host: sessionRequest().extra });
    expect(result.isError).toBeFalsy();
    expect(session.log.calls).toHaveLength(1);
  });

  it("answers an unknown name with the closest ones and calls nothing; the port still sees the call", async () => {
    const { session, naming } = await setup();
    const { port, keys } = twoRoundPort();
    const answer = (await callTool({ session, tool: { name: "notes/ech", naming }, input: {}, host: sessionRequest().extra, rounds: port })) as CallToolResult;
    expect(errorKindOf(answer)?.kind).toBe("unknown_tool");
    expect(answer.content).toEqual([{ type: "text", text: expect.stringContaining("notes/echo") }]);
    expect(keys).toHaveLength(1);
    expect(session.log.calls).toHaveLength(0);
  });

  it("brings the upstream's progress back under the host's progress token", async () => {
    const { session, naming } = await setup();
    const host = sessionRequest();
    const result = await callTool({ session, tool: { name: "notes/echo", naming }, input: {}, host: host.extra, progressToken: 7 });
    expect(result.isError).toBeFalsy();
    expect(host.sent).toContainEqual({ method: "notifications/progress", params: { progress: 1, total: 2, progressToken: 7 } });
  });

  it("is cancelled by the signal it is given instead of the host request's (a program's run that ended)", async () => {
    const { session, naming } = await setup();
    await session.registry.ensureEager();
    const cancel = new AbortController();
    cancel.abort(new Error("the run has ended"));
    const result = await callTool({ session, tool: { name: "notes/echo", naming }, input: {}, host: sessionRequest().extra, signal: cancel.signal });
    expect(result.isError).toBe(true);
    expect(errorKindOf(result)?.upstream).toBe("notes");
    expect(session.log.calls).toHaveLength(0);
  });
});
