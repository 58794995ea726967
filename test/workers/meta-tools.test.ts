// discover_tool and use_tool through the real Worker and session object, against real upstreams on loopback.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { connect, discoverDescription, replayStats, replayUrl, seedTeam, text } from "./helpers.ts";

describe("config-file mode", () => {
  it("lists the everything upstream's tools in discover_tool's description, namespaced", async () => {
    const token = await seedTeam("alpha", { mcp: { everything: { transport: "http", url: env.EVERYTHING_URL } } });
    const { client } = await connect("alpha", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool"]);
    const description = tools[0]!.description!;
    expect(description).toMatch(/^Returns the full description and input schema of a tool listed below; call it before use_tool\. With query instead of tool_name, finds tools\.\nTool names are server\/tool\.\n\n<tools>\n/);
    expect(description).toContain("<tools>\neverything:\n- echo: Echoes back the input string\n");
    expect(description).toContain("- get-sum: Returns the sum of two numbers\n");
    // The meta-tools' own text, as lean as every session needs it.
    expect(tools[0]!.inputSchema).toEqual({
      type: "object",
      properties: {
        tool_name: { type: "string" },
        query: { type: "string", maxLength: 1000, description: 'Action, object and product in your words ("refund a stripe charge"), not a tool name.' },
        server: { type: "string" },
        limit: { type: "integer", minimum: 1, maximum: 25 },
      },
    });
    expect(tools[1]).toEqual({
      name: "use_tool",
      description: "Calls a tool listed by discover_tool.",
      inputSchema: {
        type: "object",
        properties: { tool_name: { type: "string" }, tool_input: { type: "object", description: "The tool's arguments" } },
        required: ["tool_name"],
      },
    });
    await client.close();
  });

  it("searches every loaded tool with query: best matches first, a server filter, a limit, and clear errors", async () => {
    const token = await seedTeam("seeker", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("seeker", token);
    const search = (args: Record<string, unknown>) => client.callTool({ name: "discover_tool", arguments: args });
    const found = await search({ query: "wipe the relations I recorded" });
    expect(found.isError).toBeFalsy();
    const hits = (found.structuredContent as { tools: Array<{ name: string; server: string; score: number }> }).tools;
    expect(hits[0]!.name).toBe("memory/delete_relations");
    expect(hits.length).toBeLessThanOrEqual(8);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    expect(text(found).split("\n")[0]).toMatch(/^- memory\/delete_relations: /);
    // The same state answers the same bytes.
    expect(text(await search({ query: "wipe the relations I recorded" }))).toBe(text(found));

    const adding = await search({ query: "add two numbers", server: "everything", limit: 2 });
    const added = (adding.structuredContent as { tools: Array<{ name: string; server: string }> }).tools;
    expect(added.length).toBeLessThanOrEqual(2);
    expect(added.every((h) => h.server === "everything")).toBe(true);
    expect(added[0]!.name).toBe("everything/get-sum");

    const none = await search({ query: "zzzqqq" });
    expect(none.isError).toBeFalsy();
    expect(text(none)).toBe('No loaded tool does what "zzzqqq" asks.');
    expect(none.structuredContent).toEqual({ query: "zzzqqq", tools: [], useful: false, closest: [] });
    const wrongServer = await search({ query: "graph", server: "nowhere" });
    expect(wrongServer.isError).toBe(true);
    expect(text(wrongServer)).toContain('No loaded server is named "nowhere"; loaded: memory, everything.');
    for (const bad of [{ tool_name: "memory/read_graph", query: "graph" }, {}, { query: "graph", limit: 26 }, { query: "x".repeat(1001) }]) {
      const refused = await search(bad);
      expect(refused.isError).toBe(true);
      expect(errorKindOf(refused)).toEqual({ kind: "invalid_arguments" });
    }
    await client.close();
  });

  it("exposes promoted tools first-class, whole, and calls them by their own names; an unknown name is left out", async () => {
    const token = await seedTeam("promoter", { promote: ["everything/get-sum", "everything/no-such-tool", "use_tool"], mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("promoter", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "everything/get-sum"]);
    const sum = tools[2]!;
    expect(sum.description).toContain("sum of two numbers");
    expect(Object.keys((sum.inputSchema as { properties: Record<string, unknown> }).properties).sort()).toEqual(["a", "b"]);
    const direct = await client.callTool({ name: "everything/get-sum", arguments: { a: 2, b: 3 } });
    expect(direct.isError).toBeFalsy();
    expect(text(direct)).toContain("5");
    // The same tool through use_tool answers the same, and a name that is not promoted is still unknown.
    expect(text(await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 2, b: 3 } } }))).toBe(text(direct));
    const other = await client.callTool({ name: "everything/echo", arguments: { message: "x" } });
    expect(other.isError).toBe(true);
    expect(errorKindOf(other)).toEqual({ kind: "unknown_tool" });
    await client.close();
  });

  it("discovers a tool's full schema and calls it through use_tool", async () => {
    const token = await seedTeam("beta", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("beta", token);
    const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: "everything/get-sum" } });
    expect(found.isError).toBeFalsy();
    expect(text(found)).toContain("Tool: everything/get-sum");
    const structured = found.structuredContent as { name: string; inputSchema: { properties: Record<string, unknown> } };
    expect(structured.name).toBe("everything/get-sum");
    expect(Object.keys(structured.inputSchema.properties).sort()).toEqual(["a", "b"]);

    const sum = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 2, b: 40 } } });
    expect(sum.isError).toBeFalsy();
    expect(text(sum)).toContain("42");
    await client.close();
  });

  it("passes structuredContent and isError of the upstream through unchanged", async () => {
    // Arguments go unchecked here, so that the upstream itself answers the wrong ones with its isError result.
    const token = await seedTeam("gamma", { mcp: { everything: { url: env.EVERYTHING_URL, validate_arguments: false } } });
    const { client } = await connect("gamma", token);
    const structured = await client.callTool({
      name: "use_tool",
      arguments: { tool_name: "everything/get-structured-content", tool_input: { location: "New York" } },
    });
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
    const invalid = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: "x" } } });
    expect(invalid.isError).toBe(true);
    // The upstream's own isError result: no kind of the proxy's is added.
    expect(errorKindOf(invalid)).toBeUndefined();
    await client.close();
  });

  it("keeps tools of two upstreams with the same names apart by their namespace", async () => {
    const token = await seedTeam("twins", {
      mcp: { one: { url: replayUrl("memory") }, two: { url: replayUrl("memory") } },
    });
    const { client } = await connect("twins", token);
    const description = await discoverDescription(client);
    expect(description).toContain("one:\n- add_observations:");
    expect(description).toContain("two:\n- add_observations:");
    const r = await client.callTool({ name: "use_tool", arguments: { tool_name: "two/read_graph", tool_input: {} } });
    expect(JSON.parse(text(r))).toEqual({ tool: "read_graph", arguments: {} });
    await client.close();
  });

  it("answers an unknown tool name with isError and the closest names first", async () => {
    const token = await seedTeam("delta", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("delta", token);
    for (const tool of ["discover_tool", "use_tool"]) {
      const r = await client.callTool({ name: tool, arguments: { tool_name: "everything/get-summ" } });
      expect(r.isError).toBe(true);
      expect(errorKindOf(r)).toEqual({ kind: "unknown_tool" });
      expect(text(r)).toMatch(/^Unknown tool: "everything\/get-summ"\. Available tools \(closest first\): everything\/get-sum, /);
    }
    await client.close();
  });

  it("explains bad meta-tool arguments and defaults tool_input to {}", async () => {
    const token = await seedTeam("epsilon", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client } = await connect("epsilon", token);
    const bad = await client.callTool({ name: "use_tool", arguments: { tool_name: 7 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("tool_name");
    expect(errorKindOf(bad)).toEqual({ kind: "invalid_arguments" });
    const ok = await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(JSON.parse(text(ok))).toEqual({ tool: "read_graph", arguments: {} });
    await client.close();
  });

  it("follows tools/list cursors to the end", async () => {
    // A budget the whole catalog fits in, so every tool read across the pages shows with its line.
    const token = await seedTeam("paged", { catalog_budget: 200_000, mcp: { gitlab: { url: replayUrl("gitlab") } } });
    const { client } = await connect("paged", token);
    const description = await discoverDescription(client);
    expect(description.split("\n").filter((l) => l.startsWith("- ")).length).toBe(118);
    expect((await replayStats("gitlab")).methods["tools/list"]).toBeGreaterThanOrEqual(3);
    await client.close();
  });
});

describe("single-MCP mode", () => {
  it("lists bare tool names in a flat list and calls them by their bare names", async () => {
    const token = await seedTeam("solo", { transport: "streamable-http", url: env.EVERYTHING_URL });
    const { client } = await connect("solo", token);
    const description = await discoverDescription(client);
    expect(description).toContain("<tools>\n- echo: Echoes back the input string\n");
    expect(description).not.toContain("everything:");
    expect(description).not.toContain("server/tool");
    const r = await client.callTool({ name: "use_tool", arguments: { tool_name: "echo", tool_input: { message: "hi" } } });
    expect(text(r)).toContain("hi");
    const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: "echo" } });
    expect(text(found)).toMatch(/^Tool: echo\n/);
    await client.close();
  });
});

describe("upstreams that fail", () => {
  it("serves healthy upstreams and names the failed ones with a reason", async () => {
    const token = await seedTeam("mixed", {
      mcp: {
        memory: { url: replayUrl("memory") },
        dead: { url: env.DEAD_URL },
        broken: { url: replayUrl("fail-init") },
        nocatalog: { url: replayUrl("fail-tools") },
        locked: { url: replayUrl("unauthorized") },
      },
    });
    const { client } = await connect("mixed", token);
    const description = await discoverDescription(client);
    expect(description).toContain("memory:\n- add_observations:");
    expect(description).toMatch(/\ndead: unavailable — unreachable/);
    expect(description).toContain("broken: unavailable — error: database is down");
    expect(description).toContain("nocatalog: unavailable — error: catalog exploded");
    expect(description).toContain("locked: unavailable — HTTP 401");
    expect(description).not.toContain(env.DEAD_URL);
    expect(description).not.toContain(env.REPLAY_BASE);
    const r = await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(r.isError).toBeFalsy();
    const down = await client.callTool({ name: "use_tool", arguments: { tool_name: "dead/anything" } });
    expect(down.isError).toBe(true);
    expect(errorKindOf(down)).toEqual({ kind: "unavailable", upstream: "dead" });
    await client.close();
  });

  it("keeps the tools of an upstream whose resources or prompts lists fail or answer -32601", async () => {
    const token = await seedTeam("untidy", {
      mcp: { postgres: { url: replayUrl("postgres") }, kubernetes: { url: replayUrl("kubernetes") } },
    });
    const { client } = await connect("untidy", token);
    const description = await discoverDescription(client);
    expect(description).toContain("postgres:\n- query: Run a read-only SQL query");
    expect(description).toContain("kubernetes:\n");
    expect((await replayStats("postgres")).methods["resources/list"]).toBeGreaterThanOrEqual(1);
    await client.close();
  });

  it("ends a call that exceeds the entry's timeout with an isError result, and the session stays usable", async () => {
    const token = await seedTeam("slowpoke", {
      mcp: { hang: { url: replayUrl("hang"), timeout: 300 }, memory: { url: replayUrl("memory") } },
    });
    const { client } = await connect("slowpoke", token);
    const r = await client.callTool({ name: "use_tool", arguments: { tool_name: "hang/read_graph" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("did not answer within 300 ms");
    expect(errorKindOf(r)).toEqual({ kind: "timeout", upstream: "hang" });
    const ok = await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    expect(ok.isError).toBeFalsy();
    await client.close();
  });

  it("does not connect lazy upstreams (entries with a description)", async () => {
    const before = (await replayStats("lazy")).requests;
    const token = await seedTeam("lazyteam", {
      mcp: { memory: { url: replayUrl("memory") }, later: { url: replayUrl("lazy"), description: "A knowledge graph, load it to remember things." } },
    });
    const { client } = await connect("lazyteam", token);
    const description = await discoverDescription(client);
    expect(description).toContain("memory:");
    await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    expect((await replayStats("lazy")).requests).toBe(before);
    await client.close();
  });
});
