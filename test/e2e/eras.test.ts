// Both protocol eras on one URL through `wrangler dev`: a 2026-07-28 client (the v2 SDK in automatic mode) and a
// 2025-11-25 client (the v1 SDK) side by side on the same team, against server-everything and a lazy replay server.
// The modern one reaches the lazy server through a toolset handle from a fresh connection; the 2025 session keeps
// its list_changed and growing description; closing a modern request's stream cancels the upstream call (within
// KEEP_ALIVE_MS and a bit: wrangler dev's proxy notices a closed connection when it next writes). Two calls to one
// upstream that ask at once each get their own question, marked as the upstream's, in both host eras.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import { startModernUpstream, type ModernUpstream } from "../../harness/modern-upstream.ts";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { waitFor } from "../shared/wait.ts";
import { modernUseTool, rawSession, resultText, type Message, type RawCall } from "../shared/raw-hosts.ts";
import { text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
let dir: string;
let everything: Running;
let replay: ReplayServer;
/** A 2026-only upstream (harness/modern-upstream.ts): `echo`, and `confirm`, which asks for input. */
let modernUp: ModernUpstream;
/** The same fixture speaking only 2025 sessions: its questions are elicitation/create requests on a stream. */
let legacyUp: ModernUpstream;
let proxy: Running;
let port: number;
let token: string;
const mcpUrl = () => `http://127.0.0.1:${port}/t/eras/mcp`;

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };

/** A v2 client in automatic mode; `methods` records the JSON-RPC method of every POST it makes. */
async function modernClient(capabilities: Record<string, unknown> = {}) {
  const methods: string[] = [];
  const sessionHeaders: Array<string | null> = [];
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      if (typeof init?.body === "string") methods.push((JSON.parse(init.body) as { method?: string }).method ?? "(response)");
      const response = await fetch(input, init);
      sessionHeaders.push(response.headers.get("mcp-session-id"));
      return response;
    },
  });
  const client = new Client({ name: "e2e-modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities });
  const asked: string[] = [];
  if ("elicitation" in capabilities) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const message = String((request.params as { message?: string }).message);
      asked.push(message);
      // server-everything's form wants a name; the era fixture's `confirm` asks "Run <action>?" (marked "[modern] ") and wants ok.
      const content: Record<string, string | boolean> = message.startsWith("[modern] Run ") ? { ok: true } : { name: "Ada Lovelace" };
      return { action: "accept", content };
    });
  }
  await client.connect(transport);
  const call = (name: string, args: Record<string, unknown>, options?: { signal?: AbortSignal }) =>
    client.callTool({ name, arguments: args }, options) as Promise<ToolResult>;
  return { client, methods, sessionHeaders, call, asked };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-e2e-eras-"));
  const state = join(dir, "state");
  const memory = loadCorpus("modelcontextprotocol__server-memory");
  [everything, replay, modernUp, legacyUp] = await Promise.all([
    startEverything(),
    startReplayServer({ lazy: { catalog: memory }, hang: { catalog: memory, faults: { "tools/call": { kind: "hang" } } } }),
    startModernUpstream("modern"),
    startModernUpstream("legacy"),
  ]);
  token = provisionTeam(dir, state, "eras", {
    mcp: {
      everything: { url: everything.url },
      graph: { url: replay.url("lazy"), description: "A knowledge graph; load it to remember facts." },
      stuck: { url: replay.url("hang"), timeout: 30_000 },
      modern: { url: modernUp.url },
      legacy: { url: legacyUp.url },
    },
  });
  port = await freePort();
  proxy = await startWranglerDev({ persistTo: state, vars: VARS, port });
});

afterAll(async () => {
  await Promise.all([proxy?.stop(), everything?.stop(), replay?.close(), modernUp?.close(), legacyUp?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("both eras on one URL through wrangler dev", () => {
  it("serves a 2026 client without a session: discover first, no initialize, calls server-everything through use_tool", async () => {
    const modern = await modernClient();
    expect(modern.client.getProtocolEra()).toBe("modern");
    expect(modern.methods[0]).toBe("server/discover");
    const { tools } = await modern.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    const sum = await modern.call("use_tool", { tool_name: "everything/get-sum", tool_input: { a: 2, b: 40 } });
    expect(sum.isError).toBeFalsy();
    expect(text(sum)).toContain("42");
    expect(modern.methods).not.toContain("initialize");
    expect(modern.sessionHeaders.every((h) => h === null)).toBe(true);
    await modern.client.close();
  });

  it("carries a lazy server across connections in a toolset handle, while tools/list stays byte-identical", async () => {
    const first = await modernClient();
    const { tools } = await first.client.listTools();
    expect(tools[0]!.description).toContain("<mcp_servers>\ngraph: A knowledge graph");
    const listBefore = JSON.stringify(tools);
    const loaded = await first.call("load_mcp", { mcp_name: "graph" });
    expect(loaded.isError).toBeFalsy();
    const toolset = loaded.structuredContent?.["toolset"] as string;
    // The index and counts, the handle first; the index again is the call the answer names, with the handle.
    expect(Object.keys(loaded.structuredContent ?? {})[0]).toBe("toolset");
    expect(text(loaded)).toContain('With that toolset, discover_tool {"server":"graph"} answers this list again');
    const index = await first.call("discover_tool", { server: "graph", toolset });
    expect(Object.keys(index.structuredContent?.["tools"] as object)).toEqual(Object.keys(loaded.structuredContent?.["tools"] as object));
    await first.client.close();
    const second = await modernClient();
    expect(JSON.stringify((await second.client.listTools()).tools)).toBe(listBefore);
    const called = await second.call("use_tool", { tool_name: "graph/read_graph", tool_input: {}, toolset });
    expect(called.isError).toBeFalsy();
    const without = await second.call("use_tool", { tool_name: "graph/read_graph", tool_input: {} });
    expect(without.isError).toBe(true);
    expect(text(without)).toContain('load_mcp {"mcp_name":"graph"}');
    await second.client.close();
  });

  it("keeps a 2025 session as it was, beside a 2026 client: load_mcp sends list_changed and grows discover_tool's description", async () => {
    const legacy = await connectClient(mcpUrl(), token);
    const modern = await modernClient();
    let changed = 0;
    legacy.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const before = (await legacy.client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
    expect(before).not.toContain("graph:\n");
    await legacy.client.callTool({ name: "load_mcp", arguments: { mcp_name: "graph" } });
    expect(await waitFor(async () => changed > 0)).toBe(true);
    const after = (await legacy.client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
    expect(after).toContain("graph:\n");
    // The modern client's list never moved: graph is still a server to load, its tools in no list.
    const modernDescription = (await modern.client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
    expect(modernDescription).toContain("<mcp_servers>\ngraph: ");
    expect(modernDescription).not.toContain("graph:\n");
    await Promise.all([legacy.client.close(), modern.client.close()]);
  });

  it("relays server-everything's elicitation to a 2026 client as input_required, and its answer back", async () => {
    const modern = await modernClient({ elicitation: {} });
    const result = await modern.call("use_tool", { tool_name: "everything/trigger-elicitation-request", tool_input: {} });
    expect(result.isError).toBeFalsy();
    expect(modern.asked[0]).toContain("Please provide inputs");
    expect(text(result)).toContain("Name: Ada Lovelace");
    // Two rounds of the same tools/call (the second with the answer and the proxy's request state), no session.
    expect(modern.methods.filter((m) => m === "tools/call")).toHaveLength(2);
    await modern.client.close();
  });

  it("reaches a 2026-only upstream from hosts of both eras, its input requests answered in each era's way", async () => {
    // 2026 host: the upstream's input_required passed through, answered by the client's elicitation handler.
    const modern = await modernClient({ elicitation: {} });
    expect(text(await modern.call("use_tool", { tool_name: "modern/echo", tool_input: { text: "hi" } }))).toBe("echo: hi");
    expect(text(await modern.call("use_tool", { tool_name: "modern/confirm", tool_input: { action: "ship" } }))).toBe("ship: confirmed");
    expect(modern.asked.at(-1)).toContain("ship");
    await modern.client.close();
    // 2025 host (the v1 SDK, a session): the same request arrives as a real elicitation/create on its stream.
    const legacy = new LegacyClient({ name: "e2e-legacy", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = "";
    legacy.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked = request.params.message;
      return { action: "accept", content: { ok: false } };
    });
    await legacy.connect(new LegacyTransport(new URL(mcpUrl()), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const result = await legacy.callTool({ name: "use_tool", arguments: { tool_name: "modern/confirm", tool_input: { action: "roll back" } } });
    expect(asked).toContain("roll back");
    expect(text(result)).toBe("roll back: refused");
    await legacy.close();
    // The upstream spoke 2026 throughout: no session was ever opened on it.
    expect(modernUp.methods()["initialize"] ?? 0).toBe(0);
  });

  it("cancels the upstream call when a 2026 client abandons its request", async () => {
    const modern = await modernClient();
    const counts = async () => {
      const stats = replay.stats("hang");
      return { calls: stats.methods["tools/call"] ?? 0, cancels: stats.methods["notifications/cancelled"] ?? 0 };
    };
    const before = await counts();
    const abort = new AbortController();
    const pending = modern.call("use_tool", { tool_name: "stuck/read_graph", tool_input: {} }, { signal: abort.signal });
    expect(await waitFor(async () => (await counts()).calls > before.calls)).toBe(true);
    abort.abort();
    await expect(pending).rejects.toThrow();
    // Within a keep-alive interval and a bit: wrangler dev's proxy notices the closed connection when it next writes.
    expect(await waitFor(async () => (await counts()).cancels > before.cancels, { tries: 250, ms: 20 })).toBe(true);
    await modern.client.close();
  });
});

describe("an upstream's question reaches the call that caused it, through wrangler dev", () => {
  const fetchFn = (input: string, init: RequestInit) => fetch(input, init);
  /** Two calls that ask "Run <action>?" once both are in progress (harness/modern-upstream.ts). */
  const together = (server: string, group: string) => (action: string) => ({ tool_name: `${server}/confirm_together`, tool_input: { action, group, together: 2 } });
  const question = (call: RawCall) => {
    expect(call.asked.map((m) => m.method)).toEqual(["elicitation/create"]);
    const params = call.asked[0]!.params!;
    return { message: params["message"], server: (params["_meta"] as Record<string, unknown>)["dynmcp/server"] };
  };
  /** Each stream's questions answered as that stream's call wants: a question on the wrong stream gets the wrong answer. */
  const answer = (ok: boolean) => () => ({ action: "accept", content: { ok } });

  for (const server of ["legacy", "modern"]) {
    it(`a 2025 session, two calls to the ${server} upstream: each question on its own call's stream, marked, each answer its own`, async () => {
      const session = await rawSession(fetchFn, mcpUrl(), token, { elicitation: {} });
      const input = together(server, crypto.randomUUID());
      const [alpha, beta] = await Promise.all([session.call("use_tool", input("alpha"), answer(true)), session.call("use_tool", input("beta"), answer(false))]);
      expect(question(alpha)).toEqual({ message: `[${server}] Run alpha?`, server });
      expect(question(beta)).toEqual({ message: `[${server}] Run beta?`, server });
      expect([resultText(alpha.result), resultText(beta.result)]).toEqual(["alpha: confirmed", "beta: refused"]);
      await session.close();
    });
  }

  it("a 2026 host, two calls to the 2025 upstream: each input_required holds its own question, marked, and its answer completes that call", async () => {
    const input = together("legacy", crypto.randomUUID());
    const rounds = await Promise.all(["alpha", "beta"].map((action) => modernUseTool(fetchFn, mcpUrl(), token, input(action))));
    const asked = rounds.map((round) => {
      const [key, request] = Object.entries((round.result?.["inputRequests"] ?? {}) as Record<string, Message>)[0]!;
      return { key, message: request.params?.["message"], state: round.result?.["requestState"] };
    });
    expect(asked.map((a) => a.message)).toEqual(["[legacy] Run alpha?", "[legacy] Run beta?"]);
    const done = await Promise.all(
      ["alpha", "beta"].map((action, i) =>
        modernUseTool(fetchFn, mcpUrl(), token, input(action), {
          inputResponses: { [asked[i]!.key]: { action: "accept", content: { ok: action === "alpha" } } },
          requestState: asked[i]!.state,
        }),
      ),
    );
    expect(done.map((d) => resultText(d.result))).toEqual(["alpha: confirmed", "beta: refused"]);
  });

  it("a question on the 2025 upstream's GET stream goes to the only call in progress, and is refused while two are", async () => {
    const session = await rawSession(fetchFn, mcpUrl(), token, { elicitation: {} });
    const onHostStream: Message[] = [];
    const closeStream = await session.openStream(onHostStream);
    const one = await session.call("use_tool", { tool_name: "legacy/ask_aside", tool_input: { action: "gamma", group: crypto.randomUUID(), together: 1 } }, answer(true));
    expect(question(one)).toEqual({ message: "[legacy] Run gamma?", server: "legacy" });
    expect(resultText(one.result)).toBe("gamma: confirmed");
    const group = crypto.randomUUID();
    const aside = (action: string) => ({ tool_name: "legacy/ask_aside", tool_input: { action, group, together: 2 } });
    const both = await Promise.all([session.call("use_tool", aside("delta"), answer(true)), session.call("use_tool", aside("eps"), answer(true))]);
    for (const call of both) {
      expect(call.asked).toEqual([]);
      expect(resultText(call.result)).toContain("not asked:");
      expect(resultText(call.result)).toContain('The proxy did not relay elicitation/create: 2 requests to "legacy" are in progress');
    }
    expect(onHostStream).toEqual([]);
    await closeStream();
    await session.close();
  });
});
