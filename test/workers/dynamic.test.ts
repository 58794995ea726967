// Dynamic discovery: lazy upstreams and load_mcp, each semantic with its own test, against counting upstreams.
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, evictDurableObject } from "cloudflare:test";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import { listeningClient } from "../shared/listening-client.ts";
import { BASE, connect, discoverDescription, loadMcp, releaseGate, replayStats, replayUrl, seedTeam, text, workerFetch } from "./helpers.ts";

const GRAPH = "Knowledge graph memory: store entities, relations and observations; load it to remember facts across the conversation.";

const lazyEntry = (route: string, description = GRAPH) => ({ url: replayUrl(route), description });

describe("the catalog in dynamic mode", () => {
  it("lists lazy servers under <mcp_servers> in config order, says how to load them, and offers load_mcp", async () => {
    const token = await seedTeam("dyn-cat", {
      mcp: { zeta: lazyEntry("dyn-quiet", "Zeta does z."), alpha: lazyEntry("dyn-quiet", "Alpha does a.") },
    });
    const { client } = await connect("dyn-cat", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    expect(tools[2]).toEqual({
      name: "load_mcp",
      description: "Loads a server listed under <mcp_servers>; its tools then join discover_tool's list.",
      inputSchema: { type: "object", properties: { mcp_name: { type: "string" } }, required: ["mcp_name"] },
    });
    // How tools are named and called, what discover_tool returns, what <mcp_servers> is and how load_mcp loads one;
    // with nothing loaded the description ends with the lazy servers (no empty <tools> block).
    expect(tools[0]!.description).toBe(
      "Returns the full description and input schema of a tool listed below; call it before use_tool. With query instead of tool_name, finds tools.\nTool names are server/tool.\n\n" +
        "Servers under <mcp_servers> are not loaded yet: load_mcp with a server's name adds its tools to <tools> for the rest of the session.\n\n" +
        "<mcp_servers>\nzeta: Zeta does z.\nalpha: Alpha does a.\n</mcp_servers>",
    );
    await client.close();
  });

  it("has no load_mcp when no entry is lazy", async () => {
    const token = await seedTeam("dyn-none", { mcp: { memory: { url: replayUrl("memory") } } });
    const { client } = await connect("dyn-none", token);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool"]);
    const r = await loadMcp(client, "memory");
    expect(r.isError).toBe(true);
    expect(errorKindOf(r)).toEqual({ kind: "unknown_tool" });
    await client.close();
  });

  it("opens no connection of any kind to a lazy server before load_mcp", async () => {
    const token = await seedTeam("dyn-quiet", { mcp: { eager: { url: replayUrl("memory") }, quiet: lazyEntry("dyn-quiet") } });
    const before = (await replayStats("dyn-quiet")).requests;
    const { client } = await connect("dyn-quiet", token);
    await discoverDescription(client);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "eager/read_graph" } });
    await client.callTool({ name: "discover_tool", arguments: { tool_name: "quiet/read_graph" } });
    expect((await replayStats("dyn-quiet")).requests).toBe(before);
    await client.close();
  });
});

describe("load_mcp", () => {
  it("loads a server: listing, list-changed on the request's stream, tools in <tools>, callable without a re-list", async () => {
    const token = await seedTeam("dyn-flow", {
      mcp: { eager: { url: replayUrl("memory") }, graph: lazyEntry("dyn-flow"), everything: { url: env.EVERYTHING_URL, description: "The MCP reference server: echo, sums, resources and prompts." } },
    });
    const { client } = await connect("dyn-flow", token);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    expect(await discoverDescription(client)).toContain("\ngraph: Knowledge graph memory");
    // A search narrowed to the lazy server before its load names the call that loads it.
    const early = await client.callTool({ name: "discover_tool", arguments: { query: "read the graph", server: "graph" } });
    expect(early.isError).toBe(true);
    expect(text(early)).toBe('The server "graph" is lazy and not loaded yet: call load_mcp {"mcp_name":"graph"}, then search it again.');

    // So does the index of one server asked for before its load; a name that is no server gets the servers there are.
    const index = { name: "discover_tool", arguments: { server: "graph" } };
    expect(text(await client.callTool(index))).toBe(text(early));
    const nowhere = await client.callTool({ name: "discover_tool", arguments: { server: "nowhere" } });
    expect(nowhere.isError).toBe(true);
    expect(text(nowhere)).toBe('No loaded server is named "nowhere"; loaded: eager; not loaded yet: graph, everything.');

    const loaded = await loadMcp(client, "graph");
    expect(loaded.isError).toBeFalsy();
    // The index and counts, not the lists: every tool by its bare name, said once how use_tool calls it.
    const listing = loaded.structuredContent as { mcp_name: string; counts: Record<string, number>; tools: Record<string, string> };
    expect(listing.mcp_name).toBe("graph");
    expect(listing.counts).toEqual({ tools: 9, resources: 1, resource_templates: 0, prompts: 0 });
    expect(listing.tools["read_graph"]).toBe("Read the entire knowledge graph");
    expect(Object.keys(listing.tools)).toHaveLength(9);
    expect(text(loaded)).toContain('Its tools, called with use_tool as "graph/<tool>":\n- add_observations: ');
    expect(text(loaded)).toContain('discover_tool {"server":"graph"} answers this list again');
    // The call it names answers the same tools, now that the server is loaded.
    const again = await client.callTool(index);
    expect(again.isError).toBeFalsy();
    expect(Object.keys((again.structuredContent as { tools: object }).tools)).toEqual(Object.keys(listing.tools));
    expect(text(again)).toContain("- read_graph: Read the entire knowledge graph");
    expect(changed).toBeGreaterThanOrEqual(1);
    expect((await replayStats("dyn-flow")).methods.initialize).toBe(1);

    // Callable at once, whether or not the host re-read the description.
    const used = await client.callTool({ name: "use_tool", arguments: { tool_name: "graph/read_graph" } });
    expect(JSON.parse(text(used))).toEqual({ tool: "read_graph", arguments: {} });
    const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: "graph/read_graph" } });
    expect(text(found)).toContain("Tool: graph/read_graph");

    const description = await discoverDescription(client);
    expect(description).toContain("\ngraph:\n- add_observations:");
    expect(description).toContain("<mcp_servers>\neverything: The MCP reference server");
    expect(description).not.toContain("graph: Knowledge graph memory");

    // A server with resources, templates and prompts: counted, their lists a host's list call away (as the answer says).
    const everything = await loadMcp(client, "everything");
    const counts = (everything.structuredContent as typeof listing).counts;
    expect(counts.resources).toBeGreaterThan(0);
    expect(counts.resource_templates).toBeGreaterThan(0);
    expect(counts.prompts).toBeGreaterThan(0);
    expect(text(everything)).toContain("Its resources and prompts: resources/list, resources/templates/list and prompts/list.");
    const resources = (await client.listResources()).resources.filter((r) => r.uri.startsWith("demo://"));
    expect(resources.length).toBeGreaterThan(0);
    expect((await client.listPrompts()).prompts.filter((p) => p.name.startsWith("everything/"))).toHaveLength(counts.prompts!);
    // Nothing lazy left: the <mcp_servers> block is gone.
    expect(await discoverDescription(client)).not.toContain("<mcp_servers>");
    await client.close();
  });

  it("is idempotent: a loaded or eager server answers its listing and opens nothing new", async () => {
    const token = await seedTeam("dyn-idem", { mcp: { eager: { url: replayUrl("dyn-idem") }, graph: lazyEntry("dyn-idem") } });
    const { client } = await connect("dyn-idem", token);
    await client.listTools();
    expect((await replayStats("dyn-idem")).methods.initialize).toBe(1);
    const first = await loadMcp(client, "graph");
    const again = await loadMcp(client, "graph");
    expect(again.structuredContent).toEqual(first.structuredContent);
    const eager = await loadMcp(client, "eager");
    expect(eager.isError).toBeFalsy();
    expect((eager.structuredContent as { mcp_name: string }).mcp_name).toBe("eager");
    expect((await replayStats("dyn-idem")).methods.initialize).toBe(2);
    await client.close();
  });

  it("connects an eager server that failed at session start again", async () => {
    const token = await seedTeam("dyn-eager", { mcp: { flaky: { url: replayUrl("dyn-eager-flaky") }, lazy: lazyEntry("dyn-quiet") } });
    const { client } = await connect("dyn-eager", token);
    expect(await discoverDescription(client)).toContain("flaky: unavailable — HTTP 503");
    const r = await loadMcp(client, "flaky");
    expect(r.isError).toBeFalsy();
    expect(await discoverDescription(client)).toContain("flaky:\n- add_observations:");
    await client.close();
  });

  it("tries an eager server that is still down once more, within its reconnect budget, and says why it failed", async () => {
    const token = await seedTeam("dyn-eager-down", { mcp: { down: { url: replayUrl("dyn-eager-down") }, lazy: lazyEntry("dyn-quiet") } });
    const { client } = await connect("dyn-eager-down", token);
    expect(await discoverDescription(client)).toContain("down: unavailable — HTTP 503");
    const before = (await replayStats("dyn-eager-down")).methods.initialize ?? 0;
    const r = await loadMcp(client, "down");
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('Failed to load "down": HTTP 503');
    expect(errorKindOf(r)).toEqual({ kind: "load_failed", upstream: "down" });
    expect((await replayStats("dyn-eager-down")).methods.initialize).toBeGreaterThan(before);
    expect(await discoverDescription(client)).toContain("down: unavailable — HTTP 503");
    await client.close();
  });

  it("is atomic on failure: the upstream session is closed, no tool appears, the server stays loadable", async () => {
    const token = await seedTeam("dyn-atomic", { mcp: { broken: lazyEntry("dyn-atomic") } });
    const { client } = await connect("dyn-atomic", token);
    const r = await loadMcp(client, "broken");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('Failed to load "broken" (attempt 1 of 3): "broken" returned an error: catalog exploded');
    expect(errorKindOf(r)).toEqual({ kind: "load_failed", upstream: "broken" });
    const stats = await replayStats("dyn-atomic");
    expect(stats.methods.initialize).toBe(1);
    expect(stats.deletes).toBe(1);
    expect(await discoverDescription(client)).toContain("<mcp_servers>\nbroken:");
    const use = await client.callTool({ name: "use_tool", arguments: { tool_name: "broken/read_graph" } });
    expect(text(use)).toContain('The server "broken" is not loaded yet: call load_mcp');
    expect(errorKindOf(use)).toEqual({ kind: "unknown_tool", upstream: "broken" });
    await client.close();
  });

  it("reports a server that refuses connections, naming it but not its address", async () => {
    const token = await seedTeam("dyn-refused", { mcp: { gone: { url: env.DEAD_URL, description: "Gone." } } });
    const { client } = await connect("dyn-refused", token);
    const r = await loadMcp(client, "gone");
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^Failed to load "gone" \(attempt 1 of 3\): could not reach "gone"/);
    expect(text(r)).not.toContain(env.DEAD_URL);
    expect(text(r)).not.toContain(new URL(env.DEAD_URL).host);
    await client.close();
  });

  it("treats resources, templates and prompts as best-effort: the load succeeds with a note", async () => {
    const token = await seedTeam("dyn-pg", { mcp: { pg: lazyEntry("postgres", "A Postgres database: read-only SQL queries.") } });
    const { client } = await connect("dyn-pg", token);
    const r = await loadMcp(client, "pg");
    expect(r.isError).toBeFalsy();
    const listing = r.structuredContent as { tools: Record<string, string>; counts: Record<string, number>; notes?: string[] };
    expect(listing.tools).toEqual({ query: "Run a read-only SQL query" });
    expect(listing.counts).toEqual({ tools: 1, resources: 0, resource_templates: 0, prompts: 0 });
    expect(listing.notes).toHaveLength(1);
    expect(listing.notes![0]).toMatch(/^resources\/list: .*ECONNREFUSED/);
    await client.close();
  });

  it("shares one attempt among concurrent calls for one server: one initialize, the same listing or error", async () => {
    const token = await seedTeam("dyn-conc", { mcp: { slow: lazyEntry("dyn-slow"), bad: lazyEntry("dyn-slow-fail") } });
    const { client } = await connect("dyn-conc", token);
    const results = await Promise.all(Array.from({ length: 5 }, () => loadMcp(client, "slow")));
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(new Set(results.map((r) => JSON.stringify(r.structuredContent))).size).toBe(1);
    expect((await replayStats("dyn-slow")).methods.initialize).toBe(1);

    const failures = await Promise.all(Array.from({ length: 4 }, () => loadMcp(client, "bad")));
    expect(new Set(failures.map(text)).size).toBe(1);
    expect(text(failures[0]!)).toContain("attempt 1 of 3");
    expect((await replayStats("dyn-slow-fail")).methods).toEqual({ "server/discover": 1, initialize: 1 });
    await client.close();
  });

  it("loads different servers in parallel: one waiting upstream does not hold up another", async () => {
    const token = await seedTeam("dyn-par", { mcp: { gated: lazyEntry("dyn-gate"), open: lazyEntry("dyn-open") } });
    const { client } = await connect("dyn-par", token);
    const gated = loadMcp(client, "gated");
    const open = await loadMcp(client, "open");
    expect(open.isError).toBeFalsy();
    // "gated" is still waiting for its initialize answer while "open" is done.
    expect(await releaseGate("dyn-gate")).toBe(1);
    expect((await gated).isError).toBeFalsy();
    await client.close();
  });

  it("evicts a server after three consecutive failures; later calls call it unknown", async () => {
    const token = await seedTeam("dyn-budget", { mcp: { down: lazyEntry("dyn-budget"), other: lazyEntry("dyn-quiet", "Other.") } });
    const { client, listChanges } = await listeningClient(`${BASE}/t/dyn-budget/mcp`, token, true, workerFetch);
    expect(text(await loadMcp(client, "down"))).toContain("attempt 1 of 3");
    expect(text(await loadMcp(client, "down"))).toContain("attempt 2 of 3");
    const third = await loadMcp(client, "down");
    expect(errorKindOf(third)).toEqual({ kind: "evicted", upstream: "down" });
    expect(text(third)).toMatch(/^Failed to load "down" after 3 attempts; the server will no longer be offered\. Underlying error: "down" returned an error: database is down/);
    // Only the eviction changed the catalog: one tools/list_changed, on that load_mcp's own stream, although the host holds a GET stream.
    expect(await listChanges(1)).toEqual(["post notifications/tools/list_changed"]);
    const fourth = await loadMcp(client, "down");
    expect(text(fourth)).toBe('Unknown MCP server: "down". Available servers to load: other.');
    expect(errorKindOf(fourth)).toEqual({ kind: "unknown_server", upstream: "down" });
    expect(await discoverDescription(client)).not.toContain("\ndown: ");
    expect((await replayStats("dyn-budget")).methods.initialize).toBe(3);
    await client.close();
  });

  it("does not evict a server whose third attempt succeeds", async () => {
    const token = await seedTeam("dyn-flaky", { mcp: { flaky: lazyEntry("dyn-flaky") } });
    const { client } = await connect("dyn-flaky", token);
    expect((await loadMcp(client, "flaky")).isError).toBe(true);
    expect((await loadMcp(client, "flaky")).isError).toBe(true);
    expect((await loadMcp(client, "flaky")).isError).toBeFalsy();
    expect(await discoverDescription(client)).toContain("flaky:\n- add_observations:");
    await client.close();
  });

  it("answers an unknown name with the servers still loadable", async () => {
    const token = await seedTeam("dyn-unknown", { mcp: { a: lazyEntry("dyn-quiet", "A."), b: lazyEntry("dyn-quiet", "B."), e: { url: replayUrl("memory") } } });
    const { client } = await connect("dyn-unknown", token);
    const r = await loadMcp(client, "nope");
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('Unknown MCP server: "nope". Available servers to load: a, b.');
    const bad = await client.callTool({ name: "load_mcp", arguments: {} });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("mcp_name");
    expect(errorKindOf(bad)).toEqual({ kind: "invalid_arguments" });
    await client.close();
  });
});

describe("list_changed: each notification once per host", () => {
  const EVERYTHING = { url: env.EVERYTHING_URL, description: "The MCP reference server: echo, sums, resources and prompts." };

  for (const get of [true, false]) {
    it(`sends each list_changed of a load once, on the load_mcp answer's stream (${get ? "with" : "without"} a GET stream)`, async () => {
      const team = get ? "dyn-once-get" : "dyn-once-post";
      const token = await seedTeam(team, { mcp: { graph: lazyEntry("memory"), everything: EVERYTHING } });
      const { client, listChanges } = await listeningClient(`${BASE}/t/${team}/mcp`, token, get, workerFetch);
      // The memory catalog brings tools and one resource.
      expect((await loadMcp(client, "graph")).isError).toBeFalsy();
      expect(await listChanges(2)).toEqual(["post notifications/tools/list_changed", "post notifications/resources/list_changed"]);
      // server-everything brings tools, resources (and templates) and prompts.
      expect((await loadMcp(client, "everything")).isError).toBeFalsy();
      expect(await listChanges(3)).toEqual([
        "post notifications/tools/list_changed",
        "post notifications/resources/list_changed",
        "post notifications/prompts/list_changed",
      ]);
      // A load that changes nothing says nothing.
      expect((await loadMcp(client, "graph")).isError).toBeFalsy();
      expect(await listChanges(0)).toEqual([]);
      await client.close();
    });
  }

  it("sends a load_mcp of an eager server that failed at start once too, with the GET stream open", async () => {
    const token = await seedTeam("dyn-once-eager", { mcp: { flaky: { url: replayUrl("dyn-once-eager") }, lazy: lazyEntry("dyn-quiet") } });
    const { client, heard, listChanges } = await listeningClient(`${BASE}/t/dyn-once-eager/mcp`, token, true, workerFetch);
    expect(await discoverDescription(client)).toContain("flaky: unavailable — HTTP 503");
    heard.length = 0;
    // The retry behind the load must not announce on the GET stream what the load announces on its own.
    expect((await loadMcp(client, "flaky")).isError).toBeFalsy();
    expect(await listChanges(2)).toEqual(["post notifications/tools/list_changed", "post notifications/resources/list_changed"]);
    await client.close();
  });

  it("tells the host once when an upstream's tools change during a call, with the GET stream open", async () => {
    const token = await seedTeam("dyn-once-grow", { mcp: { grow: { url: replayUrl("dyn-grow") } } });
    const { client, listChanges } = await listeningClient(`${BASE}/t/dyn-once-grow/mcp`, token, true, workerFetch);
    await client.listTools();
    expect((await client.callTool({ name: "use_tool", arguments: { tool_name: "grow/read_graph" } })).isError).toBeFalsy();
    // On the call's stream if it is still open when the catalog has been read again, else on the GET stream: once.
    const changes = await listChanges(1);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatch(/^(get|post) notifications\/tools\/list_changed$/);
    await client.close();
  });
});

describe("durability", () => {
  it("keeps the loaded set, failure counts and evictions across an eviction; reconnects on use, not on list", async () => {
    const token = await seedTeam("dyn-keep", {
      mcp: { kept: lazyEntry("dyn-durable"), failing: lazyEntry("dyn-durable-fail", "Fails."), spare: lazyEntry("dyn-quiet", "Spare.") },
    });
    const first = await connect("dyn-keep", token);
    await loadMcp(first.client, "kept");
    expect(text(await loadMcp(first.client, "failing"))).toContain("attempt 1 of 3");
    expect(text(await loadMcp(first.client, "failing"))).toContain("attempt 2 of 3");
    const description = await discoverDescription(first.client);
    await first.client.close();
    await evictDurableObject(env.SESSIONS.getByName(`dyn-keep/${first.sessionId}`));

    const again = await connect("dyn-keep", token, first.sessionId);
    expect(await discoverDescription(again.client)).toBe(description);
    expect((await replayStats("dyn-durable")).methods.initialize).toBe(1);
    const used = await again.client.callTool({ name: "use_tool", arguments: { tool_name: "kept/read_graph" } });
    expect(used.isError).toBeFalsy();
    expect((await replayStats("dyn-durable")).methods.initialize).toBe(2);
    // The count survived: this third failure evicts.
    expect(text(await loadMcp(again.client, "failing"))).toContain("after 3 attempts");
    await again.client.close();
    await evictDurableObject(env.SESSIONS.getByName(`dyn-keep/${first.sessionId}`));

    const third = await connect("dyn-keep", token, first.sessionId);
    expect(text(await loadMcp(third.client, "failing"))).toContain('Unknown MCP server: "failing"');
    expect(await discoverDescription(third.client)).toContain("<mcp_servers>\nspare: Spare.\n</mcp_servers>");
    await third.client.close();
  });

  it("leaves nothing stuck when the object dies during a load: the next call simply tries again", async () => {
    const token = await seedTeam("dyn-inflight", { mcp: { gated: lazyEntry("dyn-inflight") } });
    const first = await connect("dyn-inflight", token);
    void loadMcp(first.client, "gated").catch(() => undefined);
    // Wait until the load is really in flight: its initialize is being held at the upstream.
    for (let i = 0; i < 100 && !(await replayStats("dyn-inflight")).methods.initialize; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await replayStats("dyn-inflight")).methods.initialize).toBe(1);
    await abortAllDurableObjects();
    await releaseGate("dyn-inflight");
    await first.client.close().catch(() => undefined);

    const again = await connect("dyn-inflight", token, first.sessionId);
    const r = await loadMcp(again.client, "gated");
    expect(r.isError).toBeFalsy();
    expect(await discoverDescription(again.client)).toContain("gated:\n- add_observations:");
    await again.client.close();
  });
});
