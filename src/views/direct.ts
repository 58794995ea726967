// The direct view: every tool the team may use, first-class under a host-safe name (src/catalog/direct-names.ts),
// paged, with the `_meta` hints hosts that search tools themselves read; calls go through the one call function
// (src/views/tool-call.ts), as use_tool's do. There are no meta-tools: lazy servers are loaded for the session at its
// first tools/list (or at the first call of one of their tools), since a host that defers tools itself has no use for
// a second, model-driven indirection. The 2026 era refuses this view: its list would change on a load.
import type { Tool } from "@modelcontextprotocol/server";
import { paginate } from "../relay/paging.ts";
import { DIRECT_SEPARATOR, ambiguousServers, directNames } from "../catalog/direct-names.ts";
import { oneLine } from "../catalog/render.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import { concealedName } from "./concealed-names.ts";
import type { ToolNames } from "./find-tool.ts";
import type { InputPort } from "./input-port.ts";
import { LazyLoads } from "./lazy-loads.ts";
import { callTool } from "./tool-call.ts";
import type { ToolView, ViewSession } from "./tool-view.ts";

/** Claude Code's keys (read by its MCP client for any server): a phrase its tool search matches, and "never defer". */
export const SEARCH_HINT_KEY = "anthropic/searchHint";
export const ALWAYS_LOAD_KEY = "anthropic/alwaysLoad";

/** What the direct view serves now: tools by their direct names, and the listing in name order. */
interface DirectIndex {
  byName: Map<string, ExposedTool>;
  listing: Tool[];
}

/** A few words a host's tool search can match: the server's name (config-file mode) and the description's first sentence. */
export function searchHint(mode: "multi" | "single", server: string, description: string | undefined): string | undefined {
  const words = [mode === "multi" ? server : "", oneLine(description)].filter((w) => w !== "").join(" ");
  return words === "" ? undefined : words;
}

/**
 * A tool as the direct view lists it: the upstream definition whole under its direct name, with the upstream's own
 * `_meta` except the two keys the proxy sets: the search hint, and always-load for the config's promoted tools
 * only (an upstream cannot make itself cost context in every session).
 */
function listed(registry: UpstreamRegistry, name: string, found: ExposedTool, promoted: ReadonlySet<string>): Tool {
  const { [SEARCH_HINT_KEY]: _hint, [ALWAYS_LOAD_KEY]: _always, ...upstreamMeta } = found.tool._meta ?? {};
  const hint = searchHint(registry.mode, found.upstream, found.tool.description);
  const meta = {
    ...upstreamMeta,
    ...(hint === undefined ? {} : { [SEARCH_HINT_KEY]: hint }),
    ...(promoted.has(found.exposedName) ? { [ALWAYS_LOAD_KEY]: true } : {}),
  };
  return { ...found.tool, name, _meta: meta };
}

/** The direct names of the tools the registry serves now, built once per registry index (a catalog change makes a new one). */
function indexer(registry: UpstreamRegistry): () => DirectIndex {
  // Which servers need hashed names depends on the whole config, never on which servers are loaded right now.
  const ambiguous = ambiguousServers(registry.servers);
  const promoted = new Set(registry.promoted);
  let built: { from: Map<string, ExposedTool>; index: DirectIndex } | undefined;
  return () => {
    const tools = registry.tools();
    if (built?.from === tools) return built.index;
    const names = directNames(
      registry.mode,
      [...tools.values()].map((t) => ({ server: t.upstream, tool: t.tool.name, registryName: t.exposedName })),
      ambiguous,
    );
    const byName = new Map<string, ExposedTool>();
    for (const [name, registryName] of names) byName.set(name, tools.get(registryName)!);
    const listing = [...byName.keys()].sort().map((name) => listed(registry, name, byName.get(name)!, promoted));
    built = { from: tools, index: { byName, listing } };
    return built.index;
  };
}

/** The configured upstream a direct name belongs to: the one upstream, or the longest server name it starts with. */
function serverOfDirect(registry: UpstreamRegistry, name: string): string | undefined {
  if (registry.mode === "single") return registry.serverOf(name);
  let best: string | undefined;
  for (const server of registry.servers) {
    if (name.startsWith(`${server}${DIRECT_SEPARATOR}`) && (best === undefined || server.length > best.length)) best = server;
  }
  return best;
}

/** The direct view: its list loads every lazy server first (at most EAGER_WAIT_MS), its calls go through the one call function. */
export function directView(session: ViewSession, rounds: InputPort): ToolView {
  const { registry, bridge, who, meter } = session;
  const index = indexer(registry);
  const lazy = new LazyLoads(registry, bridge, who);
  /** A name under a server the caller's policies hide whole (whose tools it never had): `server/<the rest of the name>`. */
  const hiddenServerTool = (name: string) => {
    const server = serverOfDirect(registry, name);
    return server !== undefined && registry.hidden(server) ? `${server}/${name.slice(server.length + DIRECT_SEPARATOR.length)}` : undefined;
  };
  const naming: ToolNames = {
    serverOf: (name) => serverOfDirect(registry, name),
    find: (name) => index().byName.get(name),
    names: () => [...index().byName.keys()],
    notLoaded: (name, upstream) => `Unknown tool: "${name}". The server "${upstream}" is not loaded yet; list the tools again to load it.`,
    concealed: (name) => concealedName(registry, name, (tools) => directNames(registry.mode, tools, ambiguousServers(registry.servers))) ?? hiddenServerTool(name),
  };
  return {
    list: async (cursor) => {
      await Promise.all([registry.ensureEager(), lazy.all()]);
      registry.retryFailed();
      const { listing } = index();
      lazy.listed = true;
      const { page, nextCursor } = paginate(listing, cursor);
      return nextCursor === undefined ? { tools: page } : { tools: page, nextCursor };
    },
    call: async ({ name, arguments: raw, _meta }, host) => {
      registry.retryFailed();
      // A tool of a lazy server not loaded yet (the host kept a name from an earlier session): its server is loaded now.
      const upstream = naming.serverOf(name);
      if (upstream !== undefined && naming.find(name) === undefined) {
        const failedLoad = await lazy.ensure(upstream, host);
        if (failedLoad) return failedLoad;
      }
      const answer = await callTool({ session, tool: { name, naming }, input: raw ?? {}, host, progressToken: _meta?.progressToken, rounds });
      // Counted as use_tool's calls are: a call of a tool the session has, whatever its outcome.
      if (naming.find(name) !== undefined) meter?.called("tool");
      return answer;
    },
  };
}
