// The session transport on the real SDK server: what it stores, what a fresh instance restores, the code it puts
// back, and the SDK's private fields it depends on (this file fails when an SDK update renames them).
import { Server } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/errors.ts";
import { SessionTransport, type TransportInternals, type TransportState } from "../../src/session/transport.ts";

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

async function serve(storage: ReturnType<typeof memory>["storage"]) {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { resources: {} } });
  server.setRequestHandler("resources/read", async (request) => {
    throw new RpcError("resource_not_found", `Resource not found: ${request.params.uri}`);
  });
  const transport = new SessionTransport(SESSION, storage);
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
  it("relies on SDK fields that still exist under these names", async () => {
    const { transport } = await serve(memory().storage);
    const sdk = transport as unknown as TransportInternals;
    expect(sdk._initialized).toBe(false);
    expect(typeof sdk._onsessioninitialized).toBe("function");
    expect("sessionId" in transport).toBe(true);
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
});
