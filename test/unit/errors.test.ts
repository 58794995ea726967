// The one error union and its renderers: tool results carry the kind in _meta, JSON-RPC errors keep their codes,
// the router's answers their statuses.
import { describe, expect, it } from "vitest";
import {
  ERROR_META_KEY,
  HTTP_ANSWERS,
  JsonRpcCode,
  LoadError,
  ProxyError,
  RpcError,
  UpstreamError,
  errorKindOf,
  forwardedError,
  toJsonRpcError,
  toToolResult,
} from "../../src/lib/errors.ts";
import { httpError, sessionNotFound } from "../../src/lib/responses.ts";

describe("toToolResult", () => {
  it("words an upstream fault as before and names its kind, server and status in _meta", () => {
    const err = new UpstreamError("graph", { kind: "http", status: 500, detail: "" });
    const r = toToolResult(err, `graph/read failed: ${err.message}`);
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: "text", text: 'graph/read failed: "graph" answered HTTP 500' }]);
    expect(r._meta).toEqual({ [ERROR_META_KEY]: { kind: "http", upstream: "graph", status: 500 } });
    expect(errorKindOf(r)).toEqual({ kind: "http", upstream: "graph", status: 500 });
  });

  it("keeps an upstream's JSON-RPC code and the timeout's kind", () => {
    expect(errorKindOf(toToolResult(new UpstreamError("a", { kind: "rpc", code: -32099, detail: "no" })))).toEqual({ kind: "rpc", upstream: "a", code: -32099 });
    const timeout = toToolResult(new UpstreamError("a", { kind: "timeout", ms: 50 }));
    expect(timeout.content[0]?.text).toBe('"a" did not answer within 50 ms; the request was cancelled');
    expect(errorKindOf(timeout)).toEqual({ kind: "timeout", upstream: "a" });
  });

  it("renders the proxy's own kinds with their text, the server only when there is one", () => {
    const r = toToolResult(new ProxyError("unknown_tool", 'Unknown tool: "x".'));
    expect(r.content[0]?.text).toBe('Unknown tool: "x".');
    expect(r._meta[ERROR_META_KEY]).toEqual({ kind: "unknown_tool" });
  });

  it("finds no kind in a result without one (an upstream's own isError)", () => {
    expect(errorKindOf({ _meta: undefined })).toBeUndefined();
    expect(errorKindOf({ _meta: { other: 1 } })).toBeUndefined();
    expect(errorKindOf({})).toBeUndefined();
  });
});

describe("LoadError", () => {
  it("turns its kinds into what load_mcp logs and announces", () => {
    const unknown = new LoadError("unknown_server", "Unknown MCP server", "x");
    const failed = new LoadError("load_failed", "Failed", "x");
    const evicted = new LoadError("evicted", "Failed after 3", "x");
    expect([unknown.attempted, failed.attempted, evicted.attempted]).toEqual([false, true, true]);
    expect([unknown.catalogChanged, failed.catalogChanged, evicted.catalogChanged]).toEqual([false, false, true]);
    expect(evicted).toBeInstanceOf(ProxyError);
    expect(evicted.name).toBe("LoadError");
    expect(toToolResult(evicted)._meta[ERROR_META_KEY]).toEqual({ kind: "evicted", upstream: "x" });
  });
});

describe("toJsonRpcError", () => {
  it("passes an upstream's own JSON-RPC error through and makes other faults -32603", () => {
    expect(toJsonRpcError(new UpstreamError("a", { kind: "rpc", code: -32042, detail: "nope" }))).toEqual({ code: -32042, message: "nope" });
    expect(toJsonRpcError(new UpstreamError("a", { kind: "closed" }))).toEqual({ code: -32603, message: 'the connection to "a" closed' });
  });

  it("gives the proxy's own kinds their codes", () => {
    expect(toJsonRpcError(new RpcError("resource_not_found", "Resource not found: x"))).toEqual({ code: -32002, message: "Resource not found: x" });
    expect(new RpcError("invalid_params", "Unknown prompt: p").code).toBe(JsonRpcCode.InvalidParams);
    expect(new RpcError("not_supported", "no subscriptions").code).toBe(-32601);
    expect(toJsonRpcError(new ProxyError("invalid_arguments", "bad"))).toEqual({ code: -32602, message: "bad" });
  });

  it("forwardedError makes an upstream failure an RpcError the SDK sends as it is", () => {
    const e = forwardedError(new UpstreamError("a", { kind: "http", status: 502, detail: "" }));
    expect(e).toBeInstanceOf(RpcError);
    expect(e).toMatchObject({ kind: "http", code: -32603, message: '"a" answered HTTP 502', upstream: "a" });
    const other = new Error("x");
    expect(forwardedError(other)).toBe(other);
  });
});

describe("the router's answers", () => {
  it("have the statuses and codes of before", () => {
    expect(HTTP_ANSWERS.session_not_found).toEqual({ status: 404, code: -32001 });
    expect(HTTP_ANSWERS.rate_limited).toEqual({ status: 429, code: -32000 });
    expect(HTTP_ANSWERS.invalid_request).toEqual({ status: 400, code: -32600 });
    expect(HTTP_ANSWERS.not_configured).toEqual({ status: 503, code: -32603 });
    expect(HTTP_ANSWERS.parse_error).toEqual({ status: 400, code: -32700 });
  });

  it("render as JSON-RPC error bodies with id null", async () => {
    const r = sessionNotFound();
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found: start a new session with initialize." } });
    const limited = httpError("rate_limited", "slow down", { "Retry-After": "60" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBe("60");
  });
});
