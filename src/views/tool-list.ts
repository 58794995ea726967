// The session's tools/list in the meta view: the meta-tools, discover_tool's catalog fitted to the team's token
// budget, and the promoted tools, remembered while nothing it shows has changed.
import type { Tool } from "@modelcontextprotocol/server";
import { fitCatalog, type FittedCatalog } from "../catalog/budget.ts";
import type { CatalogView } from "../catalog/catalog.ts";
import type { CatalogWording } from "../catalog/render.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { MetaDefinitions } from "./definitions.ts";

/**
 * The promoted tools the session can serve now, first-class: each upstream definition whole, under the name hosts
 * call it by. A name no loaded server offers (not loaded yet, filtered, withheld by a pin) is left out; a meta-tool's
 * name is never taken.
 */
export function promotedTools(registry: UpstreamRegistry, reserved: ReadonlySet<string>): Tool[] {
  const offered = registry.tools();
  return registry.promoted.flatMap((name) => {
    const found = reserved.has(name) ? undefined : offered.get(name);
    return found ? [{ ...found.tool, name }] : [];
  });
}

/** Two views show the same thing: the same servers in the same states, the same catalogs (by identity), the same lazy servers. */
export function sameView(a: CatalogView, b: CatalogView): boolean {
  if (a.mode !== b.mode || a.groups.length !== b.groups.length || a.lazy.length !== b.lazy.length) return false;
  const groups = a.groups.every((g, i) => {
    const h = b.groups[i]!;
    if (g.server !== h.server || g.state !== h.state) return false;
    if (g.state === "ready" && h.state === "ready") return g.tools === h.tools && g.description === h.description;
    if (g.state === "unavailable" && h.state === "unavailable") return g.reason === h.reason;
    return true;
  });
  return groups && a.lazy.every((s, i) => s.name === b.lazy[i]!.name && s.description === b.lazy[i]!.description);
}

export class ToolList {
  #last: { view: CatalogView; promoted: readonly Tool[]; tools: Tool[]; fitted: FittedCatalog } | undefined;

  readonly #registry: UpstreamRegistry;
  readonly #meta: MetaDefinitions;
  readonly #counter: () => Promise<TokenCounter>;

  /** Told of every list served, fresh or remembered (the session's usage meter). */
  readonly #served: ((fitted: FittedCatalog) => void) | undefined;

  constructor(registry: UpstreamRegistry, meta: MetaDefinitions, counter: () => Promise<TokenCounter>, served?: (fitted: FittedCatalog) => void) {
    this.#registry = registry;
    this.#meta = meta;
    this.#counter = counter;
    this.#served = served;
  }

  /**
   * The list, its cost within the budget: the whole catalog while it fits, else a shorter form
   * (src/catalog/budget.ts). When not even the shortest form fits beside the promoted tools, promoted tools are
   * dropped from the last until it does.
   */
  async tools(): Promise<Tool[]> {
    const view = this.#registry.view();
    const promoted = promotedTools(this.#registry, this.#meta.reserved);
    const last = this.#last;
    if (last && sameView(last.view, view) && samePromoted(last.promoted, promoted)) {
      this.#served?.(last.fitted);
      return last.tools;
    }
    const fit = fitBesidePromoted(view, this.#registry.catalogBudget, this.#meta.discover, this.#meta.rest, promoted, await this.#counter());
    this.#last = { view, promoted, tools: fit.tools, fitted: fit.fitted };
    this.#served?.(fit.fitted);
    return fit.tools;
  }
}

/**
 * A meta view's list: the meta-tools, discover_tool's description fitted to the budget beside the promoted tools.
 * When not even the shortest form fits beside them, promoted tools are dropped from the last until it does.
 */
export function fitBesidePromoted(
  view: CatalogView,
  budget: number,
  discover: Omit<Tool, "description">,
  rest: readonly Tool[],
  promoted: readonly Tool[],
  counter: TokenCounter,
  wording?: CatalogWording,
): { tools: Tool[]; fitted: FittedCatalog } {
  let kept = promoted;
  for (;;) {
    const list = (description: string): Tool[] => [{ ...discover, description }, ...rest, ...kept];
    const fitted = fitCatalog(view, budget, list, counter, wording);
    if (fitted.fits || kept.length === 0) return { tools: list(fitted.description), fitted };
    kept = kept.slice(0, -1);
  }
}

export const samePromoted = (a: readonly Tool[], b: readonly Tool[]) =>
  a.length === b.length && a.every((t, i) => t.name === b[i]!.name && JSON.stringify(t) === JSON.stringify(b[i]));
