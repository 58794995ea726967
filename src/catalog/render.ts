// Pure: the text of discover_tool's description and answers, rendered byte-for-byte the same for the same state.
import type { ConfigMode } from "../config/validate.ts";
import type { CatalogGroup, CatalogTool, CatalogView } from "./catalog.ts";
import { stem } from "porter2";
import { bareName } from "./names.ts";
import { firstSentenceEnd } from "./sentence.ts";
import { reasonLine } from "../lib/upstream-fault.ts";

/** The first instruction line, in every mode. */
export const DISCOVER_PREAMBLE =
  "Returns the full description and input schema of a tool listed below; call it before use_tool. With query instead of tool_name, finds tools.";

/** Config-file mode lists bare names under their server: this line says how to call them. */
export const NAMESPACE_HINT = "Tool names are server/tool.";

/** Dynamic mode: what <mcp_servers> is and how a server gets loaded (no separate "nothing loaded" line: this says it). */
export const DYNAMIC_PREAMBLE =
  "Servers under <mcp_servers> are not loaded yet: load_mcp with a server's name adds its tools to <tools> for the rest of the session.";

/** The instruction lines of a catalog: discover_tool's description (a 2025 session's, the 2026 era's tools/list) or its answer (2026 era). */
export interface CatalogWording {
  preamble: string;
  dynamic: string;
}

/** A 2025-era session's wording: the catalog is discover_tool's description, and load_mcp grows it. */
export const SESSION_WORDING: CatalogWording = { preamble: DISCOVER_PREAMBLE, dynamic: DYNAMIC_PREAMBLE };

/** The 2026 era's lazy servers: load_mcp returns a toolset handle, which reaches what it loaded. */
const TOOLSET_DYNAMIC =
  "Servers under <mcp_servers> are not loaded: load_mcp with a server's name returns its tools and a toolset handle; pass toolset to discover_tool and use_tool to reach them.";

/** The 2026 era's answer of discover_tool without arguments (the catalog, with what a toolset loaded). */
export const TOOLSET_WORDING: CatalogWording = {
  preamble: "This team's tools, called with use_tool. discover_tool with tool_name gives a tool's full schema; with query it finds tools; with server alone it lists that server's.",
  dynamic: TOOLSET_DYNAMIC,
};

/** The 2026 era's tools/list: discover_tool's description as a session's, lazy servers reached through toolsets. */
export const LIST_WORDING: CatalogWording = { preamble: DISCOVER_PREAMBLE, dynamic: TOOLSET_DYNAMIC };

const ONE_LINE_MAX = 100;
/** Control, zero-width and bidirectional characters never reach the catalog text. */
const INVISIBLE = /[\u0000-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** Plain code-point order: the same on every machine and locale. */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The catalog line of a tool: the first sentence of its description, whitespace folded,
 * at most 100 characters, cut at a word boundary and ended with … when cut.
 */
export function oneLine(description: string | undefined): string {
  if (!description) return "";
  const text = description.replace(/\s+/g, " ").replace(INVISIBLE, "").trim();
  const end = firstSentenceEnd(text);
  // The first sentence; its closing period carries no meaning in a list line (421 of them cost 274 tokens).
  const sentence = end === -1 ? text : text.slice(0, text[end] === "." ? end : end + 1);
  return cutAtWord(sentence, ONE_LINE_MAX, 1 / 2);
}

/**
 * `text` if it is at most `max` characters, else cut to fit with … at the end: at the last space, when that keeps
 * more than `keep` of `max`, else mid-word; trailing punctuation dropped before the ….
 */
export function cutAtWord(text: string, max: number, keep: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const space = room.lastIndexOf(" ");
  const cut = space > max * keep ? room.slice(0, space) : room;
  return `${cut.replace(/[\s,;:.-]+$/, "")}…`;
}

/**
 * How much of the catalog the description shows (src/catalog/budget.ts picks it to fit the team's token budget).
 * A server absent from `detail` is shown whole; `hidden` servers and `lazyHidden` lazy ones are only counted in a
 * closing line that says to search; `lazyShort` cuts lazy servers' descriptions to one line.
 */
export interface CatalogShape {
  detail: ReadonlyMap<string, "names" | "summary">;
  hidden: ReadonlySet<string>;
  lazyShort: boolean;
  lazyHidden: ReadonlySet<string>;
}

/** The whole catalog: what the description shows while it fits. */
export const FULL_SHAPE: CatalogShape = { detail: new Map(), hidden: new Set(), lazyShort: false, lazyHidden: new Set() };

/** Shown inside <tools> once any server is cut short: where the rest is. */
export const SEARCH_HINT = "Servers shown short: discover_tool with server alone lists one's tools; query finds tools.";

/** Words of tool names that say what a tool does, not what it is about: left out of a server's summary. */
const GENERIC_WORDS = new Set(
  "a an and as at by for from get in into is it list many multiple of on or the to with all add create delete remove update set show read write find search run new id ids info details".split(" "),
);

/** The parts of a tool name (`snake_case`, `kebab-case`, `camelCase`, dotted), lowercase. */
export const nameWords = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !/^\d+$/.test(w));

/**
 * What a server is about, in a few words: its configured description's first sentence, else the words its tool
 * names use most (generic verbs left out; ties in code-point order), at most six.
 */
export function serverSummary(tools: readonly CatalogTool[], description?: string): string {
  if (description) return oneLine(description);
  const known = summaries.get(tools);
  if (known !== undefined) return known;
  // Counted by stem, so `issue` and `issues` are one word, shown in its most used form (the shorter on a tie).
  const byStem = new Map<string, { n: number; forms: Map<string, number> }>();
  for (const tool of tools) {
    for (const w of new Set(nameWords(tool.name))) {
      if (GENERIC_WORDS.has(w)) continue;
      const entry = byStem.get(stem(w)) ?? { n: 0, forms: new Map<string, number>() };
      entry.n += 1;
      entry.forms.set(w, (entry.forms.get(w) ?? 0) + 1);
      byStem.set(stem(w), entry);
    }
  }
  const form = (forms: Map<string, number>) =>
    [...forms].sort((a, b) => b[1] - a[1] || a[0].length - b[0].length || byCodePoint(a[0], b[0]))[0]![0];
  const summary = [...byStem.values()]
    .map((e) => ({ n: e.n, word: form(e.forms) }))
    .sort((a, b) => b.n - a.n || byCodePoint(a.word, b.word))
    .slice(0, 6)
    .map((e) => e.word)
    .join(", ");
  summaries.set(tools, summary);
  return summary;
}

/** Summaries by catalog (a budget's search renders a server's summary in many probes). */
const summaries = new WeakMap<readonly CatalogTool[], string>();

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

function renderGroup(group: CatalogGroup, mode: ConfigMode, detail: "names" | "summary" | undefined): string {
  if (group.state === "unavailable") return `${group.server}: unavailable — ${reasonLine(group, oneLine)}`;
  if (group.state === "connecting") return `${group.server}: connecting — its tools appear when it answers`;
  const names = group.tools.map((t) => t.name).sort(byCodePoint);
  const label = mode === "single" ? "tools" : group.server;
  if (detail === "names") return `${label} (${plural(names.length, "tool")}, names only): ${names.join(", ")}`;
  if (detail === "summary") {
    const about = serverSummary(group.tools, group.description);
    return `${label}: ${plural(names.length, "tool")}${about ? ` — ${about}` : ""}`;
  }
  const lines = [...group.tools]
    .sort((a, b) => byCodePoint(a.name, b.name))
    .map((tool) => {
      const line = oneLine(tool.description);
      return line ? `- ${tool.name}: ${line}` : `- ${tool.name}`;
    });
  return mode === "single" ? lines.join("\n") : [`${group.server}:`, ...lines].join("\n");
}

/** The line that stands for servers left out: how many, how many tools, and how to reach them. */
function hiddenLine(groups: readonly CatalogGroup[]): string {
  const tools = groups.reduce((n, g) => n + (g.state === "ready" ? g.tools.length : 0), 0);
  return `… and ${plural(groups.length, "more server")} with ${plural(tools, "tool")}: find them with discover_tool's query.`;
}

/**
 * discover_tool's answer to a search: one line per tool, best first, or why there is none; then the servers not
 * loaded yet that match, which load_mcp would add.
 */
export function renderSearchHits(
  query: string,
  hits: ReadonlyArray<{ name: string; description: string }>,
  servers: ReadonlyArray<{ name: string; description: string }> = [],
): string {
  const line = (h: { name: string; description: string }) => (h.description ? `- ${h.name}: ${h.description}` : `- ${h.name}`);
  const parts = [
    hits.length === 0
      ? `No loaded tool matches "${oneLine(query)}": try other words, or pick from the list in discover_tool's description.`
      : hits.map(line).join("\n"),
  ];
  if (servers.length > 0) parts.push(["Servers not loaded yet that match (load_mcp adds their tools):", ...servers.map(line)].join("\n"));
  return parts.join("\n\n");
}

/** discover_tool's description: instructions, then `<mcp_servers>` (dynamic mode), then `<tools>`, in the given shape. */
export function renderDiscoverDescription(view: CatalogView, shape: CatalogShape = FULL_SHAPE, wording: CatalogWording = SESSION_WORDING): string {
  // The namespace hint wherever there are grouped tools to call, or servers whose tools load_mcp would add.
  const hint = view.mode === "multi" && (view.lazy.length > 0 || view.groups.some((g) => g.state === "ready"));
  const parts = [wording.preamble + (hint ? `\n${NAMESPACE_HINT}` : "")];
  if (view.lazy.length > 0) {
    parts.push(wording.dynamic);
    // One `name: description` line each (no bullet: nothing nests here), the description folded onto its line.
    const fold = (d: string) => (shape.lazyShort ? oneLine(d) : d.replace(/\s+/g, " ").replace(INVISIBLE, "").trim());
    const shown = view.lazy.filter((s) => !shape.lazyHidden.has(s.name));
    const lines = shown.map((s) => `${s.name}: ${fold(s.description)}`);
    const left = view.lazy.length - shown.length;
    if (left > 0) lines.push(`… and ${plural(left, "more server")} to load: find them with discover_tool's query.`);
    parts.push(["<mcp_servers>", ...lines, "</mcp_servers>"].join("\n"));
  }
  const groups = [...view.groups].sort((a, b) => byCodePoint(a.server, b.server));
  // With nothing loaded yet there is no <tools> block: the dynamic paragraph already says how tools get there.
  if (groups.length > 0 || view.lazy.length === 0) {
    const shown = groups.filter((g) => !shape.hidden.has(g.server));
    const body = shown.map((g) => renderGroup(g, view.mode, shape.detail.get(g.server))).filter((s) => s !== "");
    if (shown.length < groups.length) body.push(hiddenLine(groups.filter((g) => shape.hidden.has(g.server))));
    if (shape.detail.size > 0 || shown.length < groups.length) body.unshift(SEARCH_HINT);
    parts.push(["<tools>", ...body, "</tools>"].join("\n"));
  }
  return parts.join("\n\n");
}

/** A tool's full definition, as discover_tool answers it. */
export interface ToolDetails {
  name: string;
  description?: string | undefined;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  title?: string | undefined;
}

/**
 * A tool's whole definition as discover_tool's lookup writes it. Schemas are minified JSON: over the corpus's 421
 * tools their input schemas cost 111,012 tokens indented and 75,498 minified (o200k; `npm run bench:tokens`). The
 * code view's TypeScript declarations cost fewer still (58,635) but drop bounds, patterns and `not`, which a lookup
 * must keep.
 */
export function renderToolDetails(tool: ToolDetails): string {
  const lines = [`Tool: ${tool.name}`];
  if (tool.title) lines.push(`Title: ${tool.title}`);
  lines.push(`Description: ${tool.description ?? ""}`, "", "Input Schema:", JSON.stringify(tool.inputSchema));
  if (tool.outputSchema !== undefined) lines.push("", "Output Schema:", JSON.stringify(tool.outputSchema));
  if (tool.annotations !== undefined) lines.push("", "Annotations:", JSON.stringify(tool.annotations));
  return lines.join("\n");
}

/**
 * Names an unknown-tool answer suggests. The right name was the first or the fifth in an agent's measured runs; 50
 * names cost about 370 tokens of the model's context for the same help.
 */
export const MAX_SUGGESTED = 8;

/**
 * The answer for a name that matches no tool: the closest names first, at most MAX_SUGGESTED, then how many more and
 * `findMore` (the view's call that finds them), e.g. "discover_tool's query finds the others".
 */
export function renderUnknownTool(query: string, available: readonly string[], findMore?: string): string {
  if (available.length === 0) return `Unknown tool: "${query}". No tools are available yet.`;
  const shown = closestNames(query, available, MAX_SUGGESTED);
  const more = available.length - shown.length;
  const tail = more > 0 ? ` … and ${more} more${findMore ? `: ${findMore}` : ""}.` : ".";
  return `Unknown tool: "${query}". Available tools (closest first): ${shown.join(", ")}${tail}`;
}

/** Names ordered by how close they are to the query (edit distance on lowercase, ties in code-point order). */
export function rankByCloseness(query: string, names: readonly string[]): string[] {
  return closestNames(query, names, names.length);
}

/**
 * The `k` names closest to the query, in rank order: 0 for the name itself (or its bare tool name), 1 for a name
 * that contains the query or whose bare name the query contains, else the edit distance to the name or its bare
 * name. Only the best `k` are kept, and a distance is computed only as far as it could still make the list, so
 * a typo against tens of thousands of tools stays cheap.
 */
export function closestNames(query: string, names: readonly string[], k: number): string[] {
  const q = query.toLowerCase();
  const top: Array<{ name: string; s: number }> = [];
  const before = (a: { name: string; s: number }, b: { name: string; s: number }) => a.s - b.s || byCodePoint(a.name, b.name);
  for (const name of names) {
    const limit = top.length < k ? Number.POSITIVE_INFINITY : top[k - 1]!.s;
    const n = name.toLowerCase();
    const bare = bareName(n);
    let s: number;
    if (n === q || bare === q) s = 0;
    else if (n.includes(q) || (q.length > 2 && q.includes(bare))) s = 1;
    else s = Math.min(editDistance(q, n, limit), editDistance(q, bare, limit));
    if (s > limit) continue;
    const entry = { name, s };
    if (top.length === k && before(entry, top[k - 1]!) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(top[mid]!, entry) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, entry);
    if (top.length > k) top.pop();
  }
  return top.map((x) => x.name);
}

/**
 * Levenshtein distance, two rows. With `limit`, the work stops as soon as the distance must exceed it (the
 * answer is then `limit + 1`): a row whose smallest cell is over the limit can only grow.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}
