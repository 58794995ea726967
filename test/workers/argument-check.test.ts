// Arguments checked before they leave, through the real Worker against a replayed GitHub server (its recorded tools
// forbid fields they do not name): a call whose arguments its tool's inputSchema refuses is answered invalid_arguments,
// naming each field and the shape expected and never a value, and the upstream is sent nothing; in the meta view
// (use_tool, a promoted tool), the direct view, a code-view program, and the 2026 era. Valid calls still go; a team
// that turns the check off for an upstream sends its calls as they come; a schema that is no JSON Schema is not
// checked; the audit trail records the refusal.
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import type { AuditEntry } from "../../src/views/audit-entry.ts";
import { modernClient } from "./dashboard-helpers.ts";
import { adminFetch, connectAt, replayStats, replayUrl, seedTeam, text, waitFor, type Connected } from "./helpers.ts";

/** A value only the arguments carry: no answer may show it. */
const CANARY = "wombatcanary";

const call = (s: Connected, name: string, args: Record<string, unknown>) =>
  s.client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema) as Promise<CallToolResult>;
const useTool = (s: Connected, tool: string, input: Record<string, unknown>) => call(s, "use_tool", { tool_name: tool, tool_input: input });
const upstreamCalls = async (route: string) => (await replayStats(route)).calls.map((c) => c.name);

/** The wrong calls every view is tried with, and the line each answer must carry. */
const WRONG: Array<[string, Record<string, unknown>, string[]]> = [
  ["get_file_contents", { repository: `acme/${CANARY}`, path: "README.md" }, ["owner: required (string)", "repo: required (string)", "repository: not allowed (the tool takes owner, repo, path, branch)"]],
  ["list_issues", { owner: "acme", repo: "web", per_page: `${CANARY}` }, ["per_page: expected number, got string"]],
  ["list_issues", { owner: "acme", repo: "web", state: CANARY }, ['state: expected one of "open", "closed", "all"']],
  [
    "create_pull_request_review",
    { owner: "acme", repo: "web", pull_number: 1, body: "ok", event: "COMMENT", comments: [{ path: "a.ts", body: CANARY }] },
    ["comments[0]: expected object (path, position, body) | object (path, line, body), got object"],
  ],
];

/** Each wrong call refused with its lines, no value shown. */
function expectRefused(answer: CallToolResult, tool: string, lines: string[]): void {
  expect(answer.isError, text(answer)).toBe(true);
  expect(errorKindOf(answer)?.kind).toBe("invalid_arguments");
  expect(text(answer)).toMatch(new RegExp(`^Invalid arguments for ${tool.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(not sent to the server\\): `));
  for (const line of lines) expect(text(answer)).toContain(line);
  expect(JSON.stringify(answer)).not.toContain(CANARY);
}

describe("arguments checked before they leave, 2025 sessions", () => {
  it("meta view: use_tool and a promoted tool refuse what the schema refuses and send nothing; valid calls go; the trail says invalid_arguments", async () => {
    const token = await seedTeam("args-meta", { promote: ["github/list_issues"], mcp: { github: { url: replayUrl("args-meta") } } });
    const s = await connectAt("args-meta", token);
    for (const [tool, input, lines] of WRONG) expectRefused(await useTool(s, `github/${tool}`, input), `github/${tool}`, lines);
    expectRefused(await call(s, "github/list_issues", { owner: "acme" }), "github/list_issues", ["repo: required (string)"]);
    expect(await upstreamCalls("args-meta")).toEqual([]);

    const fine = await useTool(s, "github/get_file_contents", { owner: "acme", repo: "web", path: "README.md" });
    expect(fine.isError, text(fine)).toBeFalsy();
    const promoted = await call(s, "github/list_issues", { owner: "acme", repo: "web", state: "open", labels: ["bug"] });
    expect(promoted.isError, text(promoted)).toBeFalsy();
    expect(await upstreamCalls("args-meta")).toEqual(["get_file_contents", "list_issues"]);

    let entries: AuditEntry[] = [];
    const read = async () => (entries = ((await (await adminFetch("GET", "/teams/args-meta/audit?limit=100")).json()) as { entries: AuditEntry[] }).entries);
    expect(await waitFor(async () => (await read()).length >= WRONG.length + 3, { tries: 100, ms: 30 })).toBe(true);
    const outcomes = entries.map((e) => `${e.tool} ${e.outcome}`).reverse();
    expect(outcomes.slice(0, 2)).toEqual(["github/get_file_contents invalid_arguments", "github/list_issues invalid_arguments"]);
    expect(outcomes.slice(-2)).toEqual(["github/get_file_contents ok", "github/list_issues ok"]);
    expect(JSON.stringify(entries)).not.toContain(CANARY);
    await s.client.close();
  });

  it("direct view: a tool called by its own name is refused the same way", async () => {
    const token = await seedTeam("args-direct", { mcp: { github: { url: replayUrl("args-direct") } } });
    const s = await connectAt("args-direct", token, "?view=direct");
    for (const [tool, input, lines] of WRONG) expectRefused(await call(s, `github__${tool}`, input), `github__${tool}`, lines);
    expect(await upstreamCalls("args-direct")).toEqual([]);
    const fine = await call(s, "github__search_repositories", { query: "proxy", perPage: 5 });
    expect(fine.isError, text(fine)).toBeFalsy();
    expect(await upstreamCalls("args-direct")).toEqual(["search_repositories"]);
    await s.client.close();
  });

  it("a code-view program's call is refused as its error before anyone is asked about it, and nothing is sent", async () => {
    // The tool needs the user's consent for each call: arguments it would refuse are the program's error first.
    const token = await seedTeam("args-code", { approve: ["github/get_file_contents"], mcp: { github: { url: replayUrl("args-code") } } });
    const s = await connectAt("args-code", token, "?view=code");
    const refused = await call(s, "execute", { code: `return await github.get_file_contents({ repository: "${CANARY}", path: "x" });` });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("owner: required (string)");
    expect(text(refused)).toContain("repository: not allowed");
    expect(text(refused)).not.toMatch(/consent|approv/i);
    expect(await upstreamCalls("args-code")).toEqual([]);
    const fine = await call(s, "execute", { code: 'return (await github.list_issues({ owner: "acme", repo: "web" })).tool;' });
    expect(fine.isError, text(fine)).toBeFalsy();
    expect(await upstreamCalls("args-code")).toEqual(["list_issues"]);
    await s.client.close();
  });

  it("validate_arguments: false sends the upstream's calls as they come", async () => {
    const token = await seedTeam("args-off", { mcp: { github: { url: replayUrl("args-off"), validate_arguments: false } } });
    const s = await connectAt("args-off", token);
    const sent = await useTool(s, "github/get_file_contents", { repository: "acme/web" });
    expect(errorKindOf(sent)?.kind).not.toBe("invalid_arguments");
    expect((await replayStats("args-off")).calls).toEqual([{ name: "get_file_contents", arguments: { repository: "acme/web" } }]);
    await s.client.close();
  });

  it("a tool whose schema is no JSON Schema is not checked: its calls go as they did", async () => {
    const token = await seedTeam("args-unsound", { mcp: { loose: { url: replayUrl("args-unsound") } } });
    const s = await connectAt("args-unsound", token);
    const sent = await useTool(s, "loose/loose", { q: "anything" });
    expect(sent.isError, text(sent)).toBeFalsy();
    expect(await upstreamCalls("args-unsound")).toEqual(["loose"]);
    await s.client.close();
  });
});

describe("arguments checked before they leave, the 2026 era", () => {
  it("meta and code views refuse what the schema refuses and send nothing; a valid call goes", async () => {
    const token = await seedTeam("args-modern", { mcp: { github: { url: replayUrl("args-modern") } } });
    const client = await modernClient("args-modern", token);
    for (const [tool, input, lines] of WRONG) {
      const answer = (await client.callTool({ name: "use_tool", arguments: { tool_name: `github/${tool}`, tool_input: input } })) as CallToolResult;
      expectRefused(answer, `github/${tool}`, lines);
    }
    expect(await upstreamCalls("args-modern")).toEqual([]);
    const fine = (await client.callTool({ name: "use_tool", arguments: { tool_name: "github/list_issues", tool_input: { owner: "acme", repo: "web" } } })) as CallToolResult;
    expect(fine.isError, text(fine)).toBeFalsy();
    expect(await upstreamCalls("args-modern")).toEqual(["list_issues"]);
    await client.close();

    const codeToken = await seedTeam("args-modern", { view: "code", mcp: { github: { url: replayUrl("args-modern") } } });
    const code = await modernClient("args-modern", codeToken);
    const refused = (await code.callTool({ name: "execute", arguments: { code: `return await github.list_issues({ owner: "acme", repo: "${CANARY}", per_page: "9" });` } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("per_page: expected number, got string");
    expect(JSON.stringify(refused)).not.toContain(CANARY);
    expect(await upstreamCalls("args-modern")).toEqual(["list_issues"]);
    await code.close();
  });
});
