// The views a connection can ask for: what the host's tools/list shows. `meta` (the default) is the meta-tools
// (discover_tool, use_tool, load_mcp) plus promoted tools; `direct` is every allowed tool first-class, for hosts that
// search and defer tools themselves. Chosen by `?view=` on the MCP URL, else by the token's setting.
import * as z from "zod";

export const VIEWS = ["meta", "direct"] as const;

export const View = z.enum(VIEWS, {
  error: (issue) => `unknown view ${JSON.stringify(String(issue.input).slice(0, 40))}: use "meta" (the meta-tools, the default) or "direct" (every tool first-class)`,
});
export type View = z.output<typeof View>;

export const DEFAULT_VIEW: View = "meta";

/** The MCP URL's query parameter that chooses the view. */
export const VIEW_PARAM = "view";
