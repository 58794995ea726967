// The era step's shortcut agrees with the SDK's classifier: whatever it takes as a 2025 session's request, the
// classifier calls legacy too; a 2025 session's ordinary requests take it; everything else is left to the classifier.
import { PROTOCOL_VERSION_META_KEY, SUPPORTED_PROTOCOL_VERSIONS, classifyInboundRequest, isJSONRPCRequest } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { isPlainSessionRequest } from "../../src/edge/mcp/plain-session-request.ts";

const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "use_tool", arguments: { tool_name: "a/b" } } };
const claim = { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" };

const taken: Array<[string, unknown, string | null]> = [
  ["a call under a 2025 header", call, "2025-11-25"],
  ["a call without a header", call, null],
  ["a call with a progress token", { ...call, params: { ...call.params, _meta: { progressToken: "p" } } }, "2025-06-18"],
  ["tools/list without params", { jsonrpc: "2.0", id: "x", method: "tools/list" }, "2025-11-25"],
  ["initialize", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "h", version: "1" } } }, null],
];

const left: Array<[string, unknown, string | null]> = [
  ["an envelope claim", { ...call, params: { ...call.params, _meta: claim } }, null],
  ["a claim under a 2025 header", { ...call, params: { ...call.params, _meta: claim } }, "2025-11-25"],
  ["a 2026 header", call, "2026-07-28"],
  ["a header with spaces", call, " 2025-11-25"],
  ["an unknown header", call, "1999-01-01"],
  ["a notification", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, null],
  ["a response", { jsonrpc: "2.0", id: 1, result: {} }, null],
  ["an error response", { jsonrpc: "2.0", id: 1, error: { code: -1, message: "no" } }, null],
  ["a batch", [call], "2025-03-26"],
  ["an id that is null", { ...call, id: null }, null],
  ["a method that is not a string", { ...call, method: 5 }, null],
  ["a _meta that is not an object", { ...call, params: { ...call.params, _meta: [claim] } }, null],
];

/** Shapes the shortcut checks by hand: each one the SDK's own request check refuses too. */
const malformed: Array<[string, unknown, string | null]> = [
  ["an id that is not an integer", { ...call, id: 1.5 }, null],
  ["an id that is an object", { ...call, id: { n: 1 } }, null],
  ["params that are null", { ...call, params: null }, null],
  ["params that are an array", { ...call, params: [1, 2] }, "2025-11-25"],
  ["a progress token the SDK refuses", { ...call, params: { ...call.params, _meta: { progressToken: { no: 1 } } } }, null],
  ["a version other than 2.0", { ...call, jsonrpc: "1.0" }, null],
];

/** What the era step says of the header: none, or a 2025 version's (src/edge/mcp/guards.ts isSessionVersion). */
const sessionHeader = (version: string | null) => version === null || (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);

const classify = (body: unknown, version: string | null) =>
  classifyInboundRequest({ httpMethod: "POST", body, ...(version === null ? {} : { protocolVersionHeader: version }) });

describe("isPlainSessionRequest", () => {
  it.each(taken)("takes %s, which the classifier calls legacy", (_, body, version) => {
    expect(isPlainSessionRequest(body, sessionHeader(version))).toBe(true);
    expect(classify(body, version).kind).toBe("legacy");
  });

  it.each([...left, ...malformed])("leaves %s to the classifier", (_, body, version) => {
    expect(isPlainSessionRequest(body, sessionHeader(version))).toBe(false);
  });

  it.each(malformed)("agrees with the SDK's request check on %s", (_, body) => {
    expect(isJSONRPCRequest(body)).toBe(false);
  });
});
