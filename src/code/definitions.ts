// The code view's three tools as tools/list shows them: search, describe and execute. Pure, so the benchmarks list
// exactly what sessions do. Every session pays for these texts in context, so each word has to earn its place;
// execute's description names the namespaces, fixed by the config (never by what is loaded), so the list does not
// change under the host as servers load.
import type { Tool } from "@modelcontextprotocol/server";
import { oneLine } from "../catalog/render.ts";
import { inputJsonSchema } from "../meta/schemas.ts";
import { CodeDescribeInput, CodeExecuteInput, CodeSearchInput } from "./schemas.ts";

export const CODE_SEARCH = "search";
export const CODE_DESCRIBE = "describe";
export const CODE_EXECUTE = "execute";

export const CODE_SEARCH_DESCRIPTION =
  "Finds the team's tool APIs for execute: query → `namespace.method` lines, best first. server: one namespace only.";
export const CODE_DESCRIBE_DESCRIPTION =
  "TypeScript declaration of an API: path `namespace.method`, or `namespace` for all its methods; descriptions shortened unless full is true. Read it before calling the method.";

/** One namespace as execute's description names it. */
export interface NamespaceLine {
  namespace: string;
  /** What the config says the server is for (its first sentence is shown). */
  description?: string | undefined;
}

/** execute's description: what a program is and may do, and the namespaces it can call. */
export function executeDescription(namespaces: readonly NamespaceLine[]): string {
  const lines = namespaces.map((n) => {
    const about = n.description === undefined ? "" : oneLine(n.description);
    return about === "" ? `- ${n.namespace}` : `- ${n.namespace}: ${about}`;
  });
  return [
    "Runs a JavaScript program in a sandbox (no network, no imports): `async () => { … }`, or a body that returns.",
    "Each server is a namespace of async methods: `const r = await ns.method({ … })` gives the tool's structured result, else its text (parsed if JSON); a tool error throws.",
    "await every call; return a JSON value. console.log output is returned too.",
    lines.length === 0 ? "No namespaces yet." : `Namespaces (servers load on first use):\n${lines.join("\n")}`,
  ].join("\n");
}

const schemas = {
  search: inputJsonSchema(CodeSearchInput),
  describe: inputJsonSchema(CodeDescribeInput),
  execute: inputJsonSchema(CodeExecuteInput),
};

/** The code view's tools/list: always these three, in this order. */
export function codeDefinitions(namespaces: readonly NamespaceLine[]): Tool[] {
  return [
    { name: CODE_SEARCH, description: CODE_SEARCH_DESCRIPTION, inputSchema: schemas.search, annotations: { readOnlyHint: true } },
    { name: CODE_DESCRIBE, description: CODE_DESCRIBE_DESCRIPTION, inputSchema: schemas.describe, annotations: { readOnlyHint: true } },
    { name: CODE_EXECUTE, description: executeDescription(namespaces), inputSchema: schemas.execute },
  ];
}
