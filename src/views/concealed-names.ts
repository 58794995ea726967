// Which tool the caller's policies hide a name would call, had the caller seen every tool: the way a view's call by
// such a name is recorded as a denial in the audit trail (`server/tool`), whichever view named it (a direct name,
// a code path). Only ever read for the trail: the answer to the caller is the unknown-tool one, as for any name.
import type { DirectNameInput } from "../catalog/direct-names.ts";
import { exposedName } from "../catalog/names.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";

/** A view's names over a set of tools: its name of each → the tool's registry name. */
export type NameAll = (tools: readonly DirectNameInput[]) => Map<string, string>;

/**
 * The `server/tool` of the hidden tool `name` calls when the view names the visible and the hidden tools together
 * (`nameAll`), or undefined when it calls none (or nothing is hidden on the servers the caller sees).
 */
export function concealedName(registry: UpstreamRegistry, name: string, nameAll: NameAll): string | undefined {
  const hidden = registry.ready().flatMap(({ name: server, catalog }) =>
    (catalog.hiddenTools ?? []).map((tool) => ({ server, tool, registryName: exposedName(registry.mode, server, tool) })),
  );
  if (hidden.length === 0) return undefined;
  const visible = [...registry.tools().values()].map((t) => ({ server: t.upstream, tool: t.tool.name, registryName: t.exposedName }));
  const registryName = nameAll([...visible, ...hidden]).get(name);
  const found = hidden.find((h) => h.registryName === registryName);
  return found && `${found.server}/${found.tool}`;
}
