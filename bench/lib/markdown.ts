// Markdown for the benchmarks' result sections: a table from a header, rows and column alignments.

/** A markdown table; `align` gives each column's separator (`---`, `--:`, …), `---` where it gives none. */
export function table(head: string[], rows: Array<Array<string | number>>, align?: string[]): string {
  const sep = head.map((_, i) => align?.[i] ?? "---");
  return [head, sep, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}
