// The meta-tools' inputs: one zod schema each; the JSON Schema hosts see is generated from it.
import * as z from "zod";

// Names carry no description: the tools' own descriptions say what they name (server/tool, <mcp_servers>), and
// every session pays for each word here in context (BENCHMARKS.md, "Context tokens"). A query has one (below).
/** A search of the catalog, as discover_tool takes it (and the dashboard's tools page). */
export const SearchQuery = z.string().max(1000);

/**
 * The one field that says how to fill it (discover_tool's and the code view's search): the search matches words and
 * meaning of what tools do, so an agent's request in its own words finds more than a guessed tool name does. 24 o200k
 * tokens: the dynamic mode's whole tools/list had 27 to spare under its goal (1% of the direct tools', bench:tokens).
 */
export const QUERY_DESCRIPTION = 'Action, object and product in your words ("refund a stripe charge"), not a tool name.';

const discoverFields = {
  tool_name: z.string().optional(),
  query: SearchQuery.describe(QUERY_DESCRIPTION).optional(),
  server: z.string().optional(),
  limit: z.number().int().min(1).max(25).optional(),
};

// With neither tool_name nor query, `server` alone asks for that server's index.
export const DiscoverToolInput = z
  .object(discoverFields)
  .refine((a) => (a.tool_name === undefined ? a.query !== undefined || a.server !== undefined : a.query === undefined), {
    message: "give tool_name, query, or server alone",
  });

const useFields = {
  tool_name: z.string(),
  tool_input: z.record(z.string(), z.unknown()).default({}).describe("The tool's arguments"),
};
export const UseToolInput = z.object(useFields);

export const LoadMcpInput = z.object({
  mcp_name: z.string(),
});

// The 2026-07-28 era's meta-tools (src/modern/): no session remembers what was loaded, so a toolset handle that
// load_mcp returns is passed back; discover_tool without tool_name or query answers the catalog itself.
const toolset = z.string().max(200).optional();

export const ToolsetDiscoverInput = z
  .object({ ...discoverFields, toolset })
  .refine((a) => a.tool_name === undefined || a.query === undefined, { message: "give tool_name or query, not both" });

export const ToolsetUseInput = z.object({ ...useFields, toolset });

export const ToolsetLoadInput = LoadMcpInput.extend({ toolset });

type JsonObjectSchema = { type: "object"; [key: string]: unknown };

/**
 * The input schema as hosts see it, lean because every session pays for it in context: what a caller may send
 * (defaulted fields optional, their defaults applied by the proxy), a free-form record as a plain `object`.
 */
export function inputJsonSchema(schema: z.ZodType): JsonObjectSchema {
  const json = z.toJSONSchema(schema, {
    io: "input",
    override: ({ jsonSchema }) => {
      const js = jsonSchema as Record<string, unknown>;
      const extra = js.additionalProperties;
      if (typeof extra === "object" && extra !== null && Object.keys(extra).length === 0) {
        delete js.additionalProperties;
        delete js.propertyNames;
      }
      delete js.default;
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return { ...json, type: "object" };
}

/** Readable reasons for bad meta-tool arguments: `tool_name: expected string`. */
export function argumentErrors(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "arguments"}: ${issue.message}`)
    .join("; ");
}
