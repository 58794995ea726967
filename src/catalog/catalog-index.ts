// Pure: the search index of one upstream's catalog as a view shows it (under a mode, a server name and its
// description): the tools it is made of, its key in the isolate's shared indexes (shared-indexes.ts) and the names a
// kept or stored index must show to be this catalog's.
import type { ConfigMode } from "../config/validate.ts";
import type { UpstreamCatalog } from "./catalog.ts";
import { toolDigests } from "./catalog-digest.ts";
import { exposedName } from "./names.ts";
import type { SearchInput, ToolIndex } from "./search-index.ts";
import { indexKey } from "./shared-indexes.ts";

/** How a catalog is shown: the mode its names are made under, its server's name and description. */
export interface ShownAs {
  mode: ConfigMode;
  server: string;
  description: string | undefined;
}

/** What the index of `tools` shown as `as` is made of. */
export function catalogInputs(as: ShownAs, tools: UpstreamCatalog["tools"]): SearchInput[] {
  return tools.map((tool) => ({
    name: exposedName(as.mode, as.server, tool.name),
    server: as.server,
    serverDescription: as.description,
    tool: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
}

/** The parts of how a catalog is shown that its key is made of. */
export const shownParts = (as: ShownAs): string[] => [as.mode, as.server, as.description ?? "\u0000"];

/** The key of the index of `tools` shown as `as`, from the tools' digests (no text read when they came with them). */
export const catalogIndexKey = (as: ShownAs, tools: UpstreamCatalog["tools"]): string => indexKey(shownParts(as), toolDigests(tools));

/**
 * Whether `index` shows `tools` as `as` shows them (their exposed names and server, in order): a hit never names a
 * tool of another catalog, whatever the key. No name is made (20,000 of them at a new session's first search).
 */
export function showsCatalog(index: ToolIndex, as: ShownAs, tools: UpstreamCatalog["tools"]): boolean {
  if (index.tools.length !== tools.length) return false;
  // As exposedName names them: `server/tool`, or the bare name in single-MCP mode.
  const prefix = as.mode === "single" ? undefined : as.server;
  for (let i = 0; i < tools.length; i++) {
    if (index.tools.server(i) !== as.server || !index.tools.nameIsIn(i, prefix, tools[i]!.name)) return false;
  }
  return true;
}
