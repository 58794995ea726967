// The meta-tools a host sees (discover_tool, use_tool, and load_mcp in dynamic mode), wired onto the session's MCP server.
import type { Server } from "@modelcontextprotocol/server";
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { LoadError, ProxyError, UpstreamError, toToolResult, type ToolErrorKind } from "../errors.ts";
import { log } from "../log.ts";
import type { HostBridge } from "../forward/bridge.ts";
import { arrival } from "../catalog/catalog.ts";
import { buildListing, defined } from "../catalog/listing.ts";
import { oneLine, renderDiscoverDescription, renderSearchHits, renderToolDetails, renderUnknownTool } from "../catalog/render.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import { DiscoverToolInput, LoadMcpInput, UseToolInput, argumentErrors, inputJsonSchema } from "./schemas.ts";
import { searchCatalog } from "./tool-search.ts";

export const DISCOVER_TOOL = "discover_tool";
export const USE_TOOL = "use_tool";
export const LOAD_MCP = "load_mcp";
// Every session pays for these texts in context (BENCHMARKS.md, "Context tokens"): each word has to earn its place.
export const USE_TOOL_DESCRIPTION = "Calls a tool listed by discover_tool.";
export const LOAD_MCP_DESCRIPTION = "Loads a server listed under <mcp_servers>; its tools then join discover_tool's list.";

const discoverSchema = inputJsonSchema(DiscoverToolInput);
const useSchema = inputJsonSchema(UseToolInput);
const loadSchema = inputJsonSchema(LoadMcpInput);

/**
 * A tool failure of the proxy's own that the model can read and act on (protocol failures stay JSON-RPC errors):
 * its kind travels in `_meta` (src/errors.ts, `ERROR_META_KEY`).
 */
export function toolError(kind: ToolErrorKind, text: string, upstream?: string): CallToolResult {
  return toToolResult(new ProxyError(kind, text, upstream));
}

/**
 * The promoted tools the session can serve now, first-class: each upstream definition whole, under the name hosts
 * call it by. A name no loaded server offers (not loaded yet, filtered, withheld by a pin) is left out; a meta-tool's
 * name is never taken.
 */
function promotedTools(registry: UpstreamRegistry): Tool[] {
  const meta = new Set([DISCOVER_TOOL, USE_TOOL, LOAD_MCP]);
  const offered = registry.tools();
  return registry.promoted.flatMap((name) => {
    const found = meta.has(name) ? undefined : offered.get(name);
    return found ? [{ ...found.tool, name }] : [];
  });
}

function parseArgs<S extends z.ZodType>(schema: S, raw: unknown, tool: string): z.infer<S> | CallToolResult {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  return toolError("invalid_arguments", `Invalid arguments for ${tool}: ${argumentErrors(parsed.error)}`);
}

const isResult = (v: unknown): v is CallToolResult =>
  typeof v === "object" && v !== null && "isError" in v && "content" in v;

/** Who the session is, for log lines. */
export interface SessionIdentity {
  team: string;
  session: string;
}

/** Remembers which upstream's tool result linked which resources (ResourceLinks in src/forward/resource-links.ts). */
export interface ToolResultLinks {
  remember(upstream: string, result: CallToolResult): Promise<void>;
}

export function registerMetaTools(server: Server, registry: UpstreamRegistry, bridge: HostBridge, who: SessionIdentity, links?: ToolResultLinks): void {
  server.setRequestHandler("tools/list", async () => {
    await registry.ensureEager();
    registry.retryFailed();
    const tools: Tool[] = [
      { name: DISCOVER_TOOL, description: renderDiscoverDescription(registry.view()), inputSchema: discoverSchema },
      { name: USE_TOOL, description: USE_TOOL_DESCRIPTION, inputSchema: useSchema },
    ];
    if (registry.dynamic) tools.push({ name: LOAD_MCP, description: LOAD_MCP_DESCRIPTION, inputSchema: loadSchema });
    tools.push(...promotedTools(registry));
    return { tools };
  });

  server.setRequestHandler("tools/call", async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: raw } = request.params;
    /** An upstream tool, by the name the host uses (through use_tool, or directly when promoted). */
    const callTool = async (toolName: string, input: Record<string, unknown>): Promise<CallToolResult> => {
      const target = await findTool(registry, toolName);
      if (isResult(target)) return target;
      // A progress token of the host's travels upstream; the upstream's progress comes back under it.
      const token = request.params._meta?.progressToken;
      const onprogress =
        token === undefined
          ? undefined
          : (p: { progress: number; total?: number; message?: string }) =>
              void extra.mcpReq.notify({ method: "notifications/progress", params: { ...p, progressToken: token } }).catch(() => {});
      const started = Date.now();
      const done = (outcome: "ok" | "tool_error" | "failed") =>
        log({ event: "tool_call", ...who, upstream: target.upstream, tool: target.tool.name, ms: Date.now() - started, outcome });
      try {
        const result = await bridge.during(target.upstream, extra, () =>
          registry.call(target, input, { signal: extra.mcpReq.signal, ...(onprogress ? { onprogress } : {}) }),
        );
        done(result.isError ? "tool_error" : "ok");
        // A resource the result links to and no list claims is routed back to this upstream later.
        await links?.remember(target.upstream, result);
        return result;
      } catch (err) {
        done("failed");
        if (err instanceof UpstreamError) return toToolResult(err, `${toolName} failed: ${err.message}`);
        throw err;
      }
    };
    registry.retryFailed();
    switch (name) {
      case DISCOVER_TOOL: {
        const args = parseArgs(DiscoverToolInput, raw, name);
        if (isResult(args)) return args;
        if (args.query !== undefined) {
          await registry.ensureEager();
          if (args.server !== undefined && !registry.ready().some((u) => u.name === args.server)) {
            const loaded = registry.ready().map((u) => u.name);
            return toolError("invalid_arguments", `No loaded server is named "${args.server}"; loaded: ${loaded.length ? loaded.join(", ") : "none"}.`);
          }
          const hits = searchCatalog(registry, args.query, { limit: args.limit, server: args.server });
          return { content: [{ type: "text", text: renderSearchHits(args.query, hits) }], structuredContent: { query: args.query, tools: hits } };
        }
        const target = await findTool(registry, args.tool_name ?? "");
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
  });
}

/**
 * A tool by the name the host uses, once its upstream is in (an eager upstream still connecting is waited for,
 * within its connect deadline). A tool of an eager upstream that is
 * unavailable in this session sends that upstream one more attempt now (within its reconnect budget) rather than
 * waiting for the background retry; if it still cannot be reached, the answer says so, and why.
 */
async function findTool(registry: UpstreamRegistry, name: string): Promise<ExposedTool | CallToolResult> {
  // A call waits for its own upstream only: another one that is slow or hangs delays nothing here.
  void registry.ensureEager();
  const server = registry.serverOf(name);
  if (server !== undefined && registry.connecting(server)) await registry.settled(server);
  else if (server === undefined) await registry.ensureEager();
  const found = registry.tools().get(name);
  if (found) return found;
  if (server === undefined || registry.unavailable(server) === undefined) return unknownTool(registry, name, server);
  const { throttled } = await registry.retryNow(server);
  const again = registry.tools().get(name);
  if (again) return again;
  const reason = registry.unavailable(server);
  if (reason === undefined) return unknownTool(registry, name, server);
  const tried = throttled ? `it was not tried again: ${throttled.message}` : "it was just tried again";
  return toolError(
    "unavailable",
    `"${name}" cannot be called now: the server "${server}" is unavailable (${oneLine(reason)}); ${tried}. ` +
      "Its tools return to the catalog once it answers.",
    server,
  );
}

/** Unknown names get the closest known ones; a tool of a server not loaded yet says to load it first. */
function unknownTool(registry: UpstreamRegistry, name: string, server: string | undefined): CallToolResult {
  if (server && registry.loadable().some((spec) => spec.name === server)) {
    return toolError("unknown_tool", `Unknown tool: "${name}". The server "${server}" is not loaded yet: call ${LOAD_MCP} with mcp_name "${server}" first.`, server);
  }
  return toolError("unknown_tool", renderUnknownTool(name, [...registry.tools().keys()]));
}

