// The views a connection can ask for: what the host's tools/list shows. `meta` (the default) is the meta-tools
// (discover_tool, use_tool, load_mcp) plus promoted tools; `direct` is every allowed tool first-class, for hosts that
// search and defer tools themselves; `code` is three tools (search, describe, execute) over typed APIs, the agent
// writing one program that calls many tools in a sandbox (docs/code-mode.md). Chosen by `?view=` on the MCP URL,
// else by the token's setting, else by the team config's `view`.
import * as z from "zod";

export const VIEWS = ["meta", "direct", "code"] as const;

export const View = z.enum(VIEWS, {
  error: (issue) => `unknown view ${JSON.stringify(String(issue.input).slice(0, 40))}: use "meta" (the meta-tools, the default), "direct" (every tool first-class) or "code" (search, describe, execute)`,
});
export type View = z.output<typeof View>;

export const DEFAULT_VIEW: View = "meta";

/** The MCP URL's query parameter that chooses the view. */
export const VIEW_PARAM = "view";

/**
 * The view a new session takes: the one asked for (the URL's, else the token's), else the team config's, else the
 * default. The code view only where the deployment runs code mode; otherwise the refusal, saying where "code" came
 * from and what is served instead (in the 2026-07-28 era, `modern`, "direct" only through a 2025 session).
 */
export function resolveView(asked: View | undefined, team: View | undefined, codeAvailable: boolean, modern = false): { view: View } | { refused: string } {
  const view = asked ?? team ?? DEFAULT_VIEW;
  if (view !== "code" || codeAvailable) return { view };
  const source = asked === undefined ? "the team config's view" : "the view asked for";
  const instead = modern ? `use "meta" (a 2025 session, opened with initialize, also serves "direct")` : `use "meta" or "direct"`;
  return { refused: `Code mode is off on this deployment (CODE_MODE=off, or no LOADER binding), so ${source}, "code", is not served; ${instead}.` };
}

/**
 * The refusal of `?view=direct` in the 2026-07-28 era, naming the views the era serves here. A direct list would have
 * to grow as lazy servers load, which a 2026 tools/list may not do as a side effect of other requests; a 2025 session
 * serves it. A token or team config whose view is `direct` is no request of the host's: those get the meta view.
 */
export function directRefused(codeAvailable: boolean): string {
  const served = codeAvailable ? `?${VIEW_PARAM}=meta or ?${VIEW_PARAM}=code` : `?${VIEW_PARAM}=meta (code mode is off on this deployment)`;
  return `?${VIEW_PARAM}=direct is not served in the 2026-07-28 era, whose tools/list may not grow as lazy servers load: this era serves ${served}, or no ${VIEW_PARAM}. A 2025 session (initialize) serves direct.`;
}
