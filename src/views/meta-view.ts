// The meta view, written once for both eras: discover_tool (a search, a server's index, one tool's definition, or the
// catalog), use_tool (through the one call function, src/views/tool-call.ts), load_mcp, and the config's promoted
// tools called by name.
// What differs between a 2025 session and a 2026 object is given, not asked for: the scope (where loads live and
// what the list shows: the session itself, src/views/session-scope.ts, or a toolset, src/modern/toolset-scope.ts) and
// the input port (src/views/input-port.ts).
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { HostExtra } from "../relay/bridge.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL } from "./definitions.ts";
import { detailsAnswer, indexAnswer, searchAnswer } from "./discover-answers.ts";
import { callerDecides, type ToolNames } from "./find-tool.ts";
import type { InputPort } from "./input-port.ts";
import type { DiscoverToolInput, UseToolInput } from "./schemas.ts";
import { callTool } from "./tool-call.ts";
import { isResult, parseArgs, toolError } from "./tool-errors.ts";
import { answerText, type MetaCallKind, type ToolAnswer, type ToolCallParams, type ToolListAnswer, type ToolView, type ViewSession } from "./tool-view.ts";

/** discover_tool's and use_tool's arguments as every scope's input reads them (a scope's may carry more). */
type DiscoverArgs = z.output<typeof DiscoverToolInput>;
type UseArgs = z.output<typeof UseToolInput>;

/** Where the meta view's loads live and what its list shows: the session (2025), or the toolset a request names (2026). */
export interface MetaScope {
  /** tools/list. */
  list(): Promise<ToolListAnswer>;
  /** discover_tool's and use_tool's inputs as this scope takes them. */
  discoverInput: z.ZodType<DiscoverArgs>;
  useInput: z.ZodType<UseArgs>;
  /** The names use_tool and discover_tool resolve (what a tool of a server not loaded yet is answered differs). */
  names: ToolNames;
  /** An answer before any other for this call, whatever the tool (a toolset handle the router refused). */
  refusal(raw: Record<string, unknown> | undefined): CallToolResult | undefined;
  /** discover_tool with neither tool_name nor query, where a scope answers it (the catalog, with a toolset's servers). */
  catalog?(): Promise<CallToolResult>;
  /** load_mcp. */
  load(raw: Record<string, unknown> | undefined, host: HostExtra): Promise<CallToolResult>;
  /** The promoted tools this scope calls by their own names. */
  promoted: readonly string[];
  /** The meta-tools this scope offers, as an unknown name's answer lists them. */
  offered: string;
}

/** Which kind of call a tools/call is, for the meter; undefined for an unknown name. Reads only whether `query` is given. */
function callKind(registry: UpstreamRegistry, name: string, raw: Record<string, unknown> | undefined): MetaCallKind | undefined {
  if (name === DISCOVER_TOOL) return raw?.["query"] !== undefined ? "search" : "lookup";
  if (name === LOAD_MCP) return registry.dynamic ? "load" : undefined;
  if (name === USE_TOOL || registry.promoted.includes(name)) return "tool";
  return undefined;
}

/** The meta view over one scope; each answer is told to the meter once made (its kind, and a meta-tool's own text). */
export function metaView(session: ViewSession, scope: MetaScope, rounds: InputPort): ToolView {
  const { registry, meter } = session;
  return {
    list: () => scope.list(),
    call: async (params, host) => {
      const answer = await answerCall(session, scope, rounds, params, host);
      const kind = meter ? callKind(registry, params.name, params.arguments) : undefined;
      if (kind === "tool") meter?.called(kind);
      else if (kind) meter?.called(kind, answerText(answer));
      return answer;
    },
  };
}

async function answerCall(session: ViewSession, scope: MetaScope, rounds: InputPort, params: ToolCallParams, host: HostExtra): Promise<ToolAnswer> {
  const { registry } = session;
  const { name, arguments: raw } = params;
  /** An upstream tool, by the name the host uses (through use_tool, or directly when promoted). */
  const upstreamTool = (toolName: string, input: Record<string, unknown>) =>
    callTool({ session, tool: { name: toolName, naming: scope.names }, input, host, progressToken: params._meta?.progressToken, rounds });
  registry.retryFailed();
  const refused = scope.refusal(raw);
  if (refused) return refused;
  switch (name) {
    case DISCOVER_TOOL: {
      const args = parseArgs(scope.discoverInput, raw, name);
      if (isResult(args)) return args;
      if (args.query !== undefined) return searchAnswer(registry, scope.names, { ...args, query: args.query }, session.semantic);
      if (args.tool_name === undefined && args.server !== undefined) return indexAnswer(registry, scope.names, args.server, await session.counter());
      if (args.tool_name === undefined && scope.catalog) return scope.catalog();
      const decides = callerDecides(registry, session.subject);
      return detailsAnswer(registry, scope.names, args.tool_name ?? "", (found) => decides(found).access === "approve");
    }
    case USE_TOOL: {
      const args = parseArgs(scope.useInput, raw, name);
      if (isResult(args)) return args;
      return upstreamTool(args.tool_name, args.tool_input);
    }
    case LOAD_MCP:
      return scope.load(raw, host);
    default: {
      // A promoted tool is called by its own name, its arguments passed on as use_tool's tool_input would be.
      if (scope.promoted.includes(name)) return upstreamTool(name, raw ?? {});
      return toolError("unknown_tool", `Unknown tool: "${name}". This server offers ${scope.offered}; upstream tools are called through ${USE_TOOL}.`);
    }
  }
}
