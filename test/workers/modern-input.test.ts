// Input requests across the two eras: an upstream tool that asks the user to confirm (harness/modern-upstream.ts's
// `confirm`, an elicitation) called by hosts of both eras, against a 2026-only upstream and a 2025-only one. A 2026
// host gets `input_required` and retries with its answer and the proxy's request state; a 2025 host gets a real
// elicitation/create on its stream. Tampered, foreign, replayed and capability-less rounds are refused.
import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { BASE, addToken, connect, post, seedTeam, text, workerFetch } from "./helpers.ts";

const MODERN = "2026-07-28";
const ENVELOPE = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});

/** A raw 2026 tools/call of use_tool, answered as JSON or as the one message of an SSE stream. */
async function useTool(team: string, token: string, tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}, capabilities: Record<string, unknown> = { elicitation: {} }) {
  const res = await post(team, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "use_tool", arguments: { tool_name: tool, tool_input: input }, ...extra, _meta: ENVELOPE(capabilities) },
  }, { authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "use_tool" });
  const body = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? JSON.parse(body.split("\n").filter((l) => l.startsWith("data: ")).at(-1)!.slice(6))
    : JSON.parse(body);
  return { status: res.status, ...(json as { result?: Record<string, unknown>; error?: { code: number; message: string } }) };
}

type InputRound = { resultType: string; inputRequests: Record<string, { method: string; params: { message?: string } }>; requestState: string };

describe.each([
  ["a 2026 upstream (input_required, passed on)", "mi-modern", () => env.MODERN_URL],
  ["a 2025 upstream (elicitation/create, parked)", "mi-legacy", () => env.LEGACY_INPUT_URL],
])("a 2026 host and %s", (_label, team, url) => {
  it("gets input_required naming the elicitation, retries with the answer and the state, and gets the result", async () => {
    const token = await seedTeam(team, { mcp: { up: { url: url() } } });
    const first = await useTool(team, token, "up/confirm", { action: "deploy" });
    expect(first.status).toBe(200);
    const round = first.result as unknown as InputRound;
    expect(round.resultType).toBe("input_required");
    const [key, request] = Object.entries(round.inputRequests)[0]!;
    expect(request!.method).toBe("elicitation/create");
    expect(request!.params.message).toContain("deploy");
    // The upstream's own state never reaches the host: the proxy's is signed and names only the parked call.
    expect(round.requestState).toMatch(/^v1\./);
    const done = await useTool(team, token, "up/confirm", { action: "deploy" }, {
      inputResponses: { [key!]: { action: "accept", content: { ok: true } } },
      requestState: round.requestState,
    });
    expect(done.result?.["resultType"]).toBe("complete");
    expect(text(done.result)).toBe("deploy: confirmed");
    // The same state again: that round is over.
    const replayed = await useTool(team, token, "up/confirm", { action: "deploy" }, {
      inputResponses: { [key!]: { action: "accept", content: { ok: true } } },
      requestState: round.requestState,
    });
    expect(replayed.error?.code).toBe(-32602);
  });

  it("refuses a tampered state, another token's state and a state for other arguments with -32602", async () => {
    const token = await seedTeam(`${team}-bad`, { mcp: { up: { url: url() } } });
    const first = (await useTool(`${team}-bad`, token, "up/confirm", { action: "drop" })).result as unknown as InputRound;
    const key = Object.keys(first.inputRequests)[0]!;
    const answer = { inputResponses: { [key]: { action: "accept", content: { ok: true } } } };
    const tampered = first.requestState.slice(0, -3) + (first.requestState.endsWith("AAA") ? "BBB" : "AAA");
    expect((await useTool(`${team}-bad`, token, "up/confirm", { action: "drop" }, { ...answer, requestState: tampered })).error?.code).toBe(-32602);
    const mate = await addToken(`${team}-bad`);
    expect((await useTool(`${team}-bad`, mate, "up/confirm", { action: "drop" }, { ...answer, requestState: first.requestState })).error?.code).toBe(-32602);
    expect((await useTool(`${team}-bad`, token, "up/confirm", { action: "other" }, { ...answer, requestState: first.requestState })).error?.code).toBe(-32602);
    // The genuine retry still completes: none of the refusals used up the round.
    const done = await useTool(`${team}-bad`, token, "up/confirm", { action: "drop" }, { ...answer, requestState: first.requestState });
    expect(text(done.result)).toBe("drop: confirmed");
  });

  it("answers -32021 to a host that did not declare elicitation (in-band: the answer was already streaming)", async () => {
    const token = await seedTeam(`${team}-nocap`, { mcp: { up: { url: url() } } });
    const res = await useTool(`${team}-nocap`, token, "up/confirm", { action: "wipe" }, {}, {});
    expect(res.error?.code).toBe(-32021);
    expect(res.error?.message).toContain("elicitation");
    // Plain calls of the same upstream still work.
    expect(text((await useTool(`${team}-nocap`, token, "up/echo", { text: "hi" }, {}, {})).result)).toBe("echo: hi");
  });
});

describe("a 2026 host with the v2 SDK client", () => {
  it("answers the input through its own elicitation handler, the SDK driving the rounds", async () => {
    const token = await seedTeam("mi-sdk", { mcp: { up: { url: env.LEGACY_INPUT_URL } } });
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/mi-sdk/mcp`), { fetch: workerFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const client = new Client({ name: "mi-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: {} } });
    let asked = "";
    client.setRequestHandler("elicitation/create", async (request) => {
      asked = String((request.params as { message?: string }).message);
      return { action: "accept", content: { ok: false } };
    });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const result = await client.callTool({ name: "use_tool", arguments: { tool_name: "up/confirm", tool_input: { action: "reboot" } } });
    expect(asked).toContain("reboot");
    expect(text(result)).toBe("reboot: refused");
    await client.close();
  });
});

describe("a 2025 host and a 2026 upstream", () => {
  it("gets the upstream's input request as an elicitation/create on its own stream, then the result", async () => {
    const token = await seedTeam("mi-old-host", { mcp: { up: { url: env.MODERN_URL } } });
    const { client } = await connect("mi-old-host", token, undefined, { elicitation: {} });
    let asked = "";
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked = String(request.params.message);
      return { action: "accept", content: { ok: true } };
    });
    const result = await client.callTool({ name: "use_tool", arguments: { tool_name: "up/confirm", tool_input: { action: "merge" } } });
    expect(asked).toContain("merge");
    expect(text(result)).toBe("merge: confirmed");
    await client.close();
  });
});

describe("logs of a 2026 host's request", () => {
  /** The raw SSE answer of a use_tool, every message in order. */
  async function messagesOf(team: string, token: string, logLevel?: string) {
    const meta = { ...ENVELOPE({}), ...(logLevel ? { "io.modelcontextprotocol/logLevel": logLevel } : {}) };
    const res = await post(team, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "use_tool", arguments: { tool_name: "up/noisy", tool_input: {} }, _meta: meta },
    }, { authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "use_tool" });
    const body = await res.text();
    return body.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { level?: string; data?: unknown }; result?: unknown });
  }

  it("carries the upstream's log messages on the request's own stream only when it asked with logLevel, at that level or above", async () => {
    const token = await seedTeam("mi-logs", { mcp: { up: { url: env.MODERN_URL } } });
    const withLevel = await messagesOf("mi-logs", token, "error");
    const logs = withLevel.filter((m) => m.method === "notifications/message");
    expect(logs.map((m) => m.params?.level)).toEqual(["error"]);
    expect(JSON.stringify(logs[0]!.params?.data)).toContain("an error message");
    expect(withLevel.at(-1)?.result).toBeDefined();
    const without = await messagesOf("mi-logs", token);
    expect(without.filter((m) => m.method === "notifications/message")).toEqual([]);
    expect(without.at(-1)?.result).toBeDefined();
  });
});

describe("progress of a 2026 host's request", () => {
  it("reaches the request's own stream under the host's progress token, from a 2025 upstream", async () => {
    const token = await seedTeam("mi-progress", { mcp: { everything: { url: env.EVERYTHING_URL } } });
    const res = await post("mi-progress", {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: {
        name: "use_tool",
        arguments: { tool_name: "everything/trigger-long-running-operation", tool_input: { duration: 1, steps: 3 } },
        _meta: { ...ENVELOPE({}), progressToken: "host-token-1" },
      },
    }, { authorization: `Bearer ${token}`, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "use_tool" });
    const messages = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { progressToken?: unknown; progress?: number }; result?: unknown });
    const progress = messages.filter((m) => m.method === "notifications/progress");
    expect(progress.length).toBe(3);
    expect(progress.every((m) => m.params?.progressToken === "host-token-1")).toBe(true);
    expect(progress.map((m) => m.params?.progress)).toEqual([...progress.map((m) => m.params?.progress)].sort((a, b) => a! - b!));
    expect(messages.at(-1)?.result).toBeDefined();
  });
});
