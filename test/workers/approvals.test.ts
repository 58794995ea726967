// Approvals through the real Worker: a tool the team's policies mark `approve` is called only once the user allows that
// call, asked by elicitation on the call's stream in a 2025 session (meta and direct views) and in an input_required
// round in the 2026 era (the v2 client answers rounds with its elicitation handler and retries on its own); a no
// leaves the upstream untouched; a host that declared no elicitation is told the call needs approval and how a team
// allows it; the rule applies only to whom it selects; every answer is an approval entry in the team's trail.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import type { AuditEntry } from "../../src/views/audit-entry.ts";
import { BASE, addToken, adminFetch, connectAt, replayStats, replayUrl, seedTeam, text, waitFor, workerFetch } from "./helpers.ts";

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown> };

/** The team: memory's deletions need consent from everyone; reading does not. */
const config = (route: string, who = ["*"]) => ({ mcp: { memory: { url: replayUrl(route) } }, policies: [{ who, approve: ["memory/delete_entities"] }] });

/** The entity names each delete_entities the upstream was sent carried (what was really deleted). */
const deletions = async (route: string) =>
  (await replayStats(route)).calls.filter((c) => c.name === "delete_entities").map((c) => (c.arguments as { entityNames: string[] }).entityNames[0]);

/** Answers the proxy's questions in turn: yes to the first, no to the rest; keeps what was asked. */
function answerer(): { asked: string[]; answer: (request: { params: unknown }) => Promise<{ action: "accept" | "decline"; content?: { allow: boolean } }> } {
  const asked: string[] = [];
  const answer = async (request: { params: unknown }) => {
    asked.push(String((request.params as { message?: string }).message));
    return asked.length === 1 ? { action: "accept" as const, content: { allow: true } } : { action: "decline" as const };
  };
  return { asked, answer };
}

async function trail(team: string, count: number): Promise<string[]> {
  let entries: AuditEntry[] = [];
  const read = async () => (entries = ((await (await adminFetch("GET", `/teams/${team}/audit?limit=1000`)).json()) as { entries: AuditEntry[] }).entries);
  expect(await waitFor(async () => (await read()).length >= count, { tries: 100, ms: 30 })).toBe(true);
  return entries.map((e) => `${e.kind} ${e.tool} ${e.outcome}`).reverse();
}

const useDelete = (name: string) => ({ name: "use_tool", arguments: { tool_name: "memory/delete_entities", tool_input: { entityNames: [name] } } });
const question = (name: string) => `The agent wants to call memory/delete_entities with {"entityNames":["${name}"]}. Allow this call?`;

async function modernClient(team: string, token: string, capabilities: Record<string, unknown>) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp`), {
    fetch: (input, init) => workerFetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

describe("approvals in a 2025 session", () => {
  it("meta view: asked on the call's stream; yes makes the call, no leaves the upstream untouched; both answers in the trail", async () => {
    const token = await seedTeam("ap-meta", config("ap-meta"));
    const s = await connectAt("ap-meta", token, "", { capabilities: { elicitation: { form: {} } } });
    const { asked, answer } = answerer();
    s.client.setRequestHandler(ElicitRequestSchema, answer);
    const yes = (await s.client.callTool(useDelete("kept"))) as Result;
    expect(yes.isError, text(yes)).toBeFalsy();
    const no = (await s.client.callTool(useDelete("refused"))) as Result;
    expect(errorKindOf(no)?.kind).toBe("approval_refused");
    expect(text(no)).toBe("The user did not allow memory/delete_entities; it was not called.");
    const read = (await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph", tool_input: {} } })) as Result;
    expect(read.isError, text(read)).toBeFalsy();
    expect(asked).toEqual([question("kept"), question("refused")]);
    expect(await deletions("ap-meta")).toEqual(["kept"]);
    expect(await trail("ap-meta", 4)).toEqual([
      "approval memory/delete_entities ok",
      "tool_call memory/delete_entities ok",
      "approval memory/delete_entities approval_refused",
      "tool_call memory/read_graph ok",
    ]);
    await s.client.close();
  });

  it("direct view, a host that declared no elicitation: the call needs approval, the answer says how a team allows it, nothing is called", async () => {
    const token = await seedTeam("ap-direct", config("ap-direct"));
    const s = await connectAt("ap-direct", token, "?view=direct");
    const answer = (await s.client.callTool({ name: "memory__delete_entities", arguments: { entityNames: ["x"] } })) as Result;
    expect(errorKindOf(answer)?.kind).toBe("approval_required");
    expect(text(answer)).toMatch(/^memory\/delete_entities was not called: each call of it needs the user's consent \(the team's policies\[0\]\.approve rule\)/);
    expect(await deletions("ap-direct")).toEqual([]);
    expect(await trail("ap-direct", 1)).toEqual(["tool_call memory/delete_entities approval_required"]);
    await s.client.close();
  });

  it("the rule asks only whom it selects: another token of the team calls without a question", async () => {
    const token = await seedTeam("ap-who", config("ap-who", ["token:asked"]));
    const s = await connectAt("ap-who", token);
    const answer = (await s.client.callTool(useDelete("free"))) as Result;
    expect(answer.isError, text(answer)).toBeFalsy();
    expect(await deletions("ap-who")).toEqual(["free"]);
    await s.client.close();
  });
});

describe("approvals in the 2026 era", () => {
  it("asked in an input_required round that the v2 client answers and retries: yes makes the call, no does not", async () => {
    const token = await seedTeam("ap-modern", config("ap-modern"));
    const client = await modernClient("ap-modern", token, { elicitation: { form: {} } });
    const { asked, answer } = answerer();
    client.setRequestHandler("elicitation/create", answer);
    const yes = (await client.callTool(useDelete("kept"))) as Result;
    expect(yes.isError, text(yes)).toBeFalsy();
    const no = (await client.callTool(useDelete("refused"))) as Result;
    expect(errorKindOf(no)?.kind).toBe("approval_refused");
    expect(asked).toEqual([question("kept"), question("refused")]);
    expect(await deletions("ap-modern")).toEqual(["kept"]);
    expect(await trail("ap-modern", 3)).toEqual([
      "approval memory/delete_entities ok",
      "tool_call memory/delete_entities ok",
      "approval memory/delete_entities approval_refused",
    ]);
    await client.close();
  });

  it("a request that declares no elicitation gets approval_required; nothing is parked or called", async () => {
    const token = await addToken("ap-modern");
    const client = await modernClient("ap-modern", token, {});
    const answer = (await client.callTool(useDelete("never"))) as Result;
    expect(errorKindOf(answer)?.kind).toBe("approval_required");
    expect(await deletions("ap-modern")).toEqual(["kept"]);
    await client.close();
  });
});
