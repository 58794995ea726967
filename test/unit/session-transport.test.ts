// The session transport on the real SDK server: what it stores, what a fresh instance restores (through the SDK's own
// request handling, no private field set), the code it puts back, and which of the host's answers it takes beside a
// runtime a reload retired.
import { Server } from "@modelcontextprotocol/server";
import { describe, expect, it, vi } from "vitest";
import { RpcError } from "../../src/lib/errors.ts";
import { SessionTransport, handleWithRetired, reloadTag, type TransportState } from "../../src/session/transport.ts";
import { FIRST_MESSAGE_WAIT_MS } from "../../src/session/answer-mode.ts";

const SESSION = "team/abc";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

function memory() {
  const box: { state?: TransportState; writes: number } = { writes: 0 };
  return {
    box,
    storage: {
      get: async () => box.state,
      set: async (state: TransportState) => {
        box.state = structuredClone(state);
        box.writes++;
      },
    },
  };
}

async function serve(storage: ReturnType<typeof memory>["storage"], tag?: string) {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { resources: {} } });
  server.setRequestHandler("resources/read", async (request) => {
    throw new RpcError("resource_not_found", `Resource not found: ${request.params.uri}`);
  });
  const transport = new SessionTransport(SESSION, storage, { tag });
  await server.connect(transport);
  return { server, transport };
}

const post = (body: unknown, session?: string) =>
  new Request("http://proxy.test/mcp", {
    method: "POST",
    headers: { ...HEADERS, ...(session ? { "mcp-session-id": session } : {}) },
    body: JSON.stringify(body),
  });

/** The JSON-RPC messages of an SSE (or JSON) answer. */
async function messages(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if (response.headers.get("content-type")?.includes("application/json")) return [JSON.parse(text)];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)));
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: { sampling: {} }, clientInfo: { name: "host", version: "9" } },
};

describe("SessionTransport", () => {
  it("a restored instance is initialized in the SDK's own terms: a second initialize is refused, DELETE ends the session", async () => {
    const { box, storage } = memory();
    await (await serve(storage)).transport.handleRequest(post(initialize));
    const fresh = await serve(storage);
    const again = await fresh.transport.handleRequest(post({ ...initialize, id: 5 }, SESSION));
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: { code: -32600, message: "Invalid Request: Server already initialized" } });
    expect(fresh.transport.sessionId).toBe(SESSION);
    const ended = await fresh.transport.handleRequest(new Request("http://proxy.test/mcp", { method: "DELETE", headers: { "mcp-session-id": SESSION } }));
    expect(ended.status).toBe(200);
    // Restoring wrote nothing: the state is written once, at the host's initialize.
    expect(box.writes).toBe(1);
    // A state stored before initialize finished (never written so, but read as such) restores nothing.
    const { storage: half } = memory();
    await half.set({ sessionId: SESSION, initialized: false });
    const uninitialized = await serve(half);
    expect((await uninitialized.transport.handleRequest(post({ jsonrpc: "2.0", id: 6, method: "ping" }, SESSION))).status).toBe(400);
  });

  it("stores the session id, the initialized flag and the initialize parameters once, at initialize", async () => {
    const { box, storage } = memory();
    const { transport } = await serve(storage);
    const response = await transport.handleRequest(post(initialize));
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toBe(SESSION);
    expect((await messages(response))[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "t" } } });
    expect(box.state).toEqual({ sessionId: SESSION, initialized: true, initializeParams: initialize.params });
    expect(box.writes).toBe(1);
  });

  it("a fresh instance serves the stored session and knows the host's capabilities again, sending nothing for the replay", async () => {
    const { box, storage } = memory();
    await (await serve(storage)).transport.handleRequest(post(initialize));

    const fresh = await serve(storage);
    expect(fresh.server.getClientCapabilities()).toBeUndefined();
    const response = await fresh.transport.handleRequest(post({ jsonrpc: "2.0", id: 2, method: "ping" }, SESSION));
    expect(response.status).toBe(200);
    expect(await messages(response)).toEqual([{ jsonrpc: "2.0", id: 2, result: {} }]);
    expect(fresh.server.getClientCapabilities()).toEqual({ sampling: {} });
    expect(box.writes).toBe(1);

    // Without stored state the session is unknown to the instance: the SDK refuses, nothing is replayed.
    const empty = await serve(memory().storage);
    expect((await empty.transport.handleRequest(post({ jsonrpc: "2.0", id: 3, method: "ping" }, SESSION))).status).toBe(400);
  });

  it("answers resource-not-found with -32002 and no trace of how, and a body that is not JSON with the SDK's parse error", async () => {
    const { storage } = memory();
    const { transport } = await serve(storage);
    await transport.handleRequest(post(initialize));
    const read = await transport.handleRequest(post({ jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "x://y" } }, SESSION));
    expect(await messages(read)).toEqual([{ jsonrpc: "2.0", id: 4, error: { code: -32002, message: "Resource not found: x://y" } }]);

    const broken = new Request("http://proxy.test/mcp", { method: "POST", headers: { ...HEADERS, "mcp-session-id": SESSION }, body: "{nope" });
    const answer = await transport.handleRequest(broken);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("after a reload, brings each of the host's answers to the runtime that asked, though both servers numbered their requests alike", async () => {
    const { storage } = memory();
    const first = await serve(storage);
    await first.transport.handleRequest(post({ ...initialize, params: { ...initialize.params, capabilities: { roots: {} } } }));
    // The runtime a reload built beside the first one, over the same stored session.
    const second = await serve(storage, reloadTag(1));
    const get = () => new Request("http://proxy.test/mcp", { method: "GET", headers: { accept: "text/event-stream", "mcp-session-id": SESSION, "mcp-protocol-version": "2025-11-25" } });
    // Each asks the host for its roots on its own GET stream: the SDK numbers both requests 0.
    const streams = await Promise.all([first, second].map(async ({ transport }) => (await transport.handleRequest(get())).body!.getReader()));
    const asked = [first.server.listRoots(), second.server.listRoots()];
    const ids = await Promise.all(streams.map(async (reader) => (await nextMessage(reader))["id"]));
    expect(ids).toEqual([0, "reload1:0"]);
    // The host answers both; each answer goes through the current (second) runtime and the retired (first) one.
    for (const [id, uri] of [["reload1:0", "file:///second"], [0, "file:///first"]] as const) {
      const answer = await handleWithRetired(second.transport, [first.transport], post({ jsonrpc: "2.0", id, result: { roots: [{ uri }] } }, SESSION));
      expect(answer.status).toBe(202);
    }
    expect((await asked[0]!).roots[0]!.uri).toBe("file:///first");
    expect((await asked[1]!).roots[0]!.uri).toBe("file:///second");
    await Promise.all(streams.map((reader) => reader.cancel()));
  });
});

/** A session whose tools/call `quiet` answers at once, `chatty` sends progress first, `slow` answers when let go. */
async function toolSession() {
  const { storage } = memory();
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
  let letGo: () => void = () => {};
  const slow = new Promise<void>((resolve) => (letGo = resolve));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    if (request.params.name === "chatty") {
      await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: "p", progress: 1 } });
    }
    if (request.params.name === "slow") await slow;
    return { content: [{ type: "text", text: request.params.name }] };
  });
  const transport = new SessionTransport(SESSION, storage);
  await server.connect(transport);
  await transport.handleRequest(post(initialize));
  const call = (id: number, name: string) => transport.handleRequest(post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } }, SESSION));
  return { call, letGo };
}

describe("SessionTransport answer modes", () => {
  it("answers as JSON a request whose server sends nothing but the answer, the same message the stream would carry", async () => {
    const { call } = await toolSession();
    const response = await call(7, "quiet");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("mcp-session-id")).toBe(SESSION);
    expect(response.headers.get("cache-control")).toBeNull();
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "quiet" }] } });
  });

  it("keeps the SSE stream when something comes before the answer: the progress, then the answer, on it", async () => {
    const { call } = await toolSession();
    const response = await call(8, "chatty");
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const sent = await messages(response);
    expect(sent.map((m) => m["method"] ?? m["id"])).toEqual(["notifications/progress", 8]);
    expect(sent[1]).toMatchObject({ result: { content: [{ text: "chatty" }] } });
  });

  it("keeps the SSE stream for a call that has sent nothing after a moment; its answer still comes on it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const { call, letGo } = await toolSession();
      const pending = call(9, "slow");
      await vi.advanceTimersByTimeAsync(FIRST_MESSAGE_WAIT_MS);
      const response = await pending;
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      letGo();
      expect(await messages(response)).toEqual([{ jsonrpc: "2.0", id: 9, result: { content: [{ type: "text", text: "slow" }] } }]);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** The next JSON-RPC message on an SSE stream. */
async function nextMessage(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error("the stream ended before a message came");
    buffered += decoder.decode(value, { stream: true });
    const line = buffered.split("\n").find((l) => l.startsWith("data: ") && l.length > 6);
    if (line) return JSON.parse(line.slice(6));
  }
}
