// The direct view through the real Worker and session object: chosen by ?view= or by the token, every allowed tool
// first-class under a host-safe name, paged, with _meta hints; calls go the way use_tool's do.
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { HOST_SAFE_NAME } from "../../src/catalog/direct-names.ts";
import { errorKindOf } from "../../src/lib/errors.ts";
import { BASE, adminFetch, connectAt, initializeBody, post, releaseGate, replayStats, replayUrl, seedTeam, text, waitFor, workerFetch } from "./helpers.ts";

/** Every page of tools/list, with the cursors that led to them. */
async function allTools(client: Client): Promise<{ tools: Tool[]; pages: number }> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { tools, pages };
}

const names = (tools: Tool[]) => tools.map((t) => t.name);
const META_TOOLS = ["discover_tool", "use_tool"];

describe("choosing the view", () => {
  it("gives the direct view for ?view=direct and the meta-tools without it or with ?view=meta", async () => {
    const token = await seedTeam("dv-choose", { mcp: { memory: { url: replayUrl("memory") } } });
    const direct = await connectAt("dv-choose", token, "?view=direct");
    const listed = names((await direct.client.listTools()).tools);
    expect(listed).toContain("memory__read_graph");
    expect(listed.some((n) => META_TOOLS.includes(n))).toBe(false);
    await direct.client.close();
    for (const query of ["", "?view=meta"]) {
      const meta = await connectAt("dv-choose", token, query);
      expect(names((await meta.client.listTools()).tools)).toEqual(META_TOOLS);
      await meta.client.close();
    }
  });

  it("takes a token's view setting when the URL names none; the URL wins over it", async () => {
    await seedTeam("dv-token", { mcp: { memory: { url: replayUrl("memory") } } });
    const minted = await adminFetch("POST", "/teams/dv-token/tokens", { label: "claude code", view: "direct" });
    expect(minted.status).toBe(201);
    const { token, id, view } = (await minted.json()) as { token: string; id: string; view: string };
    expect(view).toBe("direct");
    const listing = (await (await adminFetch("GET", "/teams/dv-token/tokens")).json()) as { tokens: Array<{ id: string; view?: string }> };
    expect(listing.tokens.find((t) => t.id === id)?.view).toBe("direct");

    const byToken = await connectAt("dv-token", token);
    expect(names((await byToken.client.listTools()).tools)).toContain("memory__read_graph");
    await byToken.client.close();
    const byUrl = await connectAt("dv-token", token, "?view=meta");
    expect(names((await byUrl.client.listTools()).tools)).toEqual(META_TOOLS);
    await byUrl.client.close();

    const bad = await adminFetch("POST", "/teams/dv-token/tokens", { view: "everything" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('use \\"meta\\"');
  });

  it("refuses an unknown view with a 400 that names the views, before any session starts", async () => {
    const token = await seedTeam("dv-bad", { mcp: { memory: { url: replayUrl("memory") } } });
    const auth = { authorization: `Bearer ${token}` };
    for (const query of ["?view=canvas", "?view=", "?view=direct&view=meta"]) {
      const res = await workerFetch(`${BASE}/t/dv-bad/mcp${query}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth },
        body: JSON.stringify(initializeBody),
      });
      expect(res.status, query).toBe(400);
      expect(res.headers.get("mcp-session-id")).toBeNull();
      const body = (await res.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(-32000);
      expect(body.error.message).toMatch(query.includes("&") ? /once/ : /unknown view .*"meta".*"direct".*"code"/);
    }
  });

  it("keeps the view the session started with: another ?view= later is a 400, none keeps the session's", async () => {
    const token = await seedTeam("dv-fixed", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client, sessionId } = await connectAt("dv-fixed", token, "?view=direct");
    await client.listTools();
    const headers = { authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const list = { jsonrpc: "2.0", id: 9, method: "tools/list" };
    const other = await workerFetch(`${BASE}/t/dv-fixed/mcp?view=meta`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(list),
    });
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: { message: string } }).error.message).toBe(
      "This session was started with ?view=direct; start a new session to use ?view=meta.",
    );
    // Without a view in the URL the request is the session's as ever: still the direct view.
    const plain = await post("dv-fixed", list, headers);
    expect(plain.status).toBe(200);
    expect(await plain.text()).toContain("memory__read_graph");
    await client.close();
  });
});

describe("the direct listing", () => {
  it("names every tool host-safely, uniquely and the same in every session, with the full upstream definition", async () => {
    const token = await seedTeam("dv-names", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const first = await connectAt("dv-names", token, "?view=direct");
    const { tools } = await allTools(first.client);
    const second = await connectAt("dv-names", token, "?view=direct");
    expect(names((await allTools(second.client)).tools)).toEqual(names(tools));
    for (const tool of tools) expect(tool.name).toMatch(HOST_SAFE_NAME);
    expect(new Set(names(tools)).size).toBe(tools.length);
    expect(names(tools)).toEqual([...names(tools)].sort());

    // The definition is the upstream's, as discover_tool gives it, under the new name.
    const sum = tools.find((t) => t.name === "everything__get-sum")!;
    const details = await first.client.callTool({ name: "everything__get-sum", arguments: { a: 1, b: 2 } });
    expect(text(details)).toContain("3");
    const meta = await connectAt("dv-names", token);
    const discovered = (await meta.client.callTool({ name: "discover_tool", arguments: { tool_name: "everything/get-sum" } })).structuredContent as Record<string, unknown>;
    expect(sum.inputSchema).toEqual(discovered.inputSchema);
    expect(sum.description).toBe(discovered.description);
    expect(sum._meta?.["anthropic/searchHint"]).toBe("everything Returns the sum of two numbers");
    await Promise.all([first.client.close(), second.client.close(), meta.client.close()]);
  });

  it("pages 100 tools at a time, every tool exactly once; a bad cursor is -32602", async () => {
    const token = await seedTeam("dv-pages", { mcp: { gitlab: { url: replayUrl("gitlab") }, memory: { url: replayUrl("memory") } } });
    const { client } = await connectAt("dv-pages", token, "?view=direct");
    const first = await client.listTools();
    expect(first.tools).toHaveLength(100);
    expect(first.nextCursor).toBeTypeOf("string");
    const { tools, pages } = await allTools(client);
    expect(pages).toBe(2);
    // gitlab's 118 and memory's 9: each once.
    expect(tools).toHaveLength(127);
    expect(new Set(names(tools)).size).toBe(127);
    expect(tools.filter((t) => t.name.startsWith("memory__"))).toHaveLength(9);
    await expect(client.listTools({ cursor: "not-a-cursor" })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it("marks promoted tools anthropic/alwaysLoad and no other; an upstream cannot mark itself", async () => {
    const token = await seedTeam("dv-promote", { promote: ["memory/read_graph"], mcp: { memory: { url: replayUrl("memory") } } });
    const { client } = await connectAt("dv-promote", token, "?view=direct");
    const { tools } = await allTools(client);
    const always = tools.filter((t) => t._meta?.["anthropic/alwaysLoad"] === true);
    expect(names(always)).toEqual(["memory__read_graph"]);
    expect(tools.every((t) => typeof t._meta?.["anthropic/searchHint"] === "string")).toBe(true);
    await client.close();
  });

  it("applies the config's filters: a denied tool is neither listed nor callable", async () => {
    const token = await seedTeam("dv-filter", { mcp: { memory: { url: replayUrl("memory"), tools: { deny: ["delete_*"] } } } });
    const { client } = await connectAt("dv-filter", token, "?view=direct");
    const listed = names((await allTools(client)).tools);
    expect(listed).toHaveLength(6);
    expect(listed.some((n) => n.includes("delete"))).toBe(false);
    const denied = await client.callTool({ name: "memory__delete_entities", arguments: { entityNames: ["x"] } });
    expect(denied.isError).toBe(true);
    expect(errorKindOf(denied)).toEqual({ kind: "unknown_tool" });
    expect(text(denied)).toMatch(/^Unknown tool: "memory__delete_entities"\. Available tools \(closest first\): memory__/);
    await client.close();
  });

  it("loads lazy servers for the session: their tools are listed at once, and there is no load_mcp", async () => {
    const token = await seedTeam("dv-lazy", {
      mcp: { memory: { url: replayUrl("memory") }, graph: { url: replayUrl("direct-lazy"), description: "Knowledge graph memory." } },
    });
    const { client } = await connectAt("dv-lazy", token, "?view=direct");
    const listed = names((await allTools(client)).tools);
    expect(listed).toContain("graph__read_graph");
    expect(listed).not.toContain("load_mcp");
    expect((await replayStats("direct-lazy")).methods.initialize).toBe(1);
    // A raw request: the replayed answer has no structuredContent, which the client would hold against the output schema.
    const graph = await client.request({ method: "tools/call", params: { name: "graph__read_graph", arguments: {} } }, CallToolResultSchema);
    expect(text(graph)).toBe('{"tool":"read_graph","arguments":{}}');
    // Listing again loads nothing again.
    await client.listTools();
    expect((await replayStats("direct-lazy")).methods.initialize).toBe(1);
    await client.close();

    // A host that calls a lazy server's tool before listing (a name kept from an earlier session) loads it then.
    const again = await connectAt("dv-lazy", token, "?view=direct");
    const called = await again.client.request({ method: "tools/call", params: { name: "graph__read_graph", arguments: {} } }, CallToolResultSchema);
    expect(called.isError).toBeFalsy();
    expect((await replayStats("direct-lazy")).methods.initialize).toBe(2);
    await again.client.close();
  });
});

describe("calling by the direct name", () => {
  it("answers exactly what use_tool answers for the same tool and arguments", async () => {
    const token = await seedTeam("dv-call", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const direct = await connectAt("dv-call", token, "?view=direct");
    const meta = await connectAt("dv-call", token);
    const args = { a: 2, b: 3 };
    const byName = await direct.client.callTool({ name: "everything__get-sum", arguments: args });
    const byUse = await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: args } });
    expect(byName).toEqual(byUse);
    expect(text(byName)).toBe("The sum of 2 and 3 is 5.");
    // A registry name is no direct name: an isError answer with the closest direct names.
    const unknown = await direct.client.callTool({ name: "everything/get-sum", arguments: args });
    expect(unknown.isError).toBe(true);
    expect(errorKindOf(unknown)).toEqual({ kind: "unknown_tool" });
    expect(text(unknown)).toContain("closest first): everything__get-sum");
    await Promise.all([direct.client.close(), meta.client.close()]);
  });

  it("passes a progress token upstream and brings the upstream's progress back under it, as use_tool does", async () => {
    const token = await seedTeam("dv-progress", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connectAt("dv-progress", token, "?view=direct");
    const seen: number[] = [];
    const result = await client.callTool({ name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it("in single-MCP mode keeps the upstream's names", async () => {
    const token = await seedTeam("dv-single", { url: env.EVERYTHING_URL });
    const { client } = await connectAt("dv-single", token, "?view=direct");
    const listed = names((await allTools(client)).tools);
    expect(listed).toContain("get-sum");
    expect(listed).toContain("echo");
    expect(text(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe("Echo: hi");
    await client.close();
  });
});

describe("list changes", () => {
  it("announces tools/list_changed when an upstream connects after the list was given", async () => {
    const token = await seedTeam("dv-late", { mcp: { memory: { url: replayUrl("memory") }, late: { url: replayUrl("direct-late") } } });
    const { client } = await connectAt("dv-late", token, "?view=direct");
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    // The first list waits 5 s for the held upstream, then is given without it.
    const before = names((await allTools(client)).tools);
    expect(before).toContain("memory__read_graph");
    expect(before.some((n) => n.startsWith("late__"))).toBe(false);
    expect(await releaseGate("direct-late")).toBe(1);
    expect(await waitFor(async () => changed > 0, { tries: 250, ms: 40 })).toBe(true);
    expect(names((await allTools(client)).tools)).toContain("late__read_graph");
    await client.close();
  });

  it("announces a lazy server that finishes loading after the list was given", async () => {
    const token = await seedTeam("dv-lazy-late", {
      mcp: { memory: { url: replayUrl("memory") }, slow: { url: replayUrl("direct-lazy-late"), description: "A slow knowledge graph." } },
    });
    const { client } = await connectAt("dv-lazy-late", token, "?view=direct");
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    const before = names((await allTools(client)).tools);
    expect(before.some((n) => n.startsWith("slow__"))).toBe(false);
    expect(changed).toBe(0);
    expect(await releaseGate("direct-lazy-late")).toBe(1);
    expect(await waitFor(async () => changed > 0, { tries: 250, ms: 40 })).toBe(true);
    expect(names((await allTools(client)).tools)).toContain("slow__read_graph");
    await client.close();
  });
});
