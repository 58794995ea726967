// Pure: what load_mcp answers: the server's index (every tool named, with what it does in a few words) and how many
// resources, resource templates and prompts it has, within a cap that grows with its tools; the full lists are a
// call away (the answer names the calls). The text and the structured form each fit the cap on their own.
import type { ConfigMode } from "../config/validate.ts";
import type { UpstreamCatalog } from "./catalog.ts";
import { exposedName } from "./names.ts";
import { fitIndex, indexObject, indexText, answerCost, SHRUNK, shrunkNote, type IndexLine } from "./server-index.ts";
import type { TokenCounter } from "./tokenizer.ts";

/**
 * load_mcp's cap, linear in the server's tools: room for the lines around the index (a 2026 toolset handle, some
 * forty tokens, twice in the first line and once in the structured answer), and ten and a half tokens a tool (a
 * name alone costs five to six, so a name always fits). 596 tokens for 33 tools, 1,489 for 118.
 */
export const LOAD_BASE_TOKENS = 250;
export const LOAD_TOKENS_PER_TOOL = 10.5;
export const loadCap = (tools: number): number => Math.floor(LOAD_BASE_TOKENS + LOAD_TOKENS_PER_TOOL * tools);

/** How many of each list the server has. */
export interface ListingCounts {
  tools: number;
  resources: number;
  resource_templates: number;
  prompts: number;
}

/** load_mcp's structured answer (after what the scope puts first: the 2026 era's toolset). */
export interface McpListing {
  mcp_name: string;
  counts: ListingCounts;
  /** The tools by the name use_tool calls them: what each does ("" where only the name fits). */
  tools: Record<string, string>;
  /** Best-effort lists that failed (they count 0 above), with why. */
  notes?: string[];
}

/** What differs by era: the first line, what comes first in the structured answer, the toolset a call must pass. */
export interface ListingEra {
  first: string;
  lead?: Record<string, unknown>;
  /** The 2026 era's handle: its calls reach the server only with it, and no list call reaches its resources or prompts. */
  toolset?: string;
}

/** Keeps only the keys whose value is defined, so absent fields stay absent in JSON. */
export function defined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** The counts as a sentence: `118 tools, 0 resources, 0 resource templates, 3 prompts`. */
const countsLine = (c: ListingCounts) =>
  `${plural(c.tools, "tool")}, ${plural(c.resources, "resource")}, ${plural(c.resource_templates, "resource template")}, ${plural(c.prompts, "prompt")}`;

/**
 * Where the full lists are: calls that work in the era. A 2026 call passes the toolset (named above, not again: a
 * handle costs some forty tokens), and no list call reaches a toolset's resources or prompts there.
 */
function fullLists(name: string, called: string, counts: ListingCounts, toolset: boolean): string {
  const calls = `discover_tool ${JSON.stringify({ server: name })} answers this list again; discover_tool ${JSON.stringify({ tool_name: called })} gives one tool's schema.`;
  if (toolset) return `With that toolset, ${calls}`;
  return counts.resources + counts.resource_templates + counts.prompts > 0 ? `${calls} Its resources and prompts: resources/list, resources/templates/list and prompts/list.` : calls;
}

/**
 * load_mcp's answer for `name`: text and structured (after `lead`, which stays first), the index fitted so that each
 * costs at most `loadCap` tokens.
 */
export function buildListing(
  mode: ConfigMode,
  name: string,
  catalog: UpstreamCatalog,
  counter: TokenCounter,
  era: ListingEra,
): { text: string; structured: Record<string, unknown> } {
  const counts: ListingCounts = {
    tools: catalog.tools.length,
    resources: catalog.resources.length,
    resource_templates: catalog.resourceTemplates.length,
    prompts: catalog.prompts.length,
  };
  // The tools under the name use_tool calls them, said once: `gitlab/<tool>` costs a few tokens more on every line.
  const called = exposedName(mode, name, "<tool>");
  const notes = catalog.notes.length > 0 ? catalog.notes : undefined;
  const closing = fullLists(name, called, counts, era.toolset !== undefined);
  const render = (lines: readonly IndexLine[], note: string) => {
    const structured = { ...era.lead, ...defined({ mcp_name: name, counts, tools: indexObject(lines), notes }) };
    const text = [
      era.first,
      `"${name}" has ${countsLine(counts)}. Its tools, called with use_tool as "${called}":`,
      indexText(lines),
      note === "" ? closing : `${note} ${closing}`,
      ...(notes ? [`Not listed: ${notes.join("; ")}`] : []),
    ].join("\n");
    return { text, structured };
  };
  const fitted = fitIndex(catalog.tools, (lines) => answerCost(counter, render(lines, SHRUNK)), loadCap(counts.tools));
  return render(fitted.lines, shrunkNote(fitted.detail));
}
