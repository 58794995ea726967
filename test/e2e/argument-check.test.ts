// Arguments checked before they leave, as a user meets it under `wrangler dev`: the SDK client in a 2025 session and
// the v2 client in the 2026 era call a replayed GitHub server through use_tool with the arguments an agent guessed
// (`repository` where the tool takes `owner` and `repo`); the answer names the fields, and the server is sent nothing
// until the arguments are right.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
const TEAM = "args";
let stack: DevStack;
let token: string;

beforeAll(async () => {
  stack = await startDevStack({
    name: "args",
    replay: { github: { catalog: loadCorpus("modelcontextprotocol__server-github") } },
    vars: VARS,
    provision: ({ dir, state, replay }) => {
      token = provisionTeam(dir, state, TEAM, { mcp: { github: { url: replay.url("github") } } });
    },
  });
});

afterAll(() => stack?.stop());

const guessed = { tool_name: "github/get_file_contents", tool_input: { repository: "acme/web", path: "README.md" } };
const right = { tool_name: "github/get_file_contents", tool_input: { owner: "acme", repo: "web", path: "README.md" } };
const EXPECTED =
  "Invalid arguments for github/get_file_contents (not sent to the server): owner: required (string); repo: required (string); " +
  "repository: not allowed (the tool takes owner, repo, path, branch).";

describe("arguments checked before they leave, through wrangler dev", () => {
  it("refuses arguments the tool's schema refuses in both eras, naming the fields; the server gets only the right call", async () => {
    const calls = () => stack.replay.stats("github").calls.map((c) => c.name);
    const session = await connectClient(stack.mcpUrl(TEAM), token);
    const refused = await session.client.callTool({ name: "use_tool", arguments: guessed });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(EXPECTED);
    expect((refused._meta as Record<string, { kind: string }>)["dynmcp/error"]!.kind).toBe("invalid_arguments");
    expect(calls()).toEqual([]);

    const transport = new ModernTransport(new URL(stack.mcpUrl(TEAM)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const modern = new ModernClient({ name: "e2e-args", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(transport);
    expect(modern.getProtocolEra()).toBe("modern");
    const refusedModern = await modern.callTool({ name: "use_tool", arguments: guessed });
    expect(refusedModern.isError).toBe(true);
    expect(text(refusedModern)).toBe(EXPECTED);
    expect(calls()).toEqual([]);

    const made = await session.client.callTool({ name: "use_tool", arguments: right });
    expect(made.isError, text(made)).toBeFalsy();
    expect(calls()).toEqual(["get_file_contents"]);
    await modern.close();
    await session.client.close();
  });
});
