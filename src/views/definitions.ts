// The meta-tools' definitions as tools/list shows them (names, descriptions, input schemas from the zod inputs),
// discover_tool's description left for the list to fill in. Pure, so the benchmarks list exactly what sessions do.
import type { Tool } from "@modelcontextprotocol/server";
import { DiscoverToolInput, LoadMcpInput, ToolsetDiscoverInput, ToolsetLoadInput, ToolsetUseInput, UseToolInput, inputJsonSchema } from "./schemas.ts";

export const DISCOVER_TOOL = "discover_tool";
export const USE_TOOL = "use_tool";
export const LOAD_MCP = "load_mcp";
// Every session pays for these texts in context (BENCHMARKS.md, "Context tokens"): each word has to earn its place.
export const USE_TOOL_DESCRIPTION = "Calls a tool listed by discover_tool.";
export const LOAD_MCP_DESCRIPTION = "Loads a server listed under <mcp_servers>; its tools then join discover_tool's list.";

const discoverSchema = inputJsonSchema(DiscoverToolInput);
const useSchema = inputJsonSchema(UseToolInput);
const loadSchema = inputJsonSchema(LoadMcpInput);

/** The meta-tools' names, which promoted tools may never take. */
export const META_NAMES: ReadonlySet<string> = new Set([DISCOVER_TOOL, USE_TOOL, LOAD_MCP]);

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
    reserved: META_NAMES,
  };
}

// The 2026-07-28 era's meta-tools (src/modern/): the same three names, always all three. discover_tool's description
// is the team's catalog (src/modern/tool-list.ts), which a modern tools/list may carry since it does not change as a
// side effect of other requests: what load_mcp adds lives in a toolset, reached with its handle.
export const MODERN_USE_DESCRIPTION = "Calls a tool discover_tool lists (tool_name as listed); pass toolset for a tool of a server you loaded.";

/** A lifetime in the largest whole unit that fits it: "24 hours", "90 minutes". */
function lifetimeText(seconds: number): string {
  const units: Array<[number, string]> = [[86_400, "day"], [3_600, "hour"], [60, "minute"], [1, "second"]];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${unit}${n === 1 ? "" : "s"}`;
    }
  }
  return `${seconds} seconds`;
}

/** load_mcp's description states how long the handle it returns lives (the specification asks for it). */
export const modernLoadDescription = (lifetimeSeconds: number): string =>
  `Loads a server discover_tool lists as loadable; returns its tools and a toolset handle, valid for ${lifetimeText(lifetimeSeconds)}, to pass to discover_tool and use_tool. Pass a toolset to add the server to it.`;

const modernSchemas = {
  discover: inputJsonSchema(ToolsetDiscoverInput),
  use: inputJsonSchema(ToolsetUseInput),
  load: inputJsonSchema(ToolsetLoadInput),
};

/** The modern tools/list's meta-tools, in this order, whatever is loaded anywhere; discover_tool's description left to fill in. */
export function modernDefinitions(lifetimeSeconds: number): Pick<MetaDefinitions, "discover" | "rest"> {
  return {
    discover: { name: DISCOVER_TOOL, inputSchema: modernSchemas.discover },
    rest: [
      { name: USE_TOOL, description: MODERN_USE_DESCRIPTION, inputSchema: modernSchemas.use },
      { name: LOAD_MCP, description: modernLoadDescription(lifetimeSeconds), inputSchema: modernSchemas.load },
    ],
  };
}
