// The direct view as a user gets it: a token minted with the team CLI's --view direct, `wrangler dev` serving, the
// SDK Client listing and calling every tool first-class (a lazy server's too); ?view=meta on the URL wins.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCli } from "../../harness/clients.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
const HOST_SAFE = /^[A-Za-z0-9_-]{1,64}$/;
let stack: DevStack;
let token: string;
const mcpUrl = (query = "") => stack.mcpUrl("direct", query);

beforeAll(async () => {
  stack = await startDevStack({
    name: "direct",
    replay: { lazy: { catalog: loadCorpus("modelcontextprotocol__server-memory") } },
    vars: VARS,
    provision: ({ dir, state, everything, replay }) => {
      provisionTeam(dir, state, "direct", {
        promote: ["everything/echo"],
        mcp: {
          everything: { url: everything.url },
          graph: { url: replay.url("lazy"), description: "A knowledge graph; load it to remember facts." },
        },
      });
      const minted = teamCli(["token", "direct", "--view", "direct", "--label", "claude code", "--persist-to", state]);
      if (minted.status !== 0) throw new Error(`team token failed: ${minted.stderr}`);
      token = minted.stdout.trim().split("\n").at(-1)!;
      expect(teamCli(["tokens", "direct", "--persist-to", state]).stdout).toMatch(/ {2}direct {2}claude code\n/);
    },
  });
});

afterAll(() => stack?.stop());

describe("the direct view through wrangler dev", () => {
  it("lists every tool first-class for a token minted --view direct, and calls one by its direct name", async () => {
    const { client } = await connectClient(mcpUrl(), token);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const names = tools.map((t) => t.name);
    expect(names).toContain("everything__get-sum");
    expect(names).toContain("graph__read_graph");
    expect(names).not.toContain("discover_tool");
    expect(names.every((n) => HOST_SAFE.test(n))).toBe(true);
    expect(tools.find((t) => t.name === "everything__echo")?._meta).toMatchObject({ "anthropic/alwaysLoad": true, "anthropic/searchHint": "everything Echoes back the input string" });
    expect(tools.filter((t) => t._meta?.["anthropic/alwaysLoad"] === true)).toHaveLength(1);

    const sum = await client.callTool({ name: "everything__get-sum", arguments: { a: 20, b: 22 } });
    expect(text(sum)).toBe("The sum of 20 and 22 is 42.");
    expect(stack.replay.stats("lazy").methods.initialize).toBe(1);
    await client.close();
  });

  it("gives the meta-tools when the URL asks for ?view=meta, whatever the token says", async () => {
    const { client } = await connectClient(mcpUrl("?view=meta"), token);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp", "everything/echo"]);
    await client.close();
    const bad = await fetch(mcpUrl("?view=all"), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('unknown view "all"');
  });
});
