// Shared steps of the integration tests: seed a team into KV, talk to the Worker through the real SDK Client.
import { env, exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { mintToken } from "../../src/auth/token.ts";
import { kvKeys } from "../../src/config/keys.ts";
import type { RouteStats } from "../../harness/replay-types.ts";
import { hostTokens, type ListedTool } from "../../src/catalog/budget.ts";
import { loadTokenCounter } from "../../src/catalog/tokenizer.ts";

export const BASE = "http://proxy.test";

/** Stores a team's config and mints a token for it; returns the token. */
export async function seedTeam(team: string, config: unknown): Promise<string> {
  await env.TEAMS.put(kvKeys.config(team), JSON.stringify(config));
  return addToken(team);
}

export async function addToken(team: string): Promise<string> {
  const minted = await mintToken();
  await env.TEAMS.put(kvKeys.token(team, minted.id), JSON.stringify({ hash: minted.hash, createdAt: new Date().toISOString() }));
  return minted.token;
}

export { waitFor } from "../shared/wait.ts";

export const replayUrl = (route: string) => `${env.REPLAY_BASE}/${route}/mcp`;

export async function replayStats(route: string): Promise<RouteStats> {
  const res = await fetch(`${env.REPLAY_BASE}/__stats/${route}`);
  return res.json();
}

/** The Worker under test, as a fetch function. */
export const workerFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  exports.default.fetch(new Request(input, init));

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  sessionId: string;
}

/** A real SDK Client connected to /t/<team>/mcp with the given token (optionally resuming a session id). */
export function connect(team: string, token: string, sessionId?: string, capabilities: ClientCapabilities = {}): Promise<Connected> {
  return connectAt(team, token, "", { ...(sessionId ? { sessionId } : {}), capabilities });
}

/** The same on /t/<team>/mcp plus a query string (`?view=direct`, say). */
export async function connectAt(
  team: string,
  token: string,
  query = "",
  { sessionId, capabilities = {} }: { sessionId?: string; capabilities?: ClientCapabilities } = {},
): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp${query}`), {
    fetch: workerFetch,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client({ name: "test-host", version: "1.0.0" }, { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId ?? sessionId ?? "" };
}

export async function discoverDescription(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  return tools.find((t) => t.name === "discover_tool")?.description ?? "";
}

export function text(result: unknown): string {
  const r = result as CallToolResult;
  return r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/**
 * The JSON-RPC message an answer carries, as the text it came in: the body of a JSON answer, the data of an SSE
 * answer's last message (the objects answer 2026 requests as SSE from the start).
 */
export async function rpcText(res: Response): Promise<string> {
  const body = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return body;
  const data = body.split("\n").filter((l) => l.startsWith("data: ")).at(-1);
  if (data === undefined) throw new Error(`no message in the SSE answer: ${body.slice(0, 200)}`);
  return data.slice("data: ".length);
}

/** A raw JSON-RPC POST to the MCP endpoint (`query`: on its URL). */
export function post(team: string, body: unknown, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return workerFetch(`${BASE}/t/${team}/mcp${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The HTTP status a raw tools/list gets on an existing session id (404 once the session has ended). */
export async function sessionStatus(team: string, token: string, sessionId: string): Promise<number> {
  const res = await post(team, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
    authorization: `Bearer ${token}`,
    "mcp-session-id": sessionId,
    "mcp-protocol-version": "2025-11-25",
  });
  await res.text();
  return res.status;
}

export const initializeBody = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

export async function releaseGate(route: string): Promise<number> {
  const res = await fetch(`${env.REPLAY_BASE}/__release/${route}`, { method: "POST" });
  return ((await res.json()) as { released: number }).released;
}

/** Calls load_mcp and returns the result (listing in structuredContent, or an isError text). */
export function loadMcp(client: Client, name: string) {
  return client.callTool({ name: "load_mcp", arguments: { mcp_name: name } });
}

export const ADMIN = { authorization: "Bearer test-admin-token" };

/** A request to the admin API with the test admin token (JSON body when given). */
export function adminFetch(method: string, path: string, body?: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return workerFetch(`${BASE}/admin${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** Makes the route's first tool change its description; returns that tool's name. */
export async function mutateTool(route: string): Promise<string> {
  const res = await fetch(`${env.REPLAY_BASE}/__mutate/${route}`, { method: "POST" });
  return ((await res.json()) as { mutated: string }).mutated;
}

/** Replay-server controls: forget a route's sessions, take it down, bring it back. */
export async function replayControl(action: "forget" | "down" | "up" | "hold" | "hang", route: string): Promise<void> {
  const res = await fetch(`${env.REPLAY_BASE}/__${action}/${route}`, { method: "POST" });
  if (!res.ok) throw new Error(`replay control ${action} ${route}: HTTP ${res.status} ${await res.text()}`);
}

/**
 * What a host pays for a tools/list (o200k_base tokens of `{name, description, input_schema}` per tool), counted with
 * the Worker's own counter from the static assets. Its agreement with js-tiktoken is test/unit/tokenizer.test.ts's;
 * js-tiktoken itself (a 5.6 MB module, over a second to build its encoder) stays out of the workerd pool, where a
 * test file importing it was seen to crash its pool worker under load.
 */
export async function hostPaid(): Promise<(tools: readonly ListedTool[]) => number> {
  const counter = await loadTokenCounter(env.ASSETS);
  return (tools) => hostTokens(tools, counter);
}
