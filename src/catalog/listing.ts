// Pure: what load_mcp answers: a server's tools (by their exposed names, no schemas), resources, templates and prompts.
import type { ConfigMode } from "../config/validate.ts";
import type { UpstreamCatalog } from "./catalog.ts";
import { exposedName } from "./names.ts";
import { oneLine } from "./render.ts";

export interface McpListing {
  mcp_name: string;
  tools: Array<{ name: string; description: string }>;
  resources: Array<{ uri: string; name: string; description?: string; mimeType?: string }>;
  resource_templates: Array<{ uriTemplate: string; name: string; description?: string; mimeType?: string }>;
  prompts: Array<{ name: string; description?: string; arguments?: unknown[] }>;
  /** Best-effort lists that failed (they are empty above), with why. */
  notes?: string[];
}

/** Keeps only the keys whose value is defined, so absent fields stay absent in JSON. */
export function defined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

export function buildListing(mode: ConfigMode, name: string, catalog: UpstreamCatalog): McpListing {
  const listing: McpListing = {
    mcp_name: name,
    tools: catalog.tools.map((t) => ({ name: exposedName(mode, name, t.name), description: oneLine(t.description) })),
    resources: catalog.resources.map((r) =>
      defined({ uri: r.uri, name: r.name, description: r.description, mimeType: r.mimeType }),
    ),
    resource_templates: catalog.resourceTemplates.map((r) =>
      defined({ uriTemplate: r.uriTemplate, name: r.name, description: r.description, mimeType: r.mimeType }),
    ),
    prompts: catalog.prompts.map((p) => defined({ name: p.name, description: p.description, arguments: p.arguments })),
  };
  if (catalog.notes.length > 0) listing.notes = catalog.notes;
  return listing;
}
