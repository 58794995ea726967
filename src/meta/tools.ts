// The meta-tools a host sees (discover_tool, use_tool, and load_mcp in dynamic mode), wired onto the session's MCP server.
import type { Server } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { LoadError, toToolResult } from "../errors.ts";
import { log } from "../log.ts";
import type { HostBridge } from "../forward/bridge.ts";
import { arrival } from "../catalog/catalog.ts";
import { buildListing, defined } from "../catalog/listing.ts";
import { renderSearchHits, renderToolDetails } from "../catalog/render.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { callUpstreamTool, findTool, isResult, registryNames, toolError, type SessionIdentity, type ToolNames, type ToolResultLinks } from "./call.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL, metaDefinitions } from "./definitions.ts";
import { DiscoverToolInput, LoadMcpInput, UseToolInput, argumentErrors } from "./schemas.ts";
import { searchCatalog } from "./tool-search.ts";
import { searchLazyServers } from "./server-search.ts";
import { ToolList } from "./tool-list.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import type { FittedCatalog } from "../catalog/budget.ts";

/** At most this many servers not loaded yet come with a search's answer. */
const LAZY_HITS = 3;

export function parseArgs<S extends z.ZodType>(schema: S, raw: unknown, tool: string): z.infer<S> | CallToolResult {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  return toolError("invalid_arguments", `Invalid arguments for ${tool}: ${argumentErrors(parsed.error)}`);
}


/**
 * What a call is, for the session's usage accounting: a discover_tool lookup or search (the code view's describe and
 * search), a load, an upstream tool call, a code-view program run.
 */
export type MetaCallKind = "lookup" | "search" | "load" | "tool" | "execute";

/** The session's usage meter (src/session/usage.ts): told sizes and kinds, never argument or result text to keep. */
export interface UsageRecorder {
  /** A tools/list was served: discover_tool's description and the whole list's tokens (the meter counts the same list once). */
  listed(list: Pick<FittedCatalog, "description" | "tokens">): void;
  /** A call was answered; `answer` is the text a meta-tool sent back (counted later, then dropped), absent for upstream tool calls. */
  called(kind: MetaCallKind, answer?: string): void;
}

/** Which kind of call a tools/call is, for the meter; undefined for an unknown name. Reads only whether `query` is given. */
function callKind(registry: UpstreamRegistry, name: string, raw: Record<string, unknown> | undefined): MetaCallKind | undefined {
  if (name === DISCOVER_TOOL) return raw?.["query"] !== undefined ? "search" : "lookup";
  if (name === LOAD_MCP) return registry.dynamic ? "load" : undefined;
  if (name === USE_TOOL || registry.promoted.includes(name)) return "tool";
  return undefined;
}

/** The tools/call handler, each answer told to the meter once made: its kind, and the text of a meta-tool's own answer. */
export function metered<R extends { params: { name: string; arguments?: Record<string, unknown> | undefined } }, E>(
  registry: UpstreamRegistry,
  meter: UsageRecorder | undefined,
  handler: (request: R, extra: E) => Promise<CallToolResult>,
): (request: R, extra: E) => Promise<CallToolResult> {
  if (!meter) return handler;
  return async (request, extra) => {
    const result = await handler(request, extra);
    const kind = callKind(registry, request.params.name, request.params.arguments);
    if (kind === "tool") meter.called(kind);
    else if (kind) meter.called(kind, result.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
    return result;
  };
}

/** discover_tool's search: the matching tools, and (unless narrowed to one loaded server) lazy servers that match. */
export async function searchAnswer(registry: UpstreamRegistry, args: { query: string; server?: string | undefined; limit?: number | undefined }): Promise<CallToolResult> {
  await registry.ensureEager();
  if (args.server !== undefined && !registry.ready().some((u) => u.name === args.server)) {
    const loaded = registry.ready().map((u) => u.name);
    return toolError("invalid_arguments", `No loaded server is named "${args.server}"; loaded: ${loaded.length ? loaded.join(", ") : "none"}.`);
  }
  const hits = searchCatalog(registry, args.query, { limit: args.limit, server: args.server });
  const servers = args.server === undefined ? searchLazyServers(registry, args.query, LAZY_HITS) : [];
  return {
    content: [{ type: "text", text: renderSearchHits(args.query, hits, servers) }],
    structuredContent: { query: args.query, tools: hits, ...(servers.length > 0 ? { servers } : {}) },
  };
}

/** discover_tool's lookup: one tool's whole definition, as text and structured. */
export async function detailsAnswer(registry: UpstreamRegistry, names: ToolNames, toolName: string): Promise<CallToolResult> {
  const target = await findTool(registry, names, toolName);
  if (isResult(target)) return target;
  const details = { ...target.tool, name: target.exposedName };
  return {
    content: [{ type: "text", text: renderToolDetails(details) }],
    structuredContent: defined({
      name: target.exposedName,
      title: target.tool.title,
      description: target.tool.description,
      inputSchema: target.tool.inputSchema,
      outputSchema: target.tool.outputSchema,
      annotations: target.tool.annotations,
    }),
  };
}

export function registerMetaTools(
  server: Server,
  registry: UpstreamRegistry,
  bridge: HostBridge,
  who: SessionIdentity,
  counter: () => Promise<TokenCounter>,
  links?: ToolResultLinks,
  meter?: UsageRecorder,
): void {
  const list = new ToolList(registry, metaDefinitions(registry.dynamic), counter, meter && ((fitted) => meter.listed(fitted)));
  server.setRequestHandler("tools/list", async () => {
    await registry.ensureEager();
    registry.retryFailed();
    return { tools: await list.tools() };
  });

  const names = registryNames(registry, LOAD_MCP);
  server.setRequestHandler("tools/call", metered(registry, meter, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: raw } = request.params;
    /** An upstream tool, by the name the host uses (through use_tool, or directly when promoted). */
    const callTool = (toolName: string, input: Record<string, unknown>): Promise<CallToolResult> =>
      callUpstreamTool({ registry, bridge, who, links }, names, toolName, input, request.params._meta?.progressToken, extra);
    registry.retryFailed();
    switch (name) {
      case DISCOVER_TOOL: {
        const args = parseArgs(DiscoverToolInput, raw, name);
        if (isResult(args)) return args;
        if (args.query !== undefined) return searchAnswer(registry, { ...args, query: args.query });
        return detailsAnswer(registry, names, args.tool_name ?? "");
      }
      case USE_TOOL: {
        const args = parseArgs(UseToolInput, raw, name);
        if (isResult(args)) return args;
        return callTool(args.tool_name, args.tool_input);
      }
      case LOAD_MCP: {

        if (!registry.dynamic) return toolError("unknown_tool", `Unknown tool: "${name}". This session has no lazy servers to load.`);
        const args = parseArgs(LoadMcpInput, raw, name);
        if (isResult(args)) return args;
        const started = Date.now();
        try {
          const outcome = await registry.load(args.mcp_name);
          if (outcome.changed) {
            log({ event: "load_mcp", ...who, upstream: args.mcp_name, ms: Date.now() - started, outcome: "ok" });
            // On this request's own stream (hosts without a GET stream still hear it), and on the GET stream.
            await bridge.announce(arrival(outcome.catalog), extra);
          }
          const listing = buildListing(registry.mode, args.mcp_name, outcome.catalog);
          return { content: [{ type: "text", text: JSON.stringify(listing) }], structuredContent: { ...listing } };
        } catch (err) {
          if (!(err instanceof LoadError)) throw err;
          // A name that is no server to load (a typo, or one already evicted) is answered but not logged.
          if (err.attempted) {
            log({ event: "load_mcp", ...who, upstream: args.mcp_name, ms: Date.now() - started, outcome: err.catalogChanged ? "evicted" : "failed" });
          }
          if (err.catalogChanged) await bridge.announce({ tools: true, resources: false, prompts: false }, extra);
          return toToolResult(err);
        }
      }
      default: {
        // A promoted tool is called by its own name, its arguments passed on as use_tool's tool_input would be.
        if (registry.promoted.includes(name)) return callTool(name, (raw ?? {}) as Record<string, unknown>);
        const offered = [DISCOVER_TOOL, USE_TOOL, ...(registry.dynamic ? [LOAD_MCP] : [])].join(", ");
        return toolError("unknown_tool", `Unknown tool: "${name}". This server offers ${offered}; upstream tools are called through ${USE_TOOL}.`);
      }
    }
  }));
}
