// The 2026 era's tools/list (the meta view): the three meta-tools and the config's promoted tools whole (as a 2025
// session lists them), discover_tool's description carrying the team's catalog as a 2025 session's does (its eager upstreams' tools, its lazy servers under <mcp_servers> with the
// toolset's instructions), fitted to the team's token budget. It is a function of the team's config and its eager
// upstreams' catalogs alone, as the principal's policies let it see them (each principal's object filters them as
// they enter it: src/upstream/caller-catalog.ts): what load_mcp adds lives in toolsets, never here, and the catalogs
// are the team's latest reading (src/upstream/freshness.ts), so every principal the policies treat alike gets the same
// bytes (hosts' prompt caches hit). Remembered per object while what it shows is unchanged.
import type { Tool } from "@modelcontextprotocol/server";
import type { FittedCatalog } from "../catalog/budget.ts";
import type { CatalogView } from "../catalog/catalog.ts";
import { LIST_WORDING } from "../catalog/render.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import { META_NAMES, modernDefinitions } from "../views/definitions.ts";
import { fitBesidePromoted, promotedTools, samePromoted, sameView } from "../views/tool-list.ts";
import type { UsageRecorder } from "../views/tool-view.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { RETRY_FAILED_MS } from "../upstream/startup.ts";
import { LIST_TTL_MS } from "./server.ts";

/** A tools/list result: the tools, and how long a client may keep them (the cache hint's `ttlMs`). A type, not an interface: the SDK's result type has an index signature. */
export type ModernList = { tools: Tool[]; ttlMs: number };

export class ModernToolList {
  #last: { view: CatalogView; promoted: readonly Tool[]; list: ModernList; fitted: FittedCatalog } | undefined;

  readonly #registry: UpstreamRegistry;
  readonly #counter: () => Promise<TokenCounter>;
  readonly #definitions: ReturnType<typeof modernDefinitions>;
  readonly #meter: UsageRecorder | undefined;

  constructor(registry: UpstreamRegistry, counter: () => Promise<TokenCounter>, handleLifetimeSeconds: number, meter?: UsageRecorder) {
    this.#registry = registry;
    this.#counter = counter;
    this.#definitions = modernDefinitions(handleLifetimeSeconds);
    this.#meter = meter;
  }

  /**
   * The list, within the budget: the eager upstreams waited for as a session's first list waits (at most
   * EAGER_WAIT_MS), each catalog the team's latest, and one nobody read for LIST_TTL_MS read anew in the background
   * (a change reaches the team's listen streams). A list that shows a configured upstream connecting or unavailable
   * is kept RETRY_FAILED_MS at most: the next attempt may change it, and no stream is told when it does.
   */
  async list(): Promise<ModernList> {
    const registry = this.#registry;
    registry.retryFailed();
    await registry.ensureEager();
    await registry.freshen(LIST_TTL_MS);
    const view = registry.teamView();
    const promoted = promotedTools(registry, META_NAMES);
    const last = this.#last;
    if (last && sameView(last.view, view) && samePromoted(last.promoted, promoted)) {
      this.#meter?.listed(last.fitted);
      return last.list;
    }
    const { discover, rest } = this.#definitions;
    const { tools, fitted } = fitBesidePromoted(view, registry.catalogBudget, discover, rest, promoted, await this.#counter(), LIST_WORDING);
    const configured = new Set(registry.servers);
    const settled = view.groups.every((g) => g.state === "ready" || !configured.has(g.server));
    const list = { tools, ttlMs: settled ? LIST_TTL_MS : RETRY_FAILED_MS };
    this.#last = { view, promoted, list, fitted };
    this.#meter?.listed(fitted);
    return list;
  }
}
