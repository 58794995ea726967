// The code view's three tools as tools/list shows them: search, describe and execute. Pure, so the benchmarks list
// exactly what sessions do. Every session pays for these texts in context, so each word has to earn its place;
// execute's description names the namespaces, fixed by the config (never by what is loaded), so the list does not
// change under the host as servers load; past the team's catalog budget it names fewer (fitCodeDefinitions).
import type { Tool } from "@modelcontextprotocol/server";
import { hostTokens } from "../../catalog/budget.ts";
import { oneLine } from "../../catalog/render.ts";
import type { TokenCounter } from "../../catalog/tokenizer.ts";
import { inputJsonSchema } from "../schemas.ts";
import { CodeDescribeInput, CodeExecuteInput, CodeSearchInput } from "./schemas.ts";

export const CODE_SEARCH = "search";
export const CODE_DESCRIBE = "describe";
export const CODE_EXECUTE = "execute";

export const CODE_SEARCH_DESCRIPTION =
  "Finds the team's tool APIs for execute: query → `namespace.method` lines, best first. server: one namespace only.";
export const CODE_DESCRIBE_DESCRIPTION =
  "TypeScript declarations of APIs, read before calling them. path: `namespace.method`, or `namespace` to list its methods; several comma-separated. Descriptions shortened unless full.";

/** One namespace as execute's description names it. */
export interface NamespaceLine {
  namespace: string;
  /** What the config says the server is for (its first sentence is shown). */
  description?: string | undefined;
}

/**
 * How execute's description names the namespaces: `whole` a line each with the config's description; `names` the
 * names alone on one line, the first `named` of them (config order), the rest counted.
 */
export type NamespaceForm = { kind: "whole" } | { kind: "names"; named: number };

const WHOLE: NamespaceForm = { kind: "whole" };

/** execute's description: what a program is and may do, and the namespaces it can call. */
export function executeDescription(namespaces: readonly NamespaceLine[], form: NamespaceForm = WHOLE): string {
  return [
    "Runs JavaScript in a sandbox (no network, no imports): `async () => { … }`, or a body that returns. Each server is a namespace: " +
      "`await ns.method({ … })` gives the tool's structured result, else its text (JSON parsed); a tool error throws. " +
      "Await every call; return JSON; console.log output comes back.",
    namespaces.length === 0 ? "No namespaces yet." : `Namespaces (loaded on first use):${namespaceText(namespaces, form)}`,
  ].join("\n");
}

function namespaceText(namespaces: readonly NamespaceLine[], form: NamespaceForm): string {
  if (form.kind === "whole") {
    const lines = namespaces.map((n) => {
      const about = n.description === undefined ? "" : oneLine(n.description);
      return about === "" ? `- ${n.namespace}` : `- ${n.namespace}: ${about}`;
    });
    return `\n${lines.join("\n")}`;
  }
  const shown = namespaces.slice(0, form.named).map((n) => n.namespace);
  const rest = namespaces.length - shown.length;
  if (rest === 0) return ` ${shown.join(", ")}.`;
  const more = `${rest.toLocaleString("en-US")} more: search finds them and their methods.`;
  return shown.length === 0 ? ` ${more}` : ` ${shown.join(", ")}, and ${more}`;
}

/** Bounds the proxy checks itself (the zod schema still does): a host's model needs none of them to call right. */
const CHECKED_HERE = new Set(["minLength", "maxLength", "minimum", "maximum"]);
const lean = (schema: ReturnType<typeof inputJsonSchema>): ReturnType<typeof inputJsonSchema> =>
  JSON.parse(JSON.stringify(schema, (key, value: unknown) => (CHECKED_HERE.has(key) ? undefined : value)));

const schemas = {
  search: lean(inputJsonSchema(CodeSearchInput)),
  describe: lean(inputJsonSchema(CodeDescribeInput)),
  execute: lean(inputJsonSchema(CodeExecuteInput)),
};

/** The code view's tools/list: always these three, in this order. */
export function codeDefinitions(namespaces: readonly NamespaceLine[], form: NamespaceForm = WHOLE): Tool[] {
  return [
    { name: CODE_SEARCH, description: CODE_SEARCH_DESCRIPTION, inputSchema: schemas.search, annotations: { readOnlyHint: true } },
    { name: CODE_DESCRIBE, description: CODE_DESCRIBE_DESCRIPTION, inputSchema: schemas.describe, annotations: { readOnlyHint: true } },
    { name: CODE_EXECUTE, description: executeDescription(namespaces, form), inputSchema: schemas.execute },
  ];
}

/** The code view's tools/list fitted to the team's catalog budget, and what it costs a host. */
export interface FittedCodeDefinitions {
  tools: Tool[];
  /** o200k_base tokens a host pays for `tools` (src/catalog/budget.ts, hostTokens). */
  tokens: number;
  form: NamespaceForm;
  /** False only when not even the three tools with every namespace counted fit (a budget below their own size). */
  fits: boolean;
}

/**
 * The fullest form of the code view's list within `budget` tokens, as the meta view's catalog is fitted
 * (README "Catalog budget"): every namespace with its description while that fits; else the names alone; else the
 * first names in config order and the rest counted, as many named as fit (found by halving: the cost grows with
 * each name). A function of the config alone, so every session of a team lists the same bytes.
 */
export function fitCodeDefinitions(namespaces: readonly NamespaceLine[], budget: number, counter: TokenCounter): FittedCodeDefinitions {
  const probe = (form: NamespaceForm) => {
    const tools = codeDefinitions(namespaces, form);
    const tokens = hostTokens(tools, counter);
    return { tools, tokens, form, fits: tokens <= budget };
  };
  const whole = probe(WHOLE);
  if (whole.fits) return whole;
  const names = probe({ kind: "names", named: namespaces.length });
  if (names.fits) return names;
  let best = probe({ kind: "names", named: 0 });
  if (!best.fits) return best;
  // Invariant: `best` names `lo` and fits; naming `hi` does not.
  let [lo, hi] = [0, namespaces.length];
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    const tried = probe({ kind: "names", named: mid });
    if (tried.fits) [lo, best] = [mid, tried];
    else hi = mid;
  }
  return best;
}
