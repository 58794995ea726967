// The meta view's scope in the 2026 era, which has no sessions: what load_mcp loads lives in a toolset, whose handle
// the client passes back (src/edge/mcp/toolset-handle.ts mints and checks it; the router sends each request to the
// toolset's own object). The era's tools/list shows the team's catalog alone (src/modern/tool-list.ts), so
// discover_tool without arguments answers the live catalog with the toolset's servers, and a load answers the handle.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { LoadError, toToolResult } from "../lib/errors.ts";
import { fitCatalog } from "../catalog/budget.ts";
import type { CatalogView } from "../catalog/catalog.ts";
import { buildListing } from "../catalog/listing.ts";
import { TOOLSET_WORDING, oneLine, type CatalogShape } from "../catalog/render.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL } from "../views/definitions.ts";
import { registryNames, type ToolNames } from "../views/find-tool.ts";
import { loggedLoad } from "../views/lazy-loads.ts";
import type { MetaScope } from "../views/meta-view.ts";
import { ToolsetDiscoverInput, ToolsetLoadInput, ToolsetUseInput } from "../views/schemas.ts";
import { isResult, parseArgs, toolError } from "../views/tool-errors.ts";
import type { ToolListAnswer, ViewSession } from "../views/tool-view.ts";
import type { HostExtra } from "../relay/bridge.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";

/** What the router learned of the request's toolset handle (ROUTE_HEADERS.toolset*). */
export interface ToolsetRoute {
  /** The handle of the toolset this object holds, checked by the router, and when it expires. */
  handle?: { value: string; expiresAt: string };
  /** Why the handle the request carried was refused: the sentence the caller gets. */
  problem?: string;
}

/** The scope of one 2026 request: the object's list (the team's catalog: src/modern/tool-list.ts), the toolset the router found for it. */
export function toolsetScope(session: ViewSession, list: () => Promise<ToolListAnswer>, route: ToolsetRoute): MetaScope {
  const { registry } = session;
  return {
    list,
    discoverInput: ToolsetDiscoverInput,
    useInput: ToolsetUseInput,
    names: toolsetNames(registry, route),
    // A handle the router refused: said before anything else, whatever the tool.
    refusal: (raw) => (route.problem && typeof raw?.["toolset"] === "string" ? toolError("invalid_toolset", route.problem) : undefined),
    catalog: () => catalogAnswer(session, route),
    load: (raw, host) => loadIntoToolset(session, route, raw, host),
    // The config's promoted tools, listed whole beside the meta-tools (src/modern/tool-list.ts), called by their names.
    promoted: registry.promoted,
    offered: `${DISCOVER_TOOL}, ${USE_TOOL} and ${LOAD_MCP}`,
  };
}

/** The registry's names, with the era's answer for a tool of a server that is not loaded: which load_mcp to make. */
function toolsetNames(registry: UpstreamRegistry, route: ToolsetRoute): ToolNames {
  const names = registryNames(registry, LOAD_MCP);
  return {
    ...names,
    notLoaded: (name, server) => {
      const call = JSON.stringify(route.handle ? { mcp_name: server, toolset: route.handle.value } : { mcp_name: server });
      const then = route.handle ? "then call this again with the same toolset" : "then pass the toolset it returns to use_tool";
      return `Unknown tool: "${name}". Its server "${server}" is not loaded${route.handle ? " in this toolset" : ""}: call ${LOAD_MCP} ${call}, ${then}.`;
    },
    // The era keeps no session: a server loaded a moment ago is in the toolset whose handle load_mcp returned, and
    // only a request that passes it finds the server there.
    lazyServer: (server) =>
      `The server "${server}" is lazy and not in this request's toolset: pass the \`toolset\` that ${LOAD_MCP} returned, or call ${LOAD_MCP} ${JSON.stringify(route.handle ? { mcp_name: server, toolset: route.handle.value } : { mcp_name: server })}.`,
  };
}

/** The toolset a request works in, as structured content (absent without a handle). */
const toolsetOf = (route: ToolsetRoute) => (route.handle ? { toolset: route.handle.value, toolsetExpiresAt: route.handle.expiresAt } : {});

/** discover_tool without arguments: the live catalog (the toolset's servers with it) within the budget, as text and structured. */
async function catalogAnswer({ registry, counter }: ViewSession, route: ToolsetRoute): Promise<CallToolResult> {
  await registry.ensureEager();
  const view = registry.view();
  const listed = (description: string) => [{ name: DISCOVER_TOOL, description, inputSchema: { type: "object" as const } }];
  const fitted = fitCatalog(view, registry.catalogBudget, listed, await counter(), TOOLSET_WORDING);
  return {
    content: [{ type: "text", text: fitted.description }],
    structuredContent: { ...structuredCatalog(view, fitted.shape), ...toolsetOf(route) },
  };
}

/** The catalog's structured form: what the text shows, by server (tool names only where the text lists them). */
function structuredCatalog(view: CatalogView, shape: CatalogShape) {
  const servers = view.groups
    .filter((g) => !shape.hidden.has(g.server))
    .map((g) => {
      if (g.state === "unavailable") return { name: g.server, state: g.state, reason: oneLine(g.reason) };
      if (g.state === "connecting") return { name: g.server, state: g.state };
      return shape.detail.get(g.server) === "summary"
        ? { name: g.server, state: g.state, toolCount: g.tools.length }
        : { name: g.server, state: g.state, tools: g.tools.map((t) => t.name) };
    });
  const loadable = view.lazy.filter((s) => !shape.lazyHidden.has(s.name)).map((s) => ({ name: s.name, description: oneLine(s.description) }));
  const hidden = view.groups.length - servers.length + view.lazy.length - loadable.length;
  return { servers, loadable, ...(hidden > 0 ? { more: hidden } : {}) };
}

/** load_mcp into the request's toolset: the listing and the handle; a failure says how to try again in the same toolset. */
async function loadIntoToolset({ registry, who, audit, counter }: ViewSession, route: ToolsetRoute, raw: Record<string, unknown> | undefined, host: HostExtra): Promise<CallToolResult> {
  const args = parseArgs(ToolsetLoadInput, raw, LOAD_MCP);
  if (isResult(args)) return args;
  if (!registry.dynamic) return toolError("unknown_server", `This team has no lazy servers: every tool discover_tool lists is callable with ${USE_TOOL} as it is.`);
  // The router gives every load a toolset: the one passed, or a new one.
  if (!route.handle) return toolError("invalid_toolset", "This request reached no toolset; call load_mcp again.");
  try {
    const outcome = await loggedLoad(registry, who, args.mcp_name, { session: audit, host });
    // The handle first, in the text's first line too: an agent that reads the start of an answer keeps it.
    const first = `Loaded "${args.mcp_name}" into toolset "${route.handle.value}": pass "toolset": "${route.handle.value}" with ${USE_TOOL} and ${DISCOVER_TOOL} to reach its tools.`;
    const era = { first, lead: toolsetOf(route), toolset: route.handle.value };
    const { text, structured } = buildListing(registry.mode, args.mcp_name, outcome.catalog, await counter(), era);
    return { content: [{ type: "text", text }], structuredContent: structured };
  } catch (err) {
    if (!(err instanceof LoadError)) throw err;
    // Failures count per toolset (three strikes evict): a retry must name the same one.
    const retry = err.kind === "load_failed" ? ` To try again, call ${LOAD_MCP} with toolset "${route.handle.value}".` : "";
    const result = toToolResult(err, err.message + retry);
    return err.kind === "load_failed" ? { ...result, structuredContent: toolsetOf(route) } : result;
  }
}
