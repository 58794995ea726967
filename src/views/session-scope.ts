// The meta view's scope in a 2025 session: the session is what load_mcp loads into, so its tools/list shows what it
// loaded (the catalog fitted to the budget, the promoted tools first-class) and a load is announced with
// list_changed, on the load's own stream and the host's GET stream.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { LoadError, toToolResult } from "../lib/errors.ts";
import type { HostExtra } from "../relay/bridge.ts";
import { arrival } from "../catalog/catalog.ts";
import { buildListing } from "../catalog/listing.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL, metaDefinitions } from "./definitions.ts";
import { registryNames } from "./find-tool.ts";
import { loggedLoad } from "./lazy-loads.ts";
import type { MetaScope } from "./meta-view.ts";
import { DiscoverToolInput, LoadMcpInput, UseToolInput } from "./schemas.ts";
import { isResult, parseArgs, toolError } from "./tool-errors.ts";
import { ToolList } from "./tool-list.ts";
import type { ViewSession } from "./tool-view.ts";

/** The session's own scope: its list lives as long as the session's runtime (remembered while unchanged). */
export function sessionScope(session: ViewSession): MetaScope {
  const { registry, meter, counter } = session;
  const list = new ToolList(registry, metaDefinitions(registry.dynamic), counter, meter && ((fitted) => meter.listed(fitted)));
  return {
    list: async () => {
      await registry.ensureEager();
      registry.retryFailed();
      return { tools: await list.tools() };
    },
    discoverInput: DiscoverToolInput,
    useInput: UseToolInput,
    names: registryNames(registry, LOAD_MCP),
    refusal: () => undefined,
    load: (raw, host) => loadIntoSession(session, raw, host),
    promoted: registry.promoted,
    offered: [DISCOVER_TOOL, USE_TOOL, ...(registry.dynamic ? [LOAD_MCP] : [])].join(", "),
  };
}

/** load_mcp in a session: the server's tools join the session's, announced at once; a failure is an isError result. */
async function loadIntoSession({ registry, bridge, who, audit, counter }: ViewSession, raw: Record<string, unknown> | undefined, host: HostExtra): Promise<CallToolResult> {
  if (!registry.dynamic) return toolError("unknown_tool", `Unknown tool: "${LOAD_MCP}". This session has no lazy servers to load.`);
  const args = parseArgs(LoadMcpInput, raw, LOAD_MCP);
  if (isResult(args)) return args;
  try {
    const outcome = await loggedLoad(registry, who, args.mcp_name, { session: audit, host });
    // On this request's own stream (hosts without a GET stream still hear it), and on the GET stream.
    if (outcome.changed) await bridge.announce(arrival(outcome.catalog), host);
    const { text, structured } = buildListing(registry.mode, args.mcp_name, outcome.catalog, await counter(), { first: `Loaded "${args.mcp_name}".` });
    return { content: [{ type: "text", text }], structuredContent: structured };
  } catch (err) {
    if (!(err instanceof LoadError)) throw err;
    if (err.catalogChanged) await bridge.announce({ tools: true, resources: false, prompts: false }, host);
    return toToolResult(err);
  }
}
