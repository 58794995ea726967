// The signals of bench/nothing.ts, gathered once per query and setting: each dev query over the 421 corpus tools (a
// positive: its right tool is there), the same query with its right tools' servers taken out (a negative), and the
// queries of bench/selection/nothing.json (things no corpus server does) over the whole corpus. Each search goes
// through `judgedSearch`, the path discover_tool and the code view's search take, with or without the static stage.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StaticEmbedder } from "../../src/catalog/embedder.ts";
import { SEARCH_LIMIT_DEFAULT, judgedSearch, type SearchHit, type ToolIndex } from "../../src/catalog/search.ts";
import type { ToolVectors } from "../../src/catalog/semantic-vectors.ts";
import type { Query } from "../selection.ts";

export const NOTHING_FILE = join(import.meta.dirname, "..", "selection", "nothing.json");

export type Kind = "positive" | "negative" | "absent";

/** One search's signals. */
export interface Signals {
  kind: Kind;
  query: string;
  coverage: number;
  /** The best raw cosine among the top hits (stage on only). */
  cosine: number | undefined;
  /** (best − second) / best of the hits' scores: how far the best stands out. */
  gap: number;
  /** A negative whose best hit has the right tool's own name on another server (a near twin left in). */
  twin: boolean;
  hits: SearchHit[];
}

export const loadNothingQueries = (): string[] => (JSON.parse(readFileSync(NOTHING_FILE, "utf8")) as { queries: string[] }).queries;

const serverOf = (name: string) => name.slice(0, name.indexOf("/"));
const toolOf = (name: string) => name.slice(name.indexOf("/") + 1);

/** A setting's searches: the stage off (`vectors` undefined) or on with each index's tool vectors. */
export function gather(
  indexes: readonly ToolIndex[],
  vectors: readonly ToolVectors[] | undefined,
  embedder: StaticEmbedder,
  dev: readonly Query[],
  absent: readonly string[],
): Signals[] {
  const search = (kind: Kind, query: string, keep: (i: number) => boolean, right: readonly string[]): Signals => {
    const chosen = indexes.map((_, i) => i).filter(keep);
    const list = chosen.map((i) => indexes[i]!);
    const meaning = vectors ? { vector: embedder.embedOne(query), vectors: chosen.map((i) => vectors[i]!) } : undefined;
    const { hits, judged } = judgedSearch(list, query, { limit: SEARCH_LIMIT_DEFAULT, meaning });
    const [first, second] = hits;
    const gap = first && first.score > 0 ? (first.score - (second?.score ?? 0)) / first.score : 0;
    const twin = kind === "negative" && first !== undefined && right.some((r) => toolOf(r) === toolOf(first.name));
    return { kind, query, coverage: judged.coverage, cosine: judged.cosine, gap, twin, hits };
  };
  const out: Signals[] = [];
  for (const q of dev) {
    const right = [...q.expect, ...(q.also ?? [])];
    const gone = new Set(right.map(serverOf));
    out.push(search("positive", q.q, () => true, right));
    out.push(search("negative", q.q, (i) => !gone.has(indexes[i]!.tools.length > 0 ? indexes[i]!.tools.server(0) : ""), right));
  }
  for (const q of absent) out.push(search("absent", q, () => true, []));
  return out;
}
