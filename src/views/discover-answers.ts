// discover_tool's answers, the same in every era: a search of the loaded catalogs (with lazy servers that match),
// one server's index (every tool named, a line each) and one tool's whole definition.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { defined } from "../catalog/listing.ts";
import { renderSearchHits, renderToolDetails, type ToolDetails } from "../catalog/render.ts";
import { closestServers, renderNothingUseful } from "../catalog/render-nothing-useful.ts";
import { serverIndex } from "../catalog/server-index.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import { DISCOVER_TOOL, LOAD_MCP } from "./definitions.ts";
import { findTool, type ToolNames } from "./find-tool.ts";
import { searchLazyServers } from "./server-search.ts";
import { isResult, toolError } from "./tool-errors.ts";
import type { SearchEmbedder } from "./semantic-stage.ts";
import { searchCatalog } from "./tool-search.ts";

/** At most this many servers not loaded yet come with a search's answer. */
export const LAZY_HITS = 3;

/**
 * discover_tool's search: the matching tools (by meaning too with the team's semantic stage), and (unless narrowed to
 * one loaded server) lazy servers that match.
 */
export async function searchAnswer(
  registry: UpstreamRegistry,
  names: ToolNames,
  args: { query: string; server?: string | undefined; limit?: number | undefined },
  semantic?: SearchEmbedder | undefined,
): Promise<CallToolResult> {
  await registry.ensureEager();
  if (args.server !== undefined && !registry.ready().some((u) => u.name === args.server)) return serverNotLoaded(registry, names, args.server);
  const { hits, judged } = await searchCatalog(registry, args.query, { limit: args.limit, server: args.server }, semantic);
  const servers = args.server === undefined ? searchLazyServers(registry, args.query, LAZY_HITS) : [];
  const lazyServers = servers.length > 0 ? { servers } : {};
  if (judged.useful) {
    return { content: [{ type: "text", text: renderSearchHits(args.query, hits, servers) }], structuredContent: { query: args.query, tools: hits, ...lazyServers } };
  }
  // Nothing loaded does it: said first, with the servers to look in and the weak hits marked as weak.
  const closest = closestServers(hits, servers, (name) => registry.description(name));
  const text = renderNothingUseful(args.query, closest, hits, META_WORDING);
  return { content: [{ type: "text", text }], structuredContent: { query: args.query, tools: hits, ...lazyServers, useful: false, closest } };
}

/** How discover_tool's nothing-useful answer names servers and the calls that open them. */
const META_WORDING = {
  thing: "tool",
  shown: (server: string) => server,
  openLoaded: `${DISCOVER_TOOL} {"server": "<name>"}`,
  openLazy: `${LOAD_MCP} {"mcp_name": "<name>"}`,
};

/** A server named by a call that reaches no loaded one: the era's load hint for a lazy one, else the servers there are. */
function serverNotLoaded(registry: UpstreamRegistry, names: ToolNames, server: string): CallToolResult {
  // A lazy server the caller may load is named with the call that loads it (its scope's, by era).
  if (names.lazyServer && registry.loadable().some((spec) => spec.name === server)) return toolError("invalid_arguments", names.lazyServer(server));
  const loaded = registry.ready().map((u) => u.name);
  const lazy = registry.loadable().map((spec) => spec.name);
  const there = `${loaded.length ? loaded.join(", ") : "none"}${lazy.length ? `; not loaded yet: ${lazy.join(", ")}` : ""}`;
  return toolError("invalid_arguments", `No loaded server is named "${server}"; loaded: ${there}.`);
}

/**
 * discover_tool with `server` alone: every tool of that loaded server named, with what it does in a few words, its
 * text and structured form each within SERVER_INDEX_TOKENS.
 */
export async function indexAnswer(registry: UpstreamRegistry, names: ToolNames, server: string, counter: TokenCounter): Promise<CallToolResult> {
  await registry.ensureEager();
  const upstream = registry.ready().find((u) => u.name === server);
  if (upstream === undefined) return serverNotLoaded(registry, names, server);
  const { text, structured } = serverIndex(registry.mode, server, registry.description(server), upstream.catalog.tools, counter);
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** What the lookup says of a tool whose calls wait for the user's consent (so the agent can tell the user why). */
export const ASKS_FIRST = "Each call of this tool waits for the user's consent: the host asks them before it is made.";

/**
 * discover_tool's lookup: one tool's whole definition, as text and structured; `asks`: whether the caller's policies
 * make each call of it wait for the user's consent (said after the definition, and `needsApproval` structured).
 */
export async function detailsAnswer(registry: UpstreamRegistry, names: ToolNames, toolName: string, asks: (found: ExposedTool) => boolean = () => false): Promise<CallToolResult> {
  const target = await findTool(registry, names, toolName);
  if (isResult(target)) return target;
  return lookupAnswer({ ...target.tool, name: target.exposedName }, asks(target));
}

/**
 * A tool's definition as the lookup answers it, under the name the caller uses. Each of the text and the structured
 * content costs at most its schemas (minified) and description plus 150 tokens (checked over the corpus's tools).
 */
export function lookupAnswer(details: ToolDetails, needsApproval: boolean): CallToolResult {
  return {
    content: [{ type: "text", text: needsApproval ? `${renderToolDetails(details)}\n${ASKS_FIRST}` : renderToolDetails(details) }],
    structuredContent: defined({
      name: details.name,
      title: details.title,
      description: details.description,
      inputSchema: details.inputSchema,
      outputSchema: details.outputSchema,
      annotations: details.annotations,
      needsApproval: needsApproval || undefined,
    }),
  };
}
