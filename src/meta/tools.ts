// The meta-tools a host sees (discover_tool, use_tool), wired onto the session's MCP server.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { UpstreamError } from "../errors.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { renderDiscoverDescription, renderToolDetails, renderUnknownTool } from "./render.ts";
import { DiscoverToolInput, UseToolInput, argumentErrors, inputJsonSchema } from "./schemas.ts";

export const DISCOVER_TOOL = "discover_tool";
export const USE_TOOL = "use_tool";
export const USE_TOOL_DESCRIPTION = "Use a tool that was previously discovered with the discover_tool tool.";

const discoverSchema = inputJsonSchema(DiscoverToolInput);
const useSchema = inputJsonSchema(UseToolInput);

/** A tool failure the model can read and act on (protocol failures stay JSON-RPC errors). */
export function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

function parseArgs<S extends z.ZodType>(schema: S, raw: unknown, tool: string): z.infer<S> | CallToolResult {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  return toolError(`Invalid arguments for ${tool}: ${argumentErrors(parsed.error)}`);
}

const isResult = (v: unknown): v is CallToolResult =>
  typeof v === "object" && v !== null && "isError" in v && "content" in v;

export function registerMetaTools(server: Server, registry: UpstreamRegistry): void {
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    await registry.ensureEager();
    const tools: Tool[] = [
      { name: DISCOVER_TOOL, description: renderDiscoverDescription(registry.view()), inputSchema: discoverSchema },
      { name: USE_TOOL, description: USE_TOOL_DESCRIPTION, inputSchema: useSchema },
    ];
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: raw } = request.params;
    switch (name) {
      case DISCOVER_TOOL: {
        const args = parseArgs(DiscoverToolInput, raw, name);
        if (isResult(args)) return args;
        await registry.ensureEager();
        const target = registry.tools().get(args.tool_name);
        if (!target) return toolError(renderUnknownTool(args.tool_name, [...registry.tools().keys()]));
        const details = { ...target.tool, name: target.exposedName };
        return {
          content: [{ type: "text", text: renderToolDetails(details) }],
          structuredContent: pickDefined({
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
        await registry.ensureEager();
        const target = registry.tools().get(args.tool_name);
        if (!target) return toolError(renderUnknownTool(args.tool_name, [...registry.tools().keys()]));
        try {
          return await registry.call(target, args.tool_input, extra.signal);
        } catch (err) {
          if (err instanceof UpstreamError) return toolError(`${args.tool_name} failed: ${err.message}`);
          throw err;
        }
      }
      default:
        return toolError(`Unknown tool: "${name}". This server offers ${DISCOVER_TOOL} and ${USE_TOOL}.`);
    }
  });
}

function pickDefined(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}
