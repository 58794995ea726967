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
  "TypeScript declarations of APIs, read before calling them. path: `namespace.method`, or `namespace` for all its methods; several comma-separated. Descriptions shortened unless full.";

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
    "Runs JavaScript in a sandbox (no network, no imports): `async () => { … }`, or a body that returns. Each server is a namespace: " +
      "`await ns.method({ … })` gives the tool's structured result, else its text (JSON parsed); a tool error throws. " +
      "Await every call; return JSON; console.log output comes back.",
    lines.length === 0 ? "No namespaces yet." : `Namespaces (loaded on first use):\n${lines.join("\n")}`,
  ].join("\n");
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
export function codeDefinitions(namespaces: readonly NamespaceLine[]): Tool[] {
  return [
    { name: CODE_SEARCH, description: CODE_SEARCH_DESCRIPTION, inputSchema: schemas.search, annotations: { readOnlyHint: true } },
    { name: CODE_DESCRIBE, description: CODE_DESCRIBE_DESCRIPTION, inputSchema: schemas.describe, annotations: { readOnlyHint: true } },
    { name: CODE_EXECUTE, description: executeDescription(namespaces), inputSchema: schemas.execute },
  ];
}
