// A call the caller's policies mark `approve`, in the meta and direct views of both eras: asked inside the call through
// the era's input port (2025: an elicitation on the call's own stream; 2026: an input_required round, the call parked
// until the retry brings the answer), made only on an explicit yes, never made on a no, a decline or no answer, and
// answered with what waits and how a team allows it where the host cannot be asked. Each answer is an `approval`
// entry in the audit trail; the call, when made, its own. Real registry and upstream client over an in-test upstream
// (test/shared/view-harness.ts); fake host request contexts.
import { isInputRequiredResult, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import type { AuditEntry } from "../../src/views/audit-entry.ts";
import type { SessionAudit } from "../../src/views/call-audit.ts";
import { directView } from "../../src/views/direct.ts";
import { metaView } from "../../src/views/meta-view.ts";
import { sessionScope } from "../../src/views/session-scope.ts";
import type { ToolAnswer } from "../../src/views/tool-view.ts";
import { toolsetScope } from "../../src/modern/toolset-scope.ts";
import { roundRequest, roundsEra, sessionEra, sessionRequest, viewSession } from "../shared/view-harness.ts";

const text = (answer: ToolAnswer) => ((answer as CallToolResult).content?.[0] as { text: string } | undefined)?.text;
const kind = (answer: ToolAnswer) => errorKindOf(answer as CallToolResult)?.kind;

/** `notes/echo` needs this token's user's consent; `notes/ask` does not. */
const POLICIES = { policies: [{ who: ["token:tok"], approve: ["notes/echo"] }] };
const USE_ECHO = { name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: { a: 1 } } };
const QUESTION = 'The agent wants to call notes/echo with {"a":1}. Allow this call?';

/** A session whose audit entries are kept in `entries`, as its outbox would store them. */
async function audited(bridge: Parameters<typeof viewSession>[0], era: "2025" | "2026", config: object = POLICIES) {
  const session = await viewSession(bridge, { config });
  const entries: AuditEntry[] = [];
  const audit: SessionAudit = { recorder: { record: async (_team, _days, entry) => void entries.push(entry) }, view: "meta", era };
  const trail = () => entries.map((e) => `${e.kind} ${e.tool} ${e.outcome}`);
  return { ...session, audit, entries, trail };
}

describe("consent in a 2025 session (asked on the call's own stream)", () => {
  async function setup(capabilities?: Record<string, unknown>) {
    const era = sessionEra(capabilities);
    const session = await audited(era.bridge, "2025");
    return { ...session, view: metaView(session, sessionScope(session), era.input), direct: directView(session, era.input) };
  }

  it("asks before the call, naming the tool and showing the arguments; a yes makes exactly that call", async () => {
    const { view, log, trail } = await setup();
    const host = sessionRequest({ action: "accept", content: { allow: true } });
    expect(text(await view.call(USE_ECHO, host.extra))).toBe('{"a":1}');
    expect(host.sent).toEqual([{ method: "elicitation/create", params: expect.objectContaining({ mode: "form", message: QUESTION }) }]);
    expect(log.calls).toEqual([expect.objectContaining({ name: "echo", arguments: { a: 1 } })]);
    expect(trail()).toEqual(["approval notes/echo ok", "tool_call notes/echo ok"]);
  });

  it("a no, a decline or an accept without allow makes no call, and the answer says so", async () => {
    for (const answer of [{ action: "accept", content: { allow: false } }, { action: "decline" }, { action: "cancel" }, { action: "accept", content: {} }]) {
      const { view, log, trail } = await setup();
      const result = await view.call(USE_ECHO, sessionRequest(answer).extra);
      expect(kind(result)).toBe("approval_refused");
      expect(text(result)).toBe("The user did not allow notes/echo; it was not called.");
      expect(log.calls).toEqual([]);
      expect(trail()).toEqual(["approval notes/echo approval_refused"]);
    }
  });

  it("no answer (the question fails or times out) is no consent", async () => {
    const { view, log, trail } = await setup();
    const host = sessionRequest();
    (host.extra.mcpReq as { send: unknown }).send = async () => {
      throw new Error("Request timed out");
    };
    const result = await view.call(USE_ECHO, host.extra);
    expect(kind(result)).toBe("approval_refused");
    expect(text(result)).toBe("The user did not answer whether to allow notes/echo (no answer within 10 minutes); it was not called.");
    expect(log.calls).toEqual([]);
    expect(trail()).toEqual(["approval notes/echo timeout"]);
  });

  it("a host that declared no form elicitation is told what waits and how a team allows it; nothing is called", async () => {
    const { view, direct, log, trail } = await setup({});
    for (const answer of [await view.call(USE_ECHO, sessionRequest().extra), await direct.call({ name: "notes__echo", arguments: { a: 1 } }, sessionRequest().extra)]) {
      expect(kind(answer)).toBe("approval_required");
      expect(text(answer)).toBe(
        "notes/echo was not called: each call of it needs the user's consent (the team's policies[0].approve rule), and this host cannot be asked " +
          "(it did not declare form elicitation). Use a host that supports elicitation, or ask a team admin to take the tool out of that rule.",
      );
    }
    expect(log.calls).toEqual([]);
    expect(trail()).toEqual(["tool_call notes/echo approval_required", "tool_call notes/echo approval_required"]);
  });

  it("asks in the direct view too, and a tool no rule marks is called without a question", async () => {
    const { direct, log, trail } = await setup();
    const host = sessionRequest({ action: "accept", content: { allow: true } });
    expect(text(await direct.call({ name: "notes__echo", arguments: { a: 1 } }, host.extra))).toBe('{"a":1}');
    expect(host.sent.map((m) => m.method)).toEqual(["elicitation/create"]);
    const quiet = sessionRequest({ action: "decline" });
    await direct.call({ name: "notes__ask", arguments: {} }, quiet.extra);
    // notes/ask asks its own question (the upstream's, marked as its), never the proxy's consent.
    expect(quiet.sent.map((m) => (m.params as { message?: string }).message)).toEqual(["[notes] Go on?"]);
    expect(log.calls.map((c) => c["name"])).toEqual(["echo", "ask"]);
    expect(trail()).toEqual(["approval notes/echo ok", "tool_call notes/echo ok", "tool_call notes/ask ok"]);
  });

  it("the config's top-level approve and approve_destructive ask in the meta view as they do in the code view", async () => {
    const era = sessionEra();
    const session = await audited(era.bridge, "2025", { approve: { globs: ["echo"], destructive: false } });
    const host = sessionRequest({ action: "decline" });
    expect(kind(await metaView(session, sessionScope(session), era.input).call(USE_ECHO, host.extra))).toBe("approval_refused");
    expect(session.log.calls).toEqual([]);
  });
});

describe("consent in the 2026 era (asked in an input_required round, the call parked)", () => {
  async function setup() {
    const era = await roundsEra();
    const session = await audited(era.bridge, "2026");
    const list = async () => ({ tools: [], ttlMs: 0 });
    return { ...era, ...session, view: metaView(session, toolsetScope(session, list, {}), era.input) };
  }

  async function firstRound(view: ReturnType<typeof metaView>) {
    const first = await view.call(USE_ECHO, (await roundRequest()).extra);
    expect(isInputRequiredResult(first)).toBe(true);
    const round = first as InputRequiredResult;
    const [key, request] = Object.entries(round.inputRequests ?? {})[0]!;
    expect(request).toMatchObject({ method: "elicitation/create", params: { mode: "form", message: QUESTION } });
    return { round, key };
  }

  it("the first request is answered with the question and nothing is called; the retry with yes makes the call", async () => {
    const { view, log, codec, parks, trail } = await setup();
    const { round, key } = await firstRound(view);
    expect(log.calls).toEqual([]);
    expect(parks.size).toBe(1);
    const retry = await roundRequest({ state: round.requestState!, answers: { [key]: { action: "accept", content: { allow: true } } }, codec });
    expect(text(await view.call(USE_ECHO, retry.extra))).toBe('{"a":1}');
    expect(log.calls).toHaveLength(1);
    expect(parks.size).toBe(0);
    expect(trail()).toEqual(["approval notes/echo ok", "tool_call notes/echo ok"]);
  });

  it("the retry with no ends the call unmade", async () => {
    const { view, log, codec, parks, trail } = await setup();
    const { round, key } = await firstRound(view);
    const retry = await roundRequest({ state: round.requestState!, answers: { [key]: { action: "decline" } }, codec });
    const answer = await view.call(USE_ECHO, retry.extra);
    expect(kind(answer)).toBe("approval_refused");
    expect(log.calls).toEqual([]);
    expect(parks.size).toBe(0);
    expect(trail()).toEqual(["approval notes/echo approval_refused"]);
  });

  it("a request that declares no form elicitation gets approval_required, and nothing is parked or called", async () => {
    const { view, log, parks, trail } = await setup();
    const answer = await view.call(USE_ECHO, (await roundRequest(undefined, {})).extra);
    expect(kind(answer)).toBe("approval_required");
    expect(log.calls).toEqual([]);
    expect(parks.size).toBe(0);
    expect(trail()).toEqual(["tool_call notes/echo approval_required"]);
  });
});

describe("discover_tool says which tools ask first", () => {
  it("a lookup of a tool the caller's policies mark approve says each call waits for consent; another tool says nothing", async () => {
    const era = sessionEra();
    const session = await audited(era.bridge, "2025");
    const view = metaView(session, sessionScope(session), era.input);
    const echo = (await view.call({ name: "discover_tool", arguments: { tool_name: "notes/echo" } }, sessionRequest().extra)) as CallToolResult;
    expect(text(echo)).toMatch(/\nEach call of this tool waits for the user's consent: the host asks them before it is made\.$/);
    expect(echo.structuredContent).toMatchObject({ name: "notes/echo", needsApproval: true });
    const ask = (await view.call({ name: "discover_tool", arguments: { tool_name: "notes/ask" } }, sessionRequest().extra)) as CallToolResult;
    expect(text(ask)).not.toContain("consent");
    expect(ask.structuredContent).not.toHaveProperty("needsApproval");
  });
});

describe("a 2026 consent round whose call is lost", () => {
  it("says the call was never made when the park waited only for consent (the object restarted between rounds)", async () => {
    const era = await roundsEra();
    const session = await audited(era.bridge, "2026");
    const view = metaView(session, toolsetScope(session, async () => ({ tools: [], ttlMs: 0 }), {}), era.input);
    const round = (await view.call(USE_ECHO, (await roundRequest()).extra)) as InputRequiredResult;
    const [key] = Object.keys(round.inputRequests ?? {});
    // A fresh object: the same codec, none of the parks.
    const restarted = await roundsEra();
    const again = metaView(session, toolsetScope(session, async () => ({ tools: [], ttlMs: 0 }), {}), restarted.input);
    const retry = await roundRequest({ state: round.requestState!, answers: { [key!]: { action: "accept", content: { allow: true } } }, codec: era.codec });
    await expect(again.call(USE_ECHO, retry.extra)).rejects.toThrow(/it was waiting for the user's consent and was never made: call the tool again/);
    expect(session.log.calls).toEqual([]);
  });
});

describe("two calls waiting for consent at once", () => {
  it("2025: each question is its own call's, and each answer decides only its call", async () => {
    const era = sessionEra();
    const session = await audited(era.bridge, "2025");
    const view = metaView(session, sessionScope(session), era.input);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowHost = (answer: object) => {
      const host = sessionRequest(answer as never);
      const send = host.extra.mcpReq.send;
      (host.extra.mcpReq as { send: unknown }).send = async (...args: unknown[]) => {
        await gate;
        return (send as (...a: unknown[]) => Promise<unknown>)(...args);
      };
      return host;
    };
    const yes = slowHost({ action: "accept", content: { allow: true } });
    const no = slowHost({ action: "decline" });
    const both = Promise.all([
      view.call({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: { who: "yes" } } }, yes.extra),
      view.call({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: { who: "no" } } }, no.extra),
    ]);
    release();
    const [allowed, refused] = await both;
    expect(text(allowed)).toBe('{"who":"yes"}');
    expect(kind(refused)).toBe("approval_refused");
    expect((yes.sent[0]!.params as { message: string }).message).toContain('{"who":"yes"}');
    expect((no.sent[0]!.params as { message: string }).message).toContain('{"who":"no"}');
    expect(session.log.calls.map((c) => c["arguments"])).toEqual([{ who: "yes" }]);
  });

  it("2026: two parked calls, each retried with its own state and answer, in the other order", async () => {
    const era = await roundsEra();
    const session = await audited(era.bridge, "2026");
    const view = metaView(session, toolsetScope(session, async () => ({ tools: [], ttlMs: 0 }), {}), era.input);
    const params = (who: string) => ({ name: "use_tool", arguments: { tool_name: "notes/echo", tool_input: { who } } });
    const [first, second] = (await Promise.all([view.call(params("a"), (await roundRequest()).extra), view.call(params("b"), (await roundRequest()).extra)])) as InputRequiredResult[];
    expect(era.parks.size).toBe(2);
    const answer = async (round: InputRequiredResult, who: string, reply: object) => {
      const [key] = Object.keys(round.inputRequests ?? {});
      return view.call(params(who), (await roundRequest({ state: round.requestState!, answers: { [key!]: reply }, codec: era.codec })).extra);
    };
    // A round's state answers only its own call: b's state with a's arguments is refused.
    await expect(answer(second!, "a", { action: "accept", content: { allow: true } })).rejects.toThrow(/belongs to another call/);
    expect(kind(await answer(second!, "b", { action: "decline" }))).toBe("approval_refused");
    expect(text(await answer(first!, "a", { action: "accept", content: { allow: true } }))).toBe('{"who":"a"}');
    expect(session.log.calls.map((c) => c["arguments"])).toEqual([{ who: "a" }]);
    expect(era.parks.size).toBe(0);
  });
});
