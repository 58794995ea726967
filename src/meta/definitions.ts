// The meta-tools' definitions as tools/list shows them (names, descriptions, input schemas from the zod inputs),
// discover_tool's description left for the list to fill in. Pure, so the benchmarks list exactly what sessions do.
import type { Tool } from "@modelcontextprotocol/server";
import { DiscoverToolInput, LoadMcpInput, UseToolInput, inputJsonSchema } from "./schemas.ts";

export const DISCOVER_TOOL = "discover_tool";
export const USE_TOOL = "use_tool";
export const LOAD_MCP = "load_mcp";
// Every session pays for these texts in context (BENCHMARKS.md, "Context tokens"): each word has to earn its place.
export const USE_TOOL_DESCRIPTION = "Calls a tool listed by discover_tool.";
export const LOAD_MCP_DESCRIPTION = "Loads a server listed under <mcp_servers>; its tools then join discover_tool's list.";

const discoverSchema = inputJsonSchema(DiscoverToolInput);
const useSchema = inputJsonSchema(UseToolInput);
const loadSchema = inputJsonSchema(LoadMcpInput);

/** The meta-tools other than discover_tool's description, which the list fills in. */
export interface MetaDefinitions {
  discover: Omit<Tool, "description">;
  rest: readonly Tool[];
  /** Names promoted tools may never take. */
  reserved: ReadonlySet<string>;
}

/** The meta-tools' definitions (load_mcp only with lazy servers). */
export function metaDefinitions(dynamic: boolean): MetaDefinitions {
  return {
    discover: { name: DISCOVER_TOOL, inputSchema: discoverSchema },
    rest: [
      { name: USE_TOOL, description: USE_TOOL_DESCRIPTION, inputSchema: useSchema },
      ...(dynamic ? [{ name: LOAD_MCP, description: LOAD_MCP_DESCRIPTION, inputSchema: loadSchema }] : []),
    ],
    reserved: new Set([DISCOVER_TOOL, USE_TOOL, LOAD_MCP]),
  };
}
