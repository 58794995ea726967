// The upstream client over an injected fetch that answers JSON-RPC: how what the wire did becomes a fault
// (HTTP status, a forgotten session, JSON-RPC errors, a timeout, a broken protocol), and what never leaves the proxy.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../../src/lib/errors.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import { ANSWER_STREAM_ENDED, bodyOf, faultOf, scrub } from "../../src/upstream/faults.ts";
import { InsufficientScopeError } from "@modelcontextprotocol/client";
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";

const URL_ = "https://up.example/mcp";
const spec = (over: Partial<UpstreamSpec> = {}): UpstreamSpec =>
  ({ name: "up", transport: "http", url: URL_, headers: {}, timeout: 5_000, ...over }) as UpstreamSpec;

type Message = { jsonrpc: "2.0"; id?: number | string; method: string; params?: Record<string, unknown> };
const json = (body: unknown, init: ResponseInit = {}) =>
  new Response(JSON.stringify(body), { ...init, headers: { "content-type": "application/json", ...init.headers } });
const result = (id: Message["id"], value: unknown) => json({ jsonrpc: "2.0", id, result: value });

/**
 * A small MCP server as a fetch: initialize (session id "s1"), tools/list (one tool), tools/call (echo), unless
 * `answer` gives a Response (or a promise of one) for a message first.
 */
function server(answer: (message: Message, session: string | null) => Response | Promise<Response> | undefined = () => undefined) {
  const seen: string[] = [];
  const fetch: FetchLike = async (_input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "POST") return new Response(null, { status: method === "GET" ? 405 : 200 });
    const message = JSON.parse(String(init?.body)) as Message;
    seen.push(message.method);
    const own = answer(message, new Headers(init?.headers).get("mcp-session-id"));
    if (own) return own;
    if (message.id === undefined) return new Response(null, { status: 202 });
    if (message.method === "initialize") {
      const init_ = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fake", version: "1" } };
      return json({ jsonrpc: "2.0", id: message.id, result: init_ }, { headers: { "mcp-session-id": "s1" } });
    }
    if (message.method === "tools/list") return result(message.id, { tools: [{ name: "echo", inputSchema: { type: "object" } }] });
    if (message.method === "tools/call") return result(message.id, { content: [{ type: "text", text: JSON.stringify(message.params?.arguments) }] });
    return json({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } });
  };
  return { fetch, seen };
}

/** The small server, whose tools/call answers with this JSON-RPC error. */
const callAnswersError = (code: number, message: string) =>
  server((m) => (m.method === "tools/call" ? json({ jsonrpc: "2.0", id: m.id, error: { code, message } }) : undefined));

const connect = (fetch: FetchLike, over: Partial<UpstreamSpec> = {}, headers: Record<string, string> = {}) =>
  UpstreamClient.connect(spec(over), headers, { fetch, clientInfo: { name: "test", version: "1" } });

/** The fault a failed promise carries. */
async function faultOf_(work: Promise<unknown>): Promise<UpstreamFault> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return (err as UpstreamError).fault;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("upstream client over an injected fetch", () => {
  it("connects, reads the catalog and calls a tool", async () => {
    const up = server();
    const client = await connect(up.fetch);
    const catalog = await client.readCatalog();
    expect(catalog.tools.map((t) => t.name)).toEqual(["echo"]);
    expect(catalog.serverInfo?.name).toBe("fake");
    const called = await client.callTool("echo", { a: 1 });
    expect(called.content).toEqual([{ type: "text", text: '{"a":1}' }]);
    expect(up.seen).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    await client.close();
    expect(client.closed).toBe(true);
  });

  it("an HTTP status is reported by status, its body kept and scrubbed of the URL and header values", async () => {
    const up = server((m) => (m.method === "tools/call" ? new Response(`bad gateway at ${URL_} with key sekret-123`, { status: 502 }) : undefined));
    const client = await connect(up.fetch, {}, { authorization: "sekret-123" });
    const fault = await faultOf_(client.callTool("echo", {}));
    expect(fault).toMatchObject({ kind: "http", status: 502 });
    const detail = (fault as { detail: string }).detail;
    expect(detail).toContain("bad gateway");
    expect(detail).not.toContain("up.example");
    expect(detail).not.toContain("sekret-123");
  });

  it("404 or 400 to a request carrying the session id means the upstream forgot the session", async () => {
    for (const status of [404, 400]) {
      const up = server((m, session) => (m.method === "tools/call" && session === "s1" ? new Response("gone", { status }) : undefined));
      const client = await connect(up.fetch);
      expect(await faultOf_(client.callTool("echo", {}))).toEqual({ kind: "expired" });
    }
  });

  it("a 404 before there is a session is a plain HTTP status", async () => {
    const up = server(() => new Response("not here", { status: 404 }));
    expect(await faultOf_(connect(up.fetch))).toMatchObject({ kind: "http", status: 404 });
  });

  it("a 429 carries its Retry-After", async () => {
    const up = server((m) => (m.method === "tools/call" ? new Response("slow down", { status: 429, headers: { "retry-after": "2" } }) : undefined));
    const client = await connect(up.fetch);
    expect(await faultOf_(client.callTool("echo", {}))).toMatchObject({ kind: "http", status: 429, retryAfterMs: 2000 });
  });

  it("a JSON-RPC error keeps its code and message", async () => {
    const client = await connect(callAnswersError(-32602, "bad arguments").fetch);
    expect(await faultOf_(client.callTool("echo", {}))).toEqual({ kind: "rpc", code: -32602, detail: "bad arguments" });
  });

  it("a request with no answer within the entry's timeout is a timeout", async () => {
    vi.useFakeTimers();
    const up = server((m) => (m.method === "tools/call" ? new Promise<Response>(() => {}) : undefined));
    const client = await connect(up.fetch, { timeout: 1_000 });
    const call = faultOf_(client.callTool("echo", {}));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await call).toEqual({ kind: "timeout", ms: 1_000 });
    // The SDK cancelled it upstream.
    expect(up.seen).toContain("notifications/cancelled");
  });

  it("an answer that is not MCP (HTML, broken JSON) is a protocol error", async () => {
    const answers = [
      () => new Response("<html>oops</html>", { status: 200, headers: { "content-type": "text/html" } }),
      () => new Response("{not json", { status: 200, headers: { "content-type": "application/json" } }),
    ];
    for (const answer of answers) {
      const up = server((m) => (m.method === "tools/call" ? answer() : undefined));
      const client = await connect(up.fetch);
      expect((await faultOf_(client.callTool("echo", {}))).kind).toBe("protocol");
    }
  });

  it("a result of the wrong shape is a protocol error, not a broken connection", async () => {
    const up = server((m) => (m.method === "tools/call" ? result(m.id, { content: "not a list" }) : undefined));
    const client = await connect(up.fetch);
    expect(await faultOf_(client.callTool("echo", {}))).toEqual({ kind: "protocol", detail: "malformed answer" });
  });

  it("the upstream's own -32000 error is its error, not a closed connection", async () => {
    const client = await connect(callAnswersError(-32000, "quota exceeded").fetch);
    expect(await faultOf_(client.callTool("echo", {}))).toEqual({ kind: "rpc", code: -32000, detail: "quota exceeded" });
  });

  it("a fetch that cannot reach the upstream is unreachable", async () => {
    const fetch: FetchLike = async () => {
      throw new TypeError(`fetch failed: connect ECONNREFUSED ${URL_}`);
    };
    const fault = await faultOf_(connect(fetch));
    expect(fault.kind).toBe("unreachable");
    expect((fault as { detail: string }).detail).not.toContain("up.example");
  });
});

describe("fault classification (pure)", () => {
  const context = { spec: { url: URL_, timeout: 3_000 }, secrets: ["tok-abcdef"] };

  it("judges by type, never by message text", () => {
    expect(faultOf(new DOMException("This operation was aborted", "AbortError"), context)).toEqual({ kind: "closed" });
    // A look-alike name is not the type: an Error merely named so is a plain failure.
    expect(faultOf(Object.assign(new Error("x"), { name: "ZodError" }), context).kind).toBe("unreachable");
    expect(faultOf(new SyntaxError("Unexpected token"), context)).toEqual({ kind: "protocol", detail: "malformed answer" });
    // -32000: closed when the connection went or the proxy ended the answer stream; otherwise the upstream's code.
    expect(faultOf(new ProtocolError(-32000, "Connection closed"), { ...context, closed: true })).toEqual({ kind: "closed" });
    expect(faultOf(new ProtocolError(-32000, "ended", ANSWER_STREAM_ENDED), context)).toEqual({ kind: "closed" });
    expect(faultOf(new ProtocolError(-32000, "busy"), context)).toEqual({ kind: "rpc", code: -32000, detail: "busy" });
    // The SDK's own errors, by their codes.
    expect(faultOf(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out"), context)).toEqual({ kind: "timeout", ms: 3_000 });
    expect(faultOf(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"), context)).toEqual({ kind: "closed" });
    expect(faultOf(new SdkError(SdkErrorCode.InvalidResult, "Invalid result for tools/call"), context)).toEqual({ kind: "protocol", detail: "malformed answer" });
    // HTTP answers: the status; a 404 to our session id is an expired session; a 429 keeps its Retry-After.
    const http = (status: number) => new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${status} at ${URL_}`, { status });
    expect(faultOf(http(502), context)).toEqual({ kind: "http", status: 502, detail: "502 at ***" });
    expect(faultOf(http(404), { ...context, sessionId: "s-1" })).toEqual({ kind: "expired" });
    expect(faultOf(http(429), { ...context, retryAfterMs: 2_000 })).toEqual({ kind: "http", status: 429, detail: "429 at ***", retryAfterMs: 2_000 });
    expect(faultOf("a string", context)).toEqual({ kind: "unreachable", detail: "unknown error" });
    // An answer that outgrew the limit explains whatever error closing the client caused.
    expect(faultOf(new TypeError("terminated"), { ...context, overflowLimit: 10 })).toEqual({ kind: "too_large", limit: 10 });
  });

  it("takes an OAuth upstream's 403 insufficient_scope for what it is: an account that needs more scopes, nothing ran", () => {
    const fault = faultOf(new InsufficientScopeError({ requiredScope: "mcp:basic mcp:write" }), context);
    expect(fault).toEqual({
      kind: "auth_required",
      detail: "the server refused: the account needs more access (scopes: mcp:basic mcp:write); add them to the entry's auth.scopes and connect the account again",
    });
  });

  it("scrubs the URL, the host and header values, folds whitespace and keeps it short", () => {
    const text = scrub(`failed ${URL_}?q=1 at up.example\n\n with tok-abcdef`, URL_, ["tok-abcdef"]);
    expect(text).toBe("failed ***?q=1 at <host> with ***");
    expect(scrub("x".repeat(400), URL_, []).length).toBe(300);
    expect(bodyOf("Streamable HTTP error: Error POSTing to endpoint: boom")).toBe("boom");
  });
});
