// Pure: what of an upstream's catalog the team may see: text made safe, malformed names skipped, allow/deny filters.
import { toolGlobMatcher } from "../config/tool-globs.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import type { UpstreamCatalog } from "../catalog/catalog.ts";

/** MCP tool names (2025-11-25): 1–128 of letters, digits, `_`, `-`, `.` and `/`. */
export const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;
/** Full tool descriptions are kept (discover_tool shows them) but capped. */
export const MAX_DESCRIPTION = 8_000;

// Control characters (but tab and newline), zero-width characters and bidirectional overrides: invisible text
// an upstream could use to hide instructions from the people reading a catalog.
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

export function safeText(text: string, max: number): string {
  const clean = text.replace(UNSAFE, "");
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** Whether a tool passes the entry's filters: allowed (when an allow list is given) and not denied. */
export function toolVisible(spec: UpstreamSpec, name: string): boolean {
  const { allow, deny } = spec.tools ?? {};
  if (deny?.length && toolGlobMatcher(deny)(name)) return false;
  if (allow?.length) return toolGlobMatcher(allow)(name);
  return true;
}

/** The catalog as the team sees it; skipped tools are noted (names shown safe and short). */
export function applyToolPolicy(spec: UpstreamSpec, catalog: UpstreamCatalog): UpstreamCatalog {
  const notes = [...catalog.notes];
  const tools = catalog.tools.flatMap((tool) => {
    if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
      notes.push(`tool ${JSON.stringify(safeText(String(tool.name), 60))} skipped: its name does not fit the MCP tool-name rules`);
      return [];
    }
    if (!toolVisible(spec, tool.name)) return [];
    const description = tool.description === undefined ? undefined : safeText(tool.description, MAX_DESCRIPTION);
    const title = tool.title === undefined ? undefined : safeText(tool.title, 200);
    return [{ ...tool, ...(description === undefined ? {} : { description }), ...(title === undefined ? {} : { title }) }];
  });
  return { ...catalog, tools, notes };
}
