// Pure: what an upstream offers (its catalog), the view discover_tool renders of all of them, and what changed
// between two readings of one catalog.
import type {
  Implementation,
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/server";
import type { ConfigMode } from "../config/validate.ts";
import type { KeptFailure } from "../lib/upstream-fault.ts";

/** What an upstream offers, as read right after connecting. Stored per session, so plain JSON. */
export interface UpstreamCatalog {
  serverInfo?: Implementation;
  protocolVersion?: string;
  capabilities: ServerCapabilities;
  instructions?: string;
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
  /** Best-effort lists that failed, with why (the tools were served all the same). */
  notes: string[];
  /** The team's policies hide this whole server from the object's caller: it is left out of every list and answer. */
  hiddenFromCaller?: true;
  /**
   * The upstream's names of the tools the caller's policies took out of `tools`: never shown or searched, only read
   * to record a call by a name the caller cannot see as a denial in the audit trail, whichever view named it.
   */
  hiddenTools?: string[];
}

/** A loaded upstream with its catalog (the registry hands these out in config order). */
export interface ReadyUpstream {
  name: string;
  catalog: UpstreamCatalog;
}

export interface CatalogTool {
  name: string;
  description?: string | undefined;
}

/** One upstream as the catalog shows it: its tools, or why it has none. */
export type CatalogGroup =
  | { server: string; state: "ready"; tools: readonly CatalogTool[]; description?: string | undefined }
  | ({ server: string; state: "unavailable" } & Pick<KeptFailure, "reason" | "kind">)
  /** An eager upstream whose first connection is still under way when the list is served. */
  | { server: string; state: "connecting" };

/** A lazy upstream not loaded yet (dynamic-discovery mode). */
export interface LazyServer {
  name: string;
  description: string;
}

/** Everything discover_tool's description shows, in config order (the rendering sorts). */
export interface CatalogView {
  mode: ConfigMode;
  groups: readonly CatalogGroup[];
  lazy: readonly LazyServer[];
  /** True when any entry of the config is lazy: the session then has load_mcp. */
  dynamic: boolean;
}

/** Which parts of the catalog a change touches (each part is a list the host is told changed). */
export interface CatalogChange {
  tools: boolean;
  resources: boolean;
  prompts: boolean;
}

/** The parts of the host's lists an upstream's arrival changes: its tools, and its resources and prompts if it has any. */
export function arrival(catalog: UpstreamCatalog): CatalogChange {
  return {
    tools: true,
    resources: catalog.resources.length + catalog.resourceTemplates.length > 0,
    prompts: catalog.prompts.length > 0,
  };
}

/** Which parts of a catalog differ between two readings. */
export function catalogChange(before: UpstreamCatalog, after: UpstreamCatalog): CatalogChange {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return {
    tools: !same(before.tools, after.tools),
    resources: !same(before.resources, after.resources) || !same(before.resourceTemplates, after.resourceTemplates),
    prompts: !same(before.prompts, after.prompts),
  };
}
