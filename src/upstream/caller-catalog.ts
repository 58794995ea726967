// Pure: an upstream's catalog as one caller may see it under the team's policies (src/config/tool-access.ts). A tool
// the caller's rules hide is taken out, so it does not exist for that caller anywhere the catalog is shown or
// searched; a server they hide whole (every tool hidden, or, with none, a deny of the whole server or allow rules that
// never name it) is emptied and marked, and the registry leaves it out with its resources, prompts and entry.
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import { exposedName } from "../catalog/names.ts";
import type { ConfigMode } from "../config/validate.ts";
import type { SubjectAccess } from "../config/tool-access.ts";

export function callerCatalog(access: SubjectAccess, mode: ConfigMode, server: string, catalog: UpstreamCatalog): UpstreamCatalog {
  if (access.open) return catalog;
  const name = (tool: string) => exposedName(mode, server, tool);
  const hides = (tool: { name: string; annotations?: { destructiveHint?: boolean } | undefined }) =>
    access.decide({ name: name(tool.name), destructive: tool.annotations?.destructiveHint === true }).access === "hidden";
  const tools = catalog.tools.filter((tool) => !hides(tool));
  const hiddenTools = catalog.tools.filter(hides).map((tool) => tool.name);
  const whole = tools.length === 0 && (catalog.tools.length > 0 || access.serverHidden(server, []));
  if (!whole) return hiddenTools.length === 0 ? catalog : { ...catalog, tools, hiddenTools };
  return { capabilities: {}, tools: [], resources: [], resourceTemplates: [], prompts: [], notes: [], hiddenFromCaller: true };
}
