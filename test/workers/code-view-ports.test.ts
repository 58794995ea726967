// The code view knows no era: one view, its consent asked through whichever input port it is given. With a 2025
// session's port the user is asked on the execute request's stream and the run goes on; with the 2026 era's, the
// run pauses, the host gets an input_required round, and its retry with the answer resumes the run (yes makes the
// call, no throws in the program). Real Worker Loader sandbox, real registry and upstream client over an in-test
// upstream, faked host request contexts (test/shared/view-harness.ts); the whole path through the objects is in
// test/workers/code-view.test.ts and modern-code.test.ts.
import { env } from "cloudflare:workers";
import { isInputRequiredResult, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import type { PausedRun } from "../../src/views/code/approval.ts";
import type { CodeRuntime, CodeSessionParts } from "../../src/views/code/code-context.ts";
import { codeView } from "../../src/views/code/code-view.ts";
import type { InputPort } from "../../src/views/input-port.ts";
import type { ViewSession } from "../../src/views/tool-view.ts";
import { roundRequest, roundsEra, sessionEra, sessionRequest, viewSession } from "../shared/view-harness.ts";

const runtime = (): CodeRuntime => ({
  loader: env.LOADER!,
  limits: { wallMs: 5_000, cpuMs: 1_000, maxCalls: 10, maxLogBytes: 4096, maxResultBytes: 16_384, maxArgBytes: 65_536 },
});

/** Paused runs kept in memory, as the session's storage keeps them. */
function parts(): CodeSessionParts {
  const runs = new Map<string, PausedRun>();
  return { paused: { get: async (id) => runs.get(id), delete: async (id) => void runs.delete(id), put: async (id, run) => void runs.set(id, run) } };
}

/** Calls of `echo` need the user's consent: the config's top-level key (a rule for everyone), or a policy for this token. */
const APPROVE_ECHO = { config: { approve: { globs: ["echo"], destructive: false } } };
const POLICY_ECHO = { config: { policies: [{ who: ["token:tok"], approve: ["notes/echo"] }] } };

const PROGRAM = { code: "return await notes.echo({ a: 1 });" };
const text = (answer: unknown) => ((answer as CallToolResult).content?.[0] as { text: string } | undefined)?.text;

function view(session: ViewSession, input: InputPort) {
  return codeView(session, runtime(), parts(), input);
}

describe("the code view's consent through each era's input port", () => {
  it("2025: asks the user on the execute request's stream, and the run goes on with their yes", async () => {
    const era = sessionEra();
    const session = await viewSession(era.bridge, APPROVE_ECHO);
    const host = sessionRequest({ action: "accept", content: { allow: true } });
    const answer = await view(session, era.input).call({ name: "execute", arguments: PROGRAM }, host.extra);
    expect(text(answer)).toBe('{"a":1}');
    expect(host.sent).toEqual([expect.objectContaining({ method: "elicitation/create", params: expect.objectContaining({ message: expect.stringContaining("notes.echo") }) })]);
    expect(session.log.calls).toHaveLength(1);
  });

  it("2026: pauses the run and asks in an input_required round; the retry with yes resumes it and makes the call", async () => {
    const era = await roundsEra();
    const session = await viewSession(era.bridge, APPROVE_ECHO);
    const code = view(session, era.input);
    const first = await code.call({ name: "execute", arguments: PROGRAM }, (await roundRequest()).extra);
    expect(isInputRequiredResult(first)).toBe(true);
    const round = first as InputRequiredResult;
    expect(Object.keys(round.inputRequests ?? {})).toEqual(["consent"]);
    expect(session.log.calls).toHaveLength(0);
    const retry = await roundRequest({ state: round.requestState!, answers: { consent: { action: "accept", content: { allow: true } } }, codec: era.codec });
    expect(text(await code.call({ name: "execute", arguments: PROGRAM }, retry.extra))).toBe('{"a":1}');
    expect(session.log.calls).toHaveLength(1);
  });

  it("2026: a no throws in the program where the call would have been, and nothing is called", async () => {
    const era = await roundsEra();
    const session = await viewSession(era.bridge, APPROVE_ECHO);
    const code = view(session, era.input);
    const round = (await code.call({ name: "execute", arguments: PROGRAM }, (await roundRequest()).extra)) as InputRequiredResult;
    const retry = await roundRequest({ state: round.requestState!, answers: { consent: { action: "decline" } }, codec: era.codec });
    expect(text(await code.call({ name: "execute", arguments: PROGRAM }, retry.extra))).toContain("The user did not allow notes.echo; it was not called.");
    expect(session.log.calls).toHaveLength(0);
  });

  it("asks for the calls a policy of the caller's marks approve, and only the caller's: another token's rule asks nothing", async () => {
    const era = sessionEra();
    const mine = await viewSession(era.bridge, POLICY_ECHO);
    const host = sessionRequest({ action: "decline" });
    expect(text(await view(mine, era.input).call({ name: "execute", arguments: PROGRAM }, host.extra))).toContain("The user did not allow notes.echo; it was not called.");
    expect(host.sent.map((m) => m.method)).toEqual(["elicitation/create"]);
    expect(mine.log.calls).toHaveLength(0);
    const theirs = await viewSession(era.bridge, { config: { policies: [{ who: ["token:other"], approve: ["notes/echo"] }] } });
    const quiet = sessionRequest({ action: "decline" });
    expect(text(await view(theirs, era.input).call({ name: "execute", arguments: PROGRAM }, quiet.extra))).toBe('{"a":1}');
    expect(quiet.sent).toEqual([]);
    expect(theirs.log.calls).toHaveLength(1);
  });
});
