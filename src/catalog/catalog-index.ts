// Pure: the search index of one upstream's catalog as a view shows it (under a mode, a server name and its
// description): the tools it is made of, its key in the isolate's shared indexes (shared-indexes.ts) and the names a
// kept or stored index must show to be this catalog's.
import type { ConfigMode } from "../config/validate.ts";
import type { UpstreamCatalog } from "./catalog.ts";
import { toolDigests } from "./catalog-digest.ts";
import { exposedName } from "./names.ts";
import type { SearchInput } from "./search-index.ts";
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

/** The names the hits of that index show, in order. */
export const shownNames = (as: ShownAs, tools: UpstreamCatalog["tools"]): string[] => tools.map((tool) => exposedName(as.mode, as.server, tool.name));
