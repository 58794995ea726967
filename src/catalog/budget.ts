// Pure: the shape of discover_tool's description that keeps a session's whole tools/list within the team's token
// budget, counted as the benchmarks count what a host pays (o200k_base, src/catalog/tokenizer.ts).
import type { CatalogGroup, CatalogView } from "./catalog.ts";
import { FULL_SHAPE, byCodePoint, renderDiscoverDescription, type CatalogShape } from "./render.ts";
import type { TokenCounter } from "./tokenizer.ts";

/** A tool as tools/list lists it, reduced to what a host hands its model. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
}

/**
 * What a host pays for a list of tools: o200k_base tokens of the compact JSON of `{name, description,
 * input_schema}` per tool (shared/corpus/README.md, "host tokens"; bench/tokens.ts counts the same way).
 */
export function hostTokens(tools: readonly ListedTool[], counter: TokenCounter): number {
  return counter.count(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))));
}

/** One step down from the whole catalog; the steps are taken in order, each on top of those before. */
type Step =
  | { kind: "detail"; server: string; level: "names" | "summary" }
  | { kind: "lazyShort" }
  | { kind: "hide"; server: string }
  | { kind: "lazyHide"; server: string };

const toolCount = (g: CatalogGroup) => (g.state === "ready" ? g.tools.length : 0);

/**
 * Every step from the whole catalog to its smallest form, in the order they are taken: the largest servers to
 * names only, then (largest first) to one summary line, lazy servers' descriptions to one line, then servers
 * left out (those with no tools, then the smallest first), then lazy servers left out (the last in config order
 * first). A step that would not make the text shorter is left out.
 */
function steps(view: CatalogView): Step[] {
  const ready = view.groups
    .filter((g) => g.state === "ready")
    .sort((a, b) => toolCount(b) - toolCount(a) || byCodePoint(a.server, b.server));
  const out: Step[] = [];
  const shape = { ...FULL_SHAPE, detail: new Map<string, "names" | "summary">() };
  const only = (g: CatalogGroup): CatalogView => ({ ...view, groups: [g], lazy: [] });
  for (const level of ["names", "summary"] as const) {
    for (const g of ready) {
      const before = renderDiscoverDescription(only(g), shape).length;
      const next = new Map(shape.detail).set(g.server, level);
      if (renderDiscoverDescription(only(g), { ...shape, detail: next }).length >= before) continue;
      shape.detail = next;
      out.push({ kind: "detail", server: g.server, level });
    }
  }
  if (view.lazy.length > 0) out.push({ kind: "lazyShort" });
  const idle = view.groups.filter((g) => g.state !== "ready").sort((a, b) => byCodePoint(a.server, b.server));
  for (const g of [...idle, ...[...ready].reverse()]) out.push({ kind: "hide", server: g.server });
  for (const s of [...view.lazy].reverse()) out.push({ kind: "lazyHide", server: s.name });
  return out;
}

/** The shape after the first `n` steps. */
function shapeAfter(all: readonly Step[], n: number): CatalogShape {
  const detail = new Map<string, "names" | "summary">();
  const hidden = new Set<string>();
  const lazyHidden = new Set<string>();
  let lazyShort = false;
  for (const step of all.slice(0, n)) {
    if (step.kind === "detail") detail.set(step.server, step.level);
    else if (step.kind === "lazyShort") lazyShort = true;
    else if (step.kind === "hide") hidden.add(step.server);
    else lazyHidden.add(step.server);
  }
  return { detail, hidden, lazyShort, lazyHidden };
}

/** The description chosen for a budget, and what the whole tools/list then costs. */
export interface FittedCatalog {
  description: string;
  /** Tokens of the whole tools/list with this description. */
  tokens: number;
  /** False only when even the smallest form is over the budget (the caller then drops promoted tools). */
  fits: boolean;
  /** How many steps down from the whole catalog (0: shown whole). */
  level: number;
}

/**
 * The fullest description whose whole tools/list (`list(description)`) costs at most `budget` tokens. The whole
 * catalog when it fits; else a binary search over the steps, each probe counted exactly, so the answer always fits
 * when any form does. The same view, budget and other tools always give the same text (hosts' prompt caches hit).
 */
export function fitCatalog(
  view: CatalogView,
  budget: number,
  list: (description: string) => readonly ListedTool[],
  counter: TokenCounter,
): FittedCatalog {
  const probe = (shape: CatalogShape, level: number) => {
    const description = renderDiscoverDescription(view, shape);
    return { description, tokens: hostTokens(list(description), counter), level };
  };
  const whole = probe(FULL_SHAPE, 0);
  if (whole.tokens <= budget) return { ...whole, fits: true };
  const all = steps(view);
  const smallest = probe(shapeAfter(all, all.length), all.length);
  if (smallest.tokens > budget) return { ...smallest, fits: false };
  // Invariant: the state at `hi` fits, the one at `lo` does not.
  let lo = 0;
  let hi = all.length;
  let best = smallest;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const at = probe(shapeAfter(all, mid), mid);
    if (at.tokens <= budget) {
      hi = mid;
      best = at;
    } else lo = mid;
  }
  return { ...best, fits: true };
}
