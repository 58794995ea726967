// The whole MCP surface through the proxy: resources, prompts, completion, logging, progress, cancellation,
// list changes, server-to-client requests and pagination, against server-everything and replay upstreams.
import { env } from "cloudflare:workers";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Notification,
} from "@modelcontextprotocol/sdk/types.js";
import { Server } from "@modelcontextprotocol/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HostBridge } from "../../src/relay/bridge.ts";
import {
  BASE,
  connect,
  discoverDescription,
  loadMcp,
  replayControl,
  replayStats,
  replayUrl,
  seedTeam,
  text,
  waitFor,
  workerFetch,
  type Connected,
} from "./helpers.ts";

const EVERYTHING_DESCRIPTION = "The MCP reference server: echo, sums, sample resources, templates and prompts.";

/** Waits (bounded, about 8 s) until `check` holds, and fails the test if it never does; the upstream sends some things on a timer. */
async function eventually(check: () => boolean): Promise<void> {
  expect(await waitFor(check, { tries: 160, ms: 50 })).toBe(true);
}

describe("legacy HTTP+SSE upstreams", () => {
  it("serves an sse upstream eagerly and lazily: tools, calls and resources", async () => {
    const token = await seedTeam("fw-sse", {
      mcp: {
        old: { transport: "sse", url: env.EVERYTHING_SSE_URL },
        oldlazy: { transport: "sse", url: env.EVERYTHING_SSE_URL, description: "The reference server over the older SSE transport." },
      },
    });
    const { client } = await connect("fw-sse", token);
    expect(await discoverDescription(client)).toContain("old:\n- echo: Echoes back the input string");
    const echoed = await client.callTool({ name: "use_tool", arguments: { tool_name: "old/echo", tool_input: { message: "over sse" } } });
    expect(text(echoed)).toBe("Echo: over sse");
    const loaded = await loadMcp(client, "oldlazy");
    expect(loaded.isError).toBeFalsy();
    const doc = await client.readResource({ uri: "demo://resource/static/document/features.md" });
    expect(doc.contents.length).toBe(1);
    await client.close();
  });
});

describe("capabilities", () => {
  it("advertises everything it forwards from the first initialize, even before any upstream is loaded", async () => {
    const token = await seedTeam("fw-caps", { mcp: { later: { url: env.EVERYTHING_URL, description: EVERYTHING_DESCRIPTION } } });
    const { client } = await connect("fw-caps", token);
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    });
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    let changed = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changed++;
    });
    await loadMcp(client, "later");
    expect(changed).toBeGreaterThanOrEqual(1);
    expect((await client.listResources()).resources.length).toBe(7);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("later/simple-prompt");
    await client.close();
  });
});

describe("resources", () => {
  it("merges the lists of all loaded upstreams with URIs verbatim and routes reads to the owner", async () => {
    const token = await seedTeam("fw-res", { mcp: { everything: { url: env.EVERYTHING_URL }, graph: { url: replayUrl("fwd-a") } } });
    const { client } = await connect("fw-res", token);
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain("demo://resource/static/document/features.md");
    expect(uris).toContain("memory://knowledge-graph");
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain("demo://resource/dynamic/text/{resourceId}");

    const doc = await client.readResource({ uri: "demo://resource/static/document/features.md" });
    expect(doc.contents[0]!.uri).toBe("demo://resource/static/document/features.md");
    const graph = await client.readResource({ uri: "memory://knowledge-graph" });
    expect(graph.contents[0]).toMatchObject({ text: "replayed memory://knowledge-graph" });
    // Not listed, but it matches a template of everything's.
    const dynamic = await client.readResource({ uri: "demo://resource/dynamic/text/3" });
    expect(dynamic.contents[0]!.uri).toBe("demo://resource/dynamic/text/3");
    await client.close();
  });

  it("gives the first upstream in config order a URI two upstreams claim, and never asks the second", async () => {
    const token = await seedTeam("fw-dup", { mcp: { first: { url: replayUrl("fwd-a") }, second: { url: replayUrl("fwd-b") } } });
    const { client } = await connect("fw-dup", token);
    const { resources } = await client.listResources();
    expect(resources.filter((r) => r.uri === "memory://knowledge-graph")).toHaveLength(1);
    const before = (await replayStats("fwd-b")).methods["resources/read"] ?? 0;
    await client.readResource({ uri: "memory://knowledge-graph" });
    expect((await replayStats("fwd-a")).methods["resources/read"]).toBeGreaterThanOrEqual(1);
    expect((await replayStats("fwd-b")).methods["resources/read"] ?? 0).toBe(before);
    await client.close();
  });

  it("reads a resource once more on a new connection when the answer stream is cut: a read is safe to repeat", async () => {
    const token = await seedTeam("fw-cut", { mcp: { graph: { url: replayUrl("fwd-cut-read") } } });
    const { client } = await connect("fw-cut", token);
    // The eager upstream is connected (its probe and initialize counted) before the count is read.
    await client.listTools();
    const initializes = (await replayStats("fwd-cut-read")).methods.initialize ?? 0;
    const doc = await client.readResource({ uri: "memory://knowledge-graph" });
    expect(doc.contents[0]?.uri).toBe("memory://knowledge-graph");
    const stats = await replayStats("fwd-cut-read");
    expect(stats.methods["resources/read"]).toBe(2);
    expect(stats.methods.initialize).toBe(initializes + 1);
    await client.close();
  });

  it("answers -32002 naming the URI when no list, template or link claims it and two upstreams offer resources", async () => {
    const token = await seedTeam("fw-nores", { mcp: { graph: { url: replayUrl("fwd-a") }, second: { url: replayUrl("fwd-b") } } });
    const { client } = await connect("fw-nores", token);
    await expect(client.readResource({ uri: "nowhere://x" })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining(
        'Resource not found: nowhere://x (no loaded server lists it, has a template that matches it or linked it in a tool result, and more than one offers resources ("graph", "second")).',
      ),
    });
    await client.close();
  });

  it("paginates a long merged list with opaque cursors, having followed the upstream's cursors to the end", async () => {
    const token = await seedTeam("fw-many", { mcp: { many: { url: replayUrl("fwd-many") } } });
    const { client } = await connect("fw-many", token);
    const first = await client.listResources();
    expect(first.resources).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources).toHaveLength(50);
    expect(second.nextCursor).toBeUndefined();
    expect(new Set([...first.resources, ...second.resources].map((r) => r.uri)).size).toBe(150);
    await expect(client.listResources({ cursor: "garbage" })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it("forwards subscribe, and resources/updated reaches the subscribed host", async () => {
    const token = await seedTeam("fw-sub", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("fw-sub", token);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    const uri = "demo://resource/static/document/features.md";
    await client.subscribeResource({ uri });
    await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/toggle-subscriber-updates" } });
    await eventually(() => updated.includes(uri));
    await client.unsubscribeResource({ uri });
    await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/toggle-subscriber-updates" } });
    await client.close();
  });
});

/**
 * A host that holds no GET stream. The upstreams then keep none either, so a list change an upstream announces
 * outside a request (server-everything's, when a tool registers a resource for its session) never reaches the
 * proxy, and that resource stays out of the proxy's lists: a URI only a tool result points at.
 */
async function connectWithoutStream(team: string, token: string, sessionId?: string): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp`), {
    fetch: (input, init) => (init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : workerFetch(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client({ name: "test-host", version: "1.0.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId ?? sessionId ?? "" };
}

/** server-everything's tool that registers a session resource and answers with a resource_link to it. */
const gzipInput = (name: string) => ({ name, data: "data:text/plain;base64,aGVsbG8=", outputType: "resourceLink" });
const WATCHED = "test://watched-resource";

describe("resources no list or template claims", () => {
  it("single-MCP mode: goes to the upstream, which accepts the URI or refuses it with its own error", async () => {
    const token = await seedTeam("fw-unl-single", { transport: "http", url: env.EVERYTHING_URL });
    const { client } = await connectWithoutStream("fw-unl-single", token);
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(WATCHED);
    expect(await client.subscribeResource({ uri: WATCHED })).toEqual({});
    expect(await client.unsubscribeResource({ uri: WATCHED })).toEqual({});

    const uri = "demo://resource/session/single.txt.gz";
    const linked = await client.callTool({ name: "use_tool", arguments: { tool_name: "gzip-file-as-resource", tool_input: gzipInput("single.txt.gz") } });
    expect(linked.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri }));
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    expect((await client.readResource({ uri })).contents).toEqual([expect.objectContaining({ uri, mimeType: "application/gzip" })]);

    // A URI the upstream does not know: its own JSON-RPC error, not the proxy's -32002.
    await expect(client.readResource({ uri: WATCHED })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Resource ${WATCHED} not found`) });
    await expect(client.complete({ ref: { type: "ref/resource", uri: "nowhere://{x}" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Resource template nowhere://{x} not found"),
    });
    await client.close();
  });

  it("config-file mode: a URI a tool result linked goes to that upstream, also after the session object's eviction", async () => {
    const token = await seedTeam("fw-unl-linked", { mcp: { everything: { url: env.EVERYTHING_URL }, graph: { url: replayUrl("fwd-a") } } });
    const first = await connectWithoutStream("fw-unl-linked", token);
    const uri = "demo://resource/session/linked.txt.gz";
    // Both upstreams offer resources and nothing linked it yet: the proxy cannot tell whose it is.
    await expect(first.client.subscribeResource({ uri })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('("everything", "graph")') });

    const linked = await first.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/gzip-file-as-resource", tool_input: gzipInput("linked.txt.gz") } });
    expect(linked.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri }));
    expect((await first.client.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    expect((await first.client.readResource({ uri })).contents).toEqual([expect.objectContaining({ uri, mimeType: "application/gzip" })]);
    const graphSubscribes = (await replayStats("fwd-a")).methods["resources/subscribe"] ?? 0;
    expect(await first.client.subscribeResource({ uri })).toEqual({});
    expect(await first.client.unsubscribeResource({ uri })).toEqual({});
    expect((await replayStats("fwd-a")).methods["resources/subscribe"] ?? 0).toBe(graphSubscribes);
    await first.client.close();

    // The link is in the session object's storage: a fresh instance routes the URI the same way. The upstream's new
    // session no longer has the resource, so the read is its own refusal; the subscribe it accepts.
    await evictDurableObject(env.SESSIONS.getByName(`fw-unl-linked/${first.sessionId}`));
    const again = await connectWithoutStream("fw-unl-linked", token, first.sessionId);
    expect(await again.client.subscribeResource({ uri })).toEqual({});
    await expect(again.client.readResource({ uri })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Resource ${uri} not found`) });
    expect((await replayStats("fwd-a")).methods["resources/subscribe"] ?? 0).toBe(graphSubscribes);
    await again.client.close();
  });

  it("config-file mode: an unlinked URI goes to the only loaded upstream with resources; once a second loads, it is -32002", async () => {
    const token = await seedTeam("fw-unl-sole", {
      mcp: {
        plain: { url: replayUrl("fwd-nores") },
        everything: { url: env.EVERYTHING_URL },
        later: { url: replayUrl("fwd-lazy-res"), description: "A second server with resources." },
      },
    });
    const { client } = await connect("fw-unl-sole", token);
    expect(await client.subscribeResource({ uri: WATCHED })).toEqual({});
    expect(await client.unsubscribeResource({ uri: WATCHED })).toEqual({});
    await expect(client.readResource({ uri: WATCHED })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Resource ${WATCHED} not found`) });
    await expect(client.complete({ ref: { type: "ref/resource", uri: "nowhere://{x}" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Resource template nowhere://{x} not found"),
    });
    expect((await replayStats("fwd-nores")).methods["resources/subscribe"]).toBeUndefined();

    expect((await loadMcp(client, "later")).isError).toBeFalsy();
    await expect(client.subscribeResource({ uri: WATCHED })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('("everything", "later")') });
    await expect(client.complete({ ref: { type: "ref/resource", uri: "nowhere://{x}" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown resource template: nowhere://{x}"),
    });
    expect((await replayStats("fwd-lazy-res")).methods["resources/subscribe"]).toBeUndefined();
    await client.close();
  });

  it("renews a subscription to an unlisted URI on the upstream's new session, by the same routing", async () => {
    const token = await seedTeam("fw-unl-resub", { transport: "http", url: replayUrl("fwd-unlisted") });
    const { client } = await connect("fw-unl-resub", token);
    expect(await client.subscribeResource({ uri: "memo://unlisted/1" })).toEqual({});
    expect((await replayStats("fwd-unlisted")).methods["resources/subscribe"]).toBe(1);
    await replayControl("forget", "fwd-unlisted");
    await client.readResource({ uri: "memory://knowledge-graph" });
    const stats = await replayStats("fwd-unlisted");
    expect(stats.sessions).toBe(2);
    expect(stats.methods["resources/subscribe"]).toBe(2);
    await client.close();
  });
});

describe("prompts and completion", () => {
  it("lists prompts namespaced in config-file mode and routes prompts/get back to the owner", async () => {
    const token = await seedTeam("fw-prompts", { mcp: { everything: { url: env.EVERYTHING_URL }, graph: { url: replayUrl("fwd-a") } } });
    const { client } = await connect("fw-prompts", token);
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(names).toEqual(["everything/simple-prompt", "everything/args-prompt", "everything/completable-prompt", "everything/resource-prompt"]);
    const got = await client.getPrompt({ name: "everything/args-prompt", arguments: { city: "Lisbon" } });
    expect(JSON.stringify(got.messages)).toContain("Lisbon");
    await expect(client.getPrompt({ name: "everything/nope" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("everything/nope") });
    await client.close();
  });

  it("keeps prompt names bare in single-MCP mode", async () => {
    const token = await seedTeam("fw-single", { transport: "http", url: env.EVERYTHING_URL });
    const { client } = await connect("fw-single", token);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("simple-prompt");
    const got = await client.getPrompt({ name: "simple-prompt" });
    expect(got.messages.length).toBeGreaterThan(0);
    await client.close();
  });

  it("routes completion by prompt reference, and names a reference nobody owns", async () => {
    const token = await seedTeam("fw-complete", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("fw-complete", token);
    const done = await client.complete({ ref: { type: "ref/prompt", name: "everything/completable-prompt" }, argument: { name: "department", value: "Eng" } });
    expect(done.completion.values).toContain("Engineering");
    await expect(client.complete({ ref: { type: "ref/prompt", name: "ghost/prompt" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("ghost/prompt"),
    });
    await expect(client.complete({ ref: { type: "ref/resource", uri: "nowhere://{x}" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("nowhere://{x}"),
    });
    await client.close();
  });
});

describe("logging", () => {
  it("remembers the level and applies it to upstreams loaded later; upstream messages carry the server's name", async () => {
    const token = await seedTeam("fw-log", {
      mcp: { everything: { url: env.EVERYTHING_URL }, later: { url: replayUrl("fwd-logs"), description: "Logs." } },
    });
    const { client } = await connect("fw-log", token);
    const messages: Array<{ logger?: string }> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params);
    });
    await client.setLoggingLevel("debug");
    expect((await replayStats("fwd-logs")).requests).toBe(0);
    await loadMcp(client, "later");
    expect((await replayStats("fwd-logs")).methods["logging/setLevel"]).toBe(1);

    await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/toggle-simulated-logging" } });
    await eventually(() => messages.some((m) => m.logger?.startsWith("everything")));
    await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/toggle-simulated-logging" } });
    await client.close();
  });
});

describe("progress and cancellation", () => {
  it("passes a progress token upstream and brings the upstream's progress back under it", async () => {
    const token = await seedTeam("fw-progress", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("fw-progress", token);
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "use_tool", arguments: { tool_name: "everything/trigger-long-running-operation", tool_input: { duration: 1, steps: 3 } } },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it("aborts the upstream request when the host cancels its use_tool", async () => {
    const token = await seedTeam("fw-cancel", { mcp: { hang: { url: replayUrl("fwd-hang") } } });
    const { client } = await connect("fw-cancel", token);
    const counts = async () => {
      const { methods } = await replayStats("fwd-hang");
      return { calls: methods["tools/call"] ?? 0, cancels: methods["notifications/cancelled"] ?? 0 };
    };
    const before = await counts();
    const controller = new AbortController();
    const call = client.callTool({ name: "use_tool", arguments: { tool_name: "hang/read_graph" } }, undefined, { signal: controller.signal });
    // Abort only once the call has reached the upstream (which never answers it).
    expect(await waitFor(async () => (await counts()).calls > before.calls)).toBe(true);
    expect((await counts()).cancels).toBe(before.cancels);
    controller.abort("the user changed their mind");
    await expect(call).rejects.toThrow();
    expect(await waitFor(async () => (await counts()).cancels > before.cancels)).toBe(true);
    expect(await counts()).toEqual({ calls: before.calls + 1, cancels: before.cancels + 1 });
    await client.close();
  });
});

describe("list changes", () => {
  it("refreshes an upstream's part of the catalog when it says its tools changed, and tells the host", async () => {
    const token = await seedTeam("fw-grow", { mcp: { grow: { url: replayUrl("fwd-grow") } } });
    const { client } = await connect("fw-grow", token);
    expect(await discoverDescription(client)).not.toContain("added_");
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.callTool({ name: "use_tool", arguments: { tool_name: "grow/read_graph" } });
    await eventually(() => changed > 0);
    const description = await discoverDescription(client);
    expect(description).toMatch(/- added_\d+: Added by a call\n/);
    await client.close();
  });
});

describe("server-to-client requests", () => {
  it("relays sampling, elicitation and roots to a host that declared them, marked as the server's, and brings the answers back", async () => {
    const token = await seedTeam("fw-relay", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const { client } = await connect("fw-relay", token, undefined, { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
    const seen: Record<string, Record<string, unknown>> = {};
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen["sampling"] = request.params;
      return { role: "assistant", content: { type: "text", text: "sampled by the host" }, model: "test-model" };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen["elicitation"] = request.params;
      return { action: "accept", content: { name: "Ada", check: true, integer: 3, email: "ada@example.com", firstLine: "x", untitledSingleSelectEnum: "Red", titledSingleSelectEnum: "Red" } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async (request) => {
      seen["roots"] = request.params ?? {};
      return { roots: [{ uri: "file:///work/project", name: "project" }] };
    });

    const description = await discoverDescription(client);
    expect(description).toContain("- trigger-sampling-request:");
    const sampled = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/trigger-sampling-request", tool_input: { prompt: "hi" } } });
    expect(text(sampled)).toContain("sampled by the host");
    const roots = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-roots-list" } });
    expect(text(roots)).toContain("file:///work/project");
    const elicited = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/trigger-elicitation-request" } });
    expect(text(elicited)).toContain("Ada");
    // Each names the server it comes from (src/relay/provenance.ts); a question's words begin with that name.
    for (const params of Object.values(seen)) expect((params["_meta"] as Record<string, unknown>)["dynmcp/server"]).toBe("everything");
    expect(seen["sampling"]?.["systemPrompt"]).toBe("[everything] You are a helpful test server.");
    expect(String(seen["elicitation"]?.["message"])).toMatch(/^\[everything\] Please provide inputs/);
    await client.close();
  });

  it("tells the upstream it is not possible when the host did not declare the capability", async () => {
    const server = new Server({ name: "t", version: "1" }, { capabilities: {} });
    const bridge = new HostBridge(server, "multi");
    await expect(bridge.relay("everything", { method: "sampling/createMessage", params: {} })).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("did not declare the sampling capability"),
    });
    await expect(bridge.relay("everything", { method: "unknown/thing" } as Notification as never)).rejects.toMatchObject({ code: -32601 });
  });
});
