// Pure: the shape of discover_tool's description that keeps a session's whole tools/list within the team's token
// budget, counted as the benchmarks count what a host pays (o200k_base, src/catalog/tokenizer.ts).
import type { CatalogGroup, CatalogView } from "./catalog.ts";
import { FULL_SHAPE, SESSION_WORDING, byCodePoint, renderDiscoverDescription, type CatalogShape, type CatalogWording } from "./render.ts";
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
  return counter.count(JSON.stringify(hostView(tools)));
}

/** A tool as a host hands it to its model. */
export interface HostTool {
  name: string;
  description?: string | undefined;
  input_schema?: unknown;
}

/** The shape in which a host hands tool definitions to a model (shared/corpus/README.md, "host tokens"). */
export const hostView = (tools: readonly ListedTool[]): HostTool[] =>
  tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));

/** One step down from the whole catalog; the steps are taken in order, each on top of those before. */
type Step =
  | { kind: "detail"; server: string; level: "names" | "summary" }
  | { kind: "lazyShort" }
  | { kind: "hide"; server: string }
  | { kind: "lazyHide"; server: string };

const toolCount = (g: CatalogGroup) => (g.state === "ready" ? g.tools.length : 0);

/** Characters per token for estimates only (catalog text runs about 4; every answer is counted exactly). */
const CHARS_PER_TOKEN = 4;

/**
 * Rough characters of one server's block in each form, from lengths alone (no rendering: at 20,000 tools a full
 * render is what a fit must avoid). Used only to choose where the exact search starts and which steps shorten.
 */
function blockChars(g: CatalogGroup): { whole: number; names: number; summary: number; hidden: number } {
  if (g.state !== "ready") return { whole: g.server.length + 60, names: g.server.length + 60, summary: g.server.length + 60, hidden: 0 };
  let names = g.server.length + 30;
  let whole = g.server.length + 2;
  for (const t of g.tools) {
    names += t.name.length + 2;
    whole += t.name.length + 5 + Math.min(t.description?.length ?? 0, 100);
  }
  return { whole, names, summary: g.server.length + 70, hidden: 0 };
}

/** Every step, in order, with the estimated characters the description has after it. */
interface Plan {
  steps: Step[];
  /** `chars[i]`: estimated characters after the first `i` steps (`chars[0]`: the whole catalog). */
  chars: number[];
}

/**
 * Every step from the whole catalog to its smallest form, in the order they are taken: the largest servers to
 * names only, then (largest first) to one summary line, lazy servers' descriptions to one line, then servers
 * left out (those with no tools, then the smallest first), then lazy servers left out (the last in config order
 * first). A step that would not make the text shorter is left out.
 */
function plan(view: CatalogView): Plan {
  const ready = view.groups
    .filter((g) => g.state === "ready")
    .sort((a, b) => toolCount(b) - toolCount(a) || byCodePoint(a.server, b.server));
  const sizes = new Map(view.groups.map((g) => [g.server, blockChars(g)]));
  const level = new Map<string, "whole" | "names" | "summary" | "hidden">(view.groups.map((g) => [g.server, "whole"]));
  const lazyChars = (short: boolean) => view.lazy.map((s) => s.name.length + 3 + (short ? Math.min(s.description.length, 100) : s.description.length));
  let chars = 400 + [...sizes.values()].reduce((n, c) => n + c.whole, 0) + lazyChars(false).reduce((a, b) => a + b, 0);
  const steps: Step[] = [];
  const out: number[] = [chars];
  const take = (step: Step, delta: number) => {
    steps.push(step);
    chars += delta;
    out.push(chars);
  };
  for (const form of ["names", "summary"] as const) {
    for (const g of ready) {
      const size = sizes.get(g.server)!;
      const delta = size[form] - size[level.get(g.server)!];
      if (delta >= 0) continue;
      level.set(g.server, form);
      take({ kind: "detail", server: g.server, level: form }, delta);
    }
  }
  if (view.lazy.length > 0) {
    const [long, short] = [lazyChars(false), lazyChars(true)];
    take({ kind: "lazyShort" }, short.reduce((a, b) => a + b, 0) - long.reduce((a, b) => a + b, 0));
  }
  const idle = view.groups.filter((g) => g.state !== "ready").sort((a, b) => byCodePoint(a.server, b.server));
  for (const g of [...idle, ...[...ready].reverse()]) {
    take({ kind: "hide", server: g.server }, -sizes.get(g.server)![level.get(g.server)!]);
  }
  const short = lazyChars(true);
  for (let i = view.lazy.length - 1; i >= 0; i--) take({ kind: "lazyHide", server: view.lazy[i]!.name }, -short[i]!);
  return { steps, chars: out };
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
  /** How many steps down from the whole catalog (0: shown whole), and the shape they give. */
  level: number;
  shape: CatalogShape;
}

/**
 * The fullest description whose whole tools/list (`list(description)`) costs at most `budget` tokens. The whole
 * catalog when it fits. Else the steps down are searched: a character estimate says where the text comes near the
 * budget, then every probe is counted exactly, galloping from there towards the whole catalog while probes fit
 * (or away from it until one does) and halving the gap between the last probe that fits and the last that does
 * not. So the answer always fits when any form does, exact counts are only ever taken of texts near the budget's
 * size (a fit of 20,000 tools counts no more than of 500), and the same view, budget and other tools always give
 * the same text (hosts' prompt caches hit).
 */
export function fitCatalog(
  view: CatalogView,
  budget: number,
  list: (description: string) => readonly ListedTool[],
  counter: TokenCounter,
  wording: CatalogWording = SESSION_WORDING,
): FittedCatalog {
  const { steps: all, chars } = plan(view);
  const seen = new Map<number, Omit<FittedCatalog, "fits">>();
  const probe = (level: number) => {
    const known = seen.get(level);
    if (known) return known;
    const shape = level === 0 ? FULL_SHAPE : shapeAfter(all, level);
    const description = renderDiscoverDescription(view, shape, wording);
    const at = { description, tokens: hostTokens(list(description), counter), level, shape };
    seen.set(level, at);
    return at;
  };
  const fits = (level: number) => probe(level).tokens <= budget;
  const last = all.length;
  if (!fits(last)) return { ...probe(last), fits: false };
  // Where the estimate first comes within the budget (the estimates fall along the steps).
  const room = budget * CHARS_PER_TOKEN;
  let start = chars.findIndex((c) => c <= room);
  if (start < 0) start = last;
  // Invariant after the gallop: `good` fits; `bad` (or -1, before the whole catalog) does not.
  let good: number;
  let bad: number;
  if (fits(start)) {
    good = start;
    let stride = 1;
    for (;;) {
      const next = good - stride;
      if (next < 0) {
        bad = -1;
        break;
      }
      if (!fits(next)) {
        bad = next;
        break;
      }
      good = next;
      stride *= 2;
    }
  } else {
    bad = start;
    let stride = 1;
    for (;;) {
      const next = Math.min(bad + stride, last);
      if (fits(next)) {
        good = next;
        break;
      }
      bad = next;
      stride *= 2;
    }
  }
  while (good - bad > 1) {
    const mid = (good + bad) >> 1;
    if (fits(mid)) good = mid;
    else bad = mid;
  }
  return { ...probe(good), fits: true };
}
