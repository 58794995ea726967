// The search calls the search tests make through a client of either era: discover_tool's hits and the code view's
// search paths, read as an agent reads them (an answer judged not useful lists its hits last, as weak matches).
import { expect } from "vitest";
import { text } from "./helpers.ts";

/** What the tests ask of a client of either era (the 2025 helpers' SDK client, the 2026 one). */
export interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

export interface Hit {
  name: string;
  score: number;
}

/** discover_tool's hits for `query`: names and scores, best first. */
export async function discover(client: Caller, query: string, limit: number): Promise<Hit[]> {
  const found = (await client.callTool({ name: "discover_tool", arguments: { query, limit } })) as { isError?: boolean; structuredContent?: unknown };
  expect(found.isError, text(found)).toBeFalsy();
  return (found.structuredContent as { tools: Hit[] }).tools;
}

/** The code view's search for `query`: its `namespace.method` paths, best first (the weak matches when not useful). */
export async function codeSearch(client: Caller, query: string, limit: number): Promise<string[]> {
  const found = text(await client.callTool({ name: "search", arguments: { query, limit } }));
  const weak = found.startsWith("No loaded API") ? found.split("\n\n").find((p) => p.startsWith("Weak matches")) : undefined;
  const lines = weak === undefined ? found.split("\n\n")[0]!.split("\n") : weak.split("\n").slice(1).map((line) => line.slice(2));
  return lines.map((line) => line.split(":")[0]!);
}

export const names = (hits: readonly Hit[]): string[] => hits.map((h) => h.name);
