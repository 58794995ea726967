// The agent-path benchmark's two hosts (bench/agent-path.ts), each counting what it hands its model, in o200k tokens:
// the 2025 era through the SDK v2 `Client` in a session (the text content of each answer; the tools listed again
// after each `notifications/tools/list_changed`, as a host does), and the 2026 era through `@ai-sdk/mcp`'s client in
// its default era, its calls made through the wrappers `toolsFromDefinitions` gives (what their `toModelOutput`
// passes on: the text parts of a result, or the JSON of what the wrapper returned when it has no content).
// `structuredContent` is counted on its own, not in the total: neither host puts it before the model here.
import { createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { countTokens, hostTokens } from "../tokens.ts";
import type { Answer } from "./agent-reading.ts";

export const ERAS = ["2025", "2026"] as const;
export type Era = (typeof ERAS)[number];

/** A tool as tools/list gives it. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

export interface Tally {
  /** Tool calls the agent made. */
  calls: number;
  /** tools/list results the host got. */
  lists: number;
  /** Host tokens of those lists (bench/tokens.ts: o200k of `{name, description, input_schema}` JSON). */
  listTokens: number;
  /** o200k of what each answer put before the model. */
  answerTokens: number;
  /** o200k of each answer's `structuredContent` JSON (not in the total). */
  structuredTokens: number;
  /** Calls and answer tokens by the tool called. */
  byTool: Record<string, { calls: number; tokens: number }>;
}

export interface AgentHost {
  readonly era: Era;
  /** The tools of the first tools/list. */
  readonly tools: readonly ListedTool[];
  readonly tally: Tally;
  call(name: string, args: Record<string, unknown>): Promise<Answer>;
  close(): Promise<void>;
}

const newTally = (): Tally => ({ calls: 0, lists: 0, listTokens: 0, answerTokens: 0, structuredTokens: 0, byTool: {} });

type Result = { content?: unknown; structuredContent?: unknown; isError?: unknown };

const textParts = (content: unknown): string =>
  (Array.isArray(content) ? content : [])
    .map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : JSON.stringify(part)))
    .join("\n");

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function record(tally: Tally, name: string, seen: string, structured: unknown): void {
  const tokens = countTokens(seen);
  tally.calls++;
  tally.answerTokens += tokens;
  if (structured !== undefined) tally.structuredTokens += countTokens(JSON.stringify(structured));
  const kind = (tally.byTool[name] ??= { calls: 0, tokens: 0 });
  kind.calls++;
  kind.tokens += tokens;
}

function listed(tally: Tally, tools: readonly ListedTool[]): void {
  tally.lists++;
  tally.listTokens += hostTokens(tools);
}

/** A 2025 session through the SDK v2 Client. */
export async function openLegacyHost(url: string, token: string): Promise<AgentHost> {
  const client = new Client({ name: "agent-bench", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
  let changed = false;
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    changed = true;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  const tally = newTally();
  const list = async (): Promise<ListedTool[]> => {
    changed = false;
    const tools = (await client.listTools(undefined, { cacheMode: "refresh" })).tools as ListedTool[];
    listed(tally, tools);
    return tools;
  };
  const tools = await list();
  return {
    era: "2025",
    tools,
    tally,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as Result;
      const text = textParts(result.content);
      record(tally, name, text, result.structuredContent);
      // A list change announced during the call: the host lists again (its model is sent the new list).
      await new Promise((resolve) => setImmediate(resolve));
      if (changed) await list();
      return { text, structured: isRecord(result.structuredContent) ? result.structuredContent : undefined, isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

type Wrapper = { execute?: (input: unknown, options: { toolCallId: string; messages: unknown[]; context: Record<string, never> }) => Promise<unknown> };

/** The 2026 era through `@ai-sdk/mcp`'s client, in its default era. */
export async function openModernHost(url: string, token: string): Promise<AgentHost> {
  const client: MCPClient = await createMCPClient({ transport: { type: "http", url, headers: { authorization: `Bearer ${token}` } } });
  if (client.initializeResult.protocolVersion !== "2026-07-28") {
    await client.close();
    throw new Error(`@ai-sdk/mcp spoke ${client.initializeResult.protocolVersion}, not 2026-07-28`);
  }
  const tally = newTally();
  const definitions = await client.listTools();
  const tools = definitions.tools as ListedTool[];
  listed(tally, tools);
  const wrappers = client.toolsFromDefinitions(definitions) as unknown as Record<string, Wrapper>;
  return {
    era: "2026",
    tools,
    tally,
    async call(name, args) {
      const execute = wrappers[name]?.execute;
      if (execute === undefined) throw new Error(`@ai-sdk/mcp offers no tool ${name}`);
      const output = (await execute(args, { toolCallId: `call-${tally.calls}`, messages: [], context: {} })) as unknown;
      // What the wrapper's toModelOutput gives the model: the content's text parts, or the output itself as JSON.
      const result = isRecord(output) ? (output as Result) : {};
      const hasContent = Array.isArray(result.content);
      const seen = hasContent ? textParts(result.content) : JSON.stringify(output ?? null);
      const structured = hasContent ? result.structuredContent : output;
      record(tally, name, seen, hasContent ? result.structuredContent : undefined);
      return { text: seen, structured: isRecord(structured) ? structured : undefined, isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

export const openHost = (era: Era, url: string, token: string): Promise<AgentHost> => (era === "2025" ? openLegacyHost(url, token) : openModernHost(url, token));
