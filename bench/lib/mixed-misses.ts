// What ranks above the right tool on the mixed team's missed dev queries (bench/mixed.ts `--misses`): each tool ranked
// before the first acceptable one, by kind, counted over the misses, and a sample of misses with their first three.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { rankOf, type Query } from "../selection.ts";

/**
 * How a tool ranked above the right one relates to it: a corpus tool, or a synthetic one by its name (the right
 * tool's: a namesake), its description (the right tool's, another tool's of the right server, or unrelated) and its
 * server's description (the right server's or another's).
 */
type Kind = string;

export interface MissKinds {
  /** Per stage: missed dev queries (right tool not in the top 5), and the tools above it among the first 5, by kind. */
  stages: Record<string, { misses: number; above: Partial<Record<Kind, number>> }>;
  sample: Array<{ stage: string; q: string; expect: string; rank: number | undefined; first: Array<{ name: string; kind: Kind }> }>;
}

interface Upstream {
  name: string;
  description: string | undefined;
  tools: Tool[];
}

const SAMPLE = 8;

export function missKinds(upstreams: readonly Upstream[], queries: readonly Query[], ranked: Record<string, string[][]>): MissKinds {
  const info = new Map<string, { tool: string; description: string | undefined; server: string | undefined; real: boolean }>(
    upstreams.flatMap((u) => u.tools.map((t) => [`${u.name}/${t.name}`, { tool: t.name, description: t.description, server: u.description, real: !u.name.startsWith("synthetic-") }])),
  );
  const serverDescriptions = new Map(upstreams.filter((u) => !u.name.startsWith("synthetic-")).map((u) => [u.name, new Set(u.tools.map((t) => t.description))]));
  const siblings = new Map(upstreams.filter((u) => !u.name.startsWith("synthetic-")).map((u) => [u.name, new Set(u.tools.map((t) => t.name))]));
  const kindOf = (name: string, expect: string): Kind => {
    const x = info.get(name)!;
    const right = info.get(expect)!;
    if (x.real) return "corpus tool";
    const server = expect.slice(0, expect.indexOf("/"));
    const naming = x.tool === right.tool ? "namesake" : siblings.get(server)!.has(x.tool) ? "a sibling's name" : "other name";
    const description = x.description === right.description ? "its description" : serverDescriptions.get(server)!.has(x.description) ? "a sibling's description" : "unrelated description";
    return `synthetic: ${naming}, ${description}, ${x.server === right.server ? "its server's description" : "another server's"}`;
  };
  const stages: MissKinds["stages"] = {};
  const sample: MissKinds["sample"] = [];
  for (const [stage, lists] of Object.entries(ranked)) {
    const tally = (stages[stage] = { misses: 0, above: {} as Partial<Record<Kind, number>> });
    queries.forEach((q, i) => {
      const names = lists[i]!;
      const rank = rankOf(names, q);
      if (rank !== undefined && rank <= 5) return;
      tally.misses++;
      const expect = q.expect[0]!;
      const above = names.slice(0, Math.min(5, (rank ?? 26) - 1));
      for (const name of above) {
        const k = kindOf(name, expect);
        tally.above[k] = (tally.above[k] ?? 0) + 1;
      }
      if (sample.filter((s) => s.stage === stage).length < SAMPLE && i % 3 === 0) {
        sample.push({ stage, q: q.q, expect, rank, first: above.slice(0, 3).map((name) => ({ name, kind: kindOf(name, expect) })) });
      }
    });
  }
  return { stages, sample };
}
