// The code view's tools/list within the team's catalog budget: every namespace with its description while that
// fits, then the names alone, then as many names as fit with the rest counted; never over the budget, the same
// bytes for the same config. Counted with js-tiktoken itself (the benchmarks' tokenizer), as budget.test.ts does,
// so a counter that undercounts cannot hide an overrun.
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/catalog/budget.ts";
import { CATALOG_BUDGET } from "../../src/config/schema.ts";
import { codeDefinitions, fitCodeDefinitions, type NamespaceLine } from "../../src/views/code/definitions.ts";
import { CORPUS_SERVERS } from "../../bench/tokens.ts";

const encoder = getEncoding("o200k_base");
const counter = { count: (text: string) => encoder.encode(text, [], []).length };
const paid = (tools: readonly ListedTool[]) =>
  encoder.encode(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))), [], []).length;

/** `copies` renamed copies of the 20 corpus servers as namespaces, with their dynamic-mode descriptions. */
const team = (copies: number): NamespaceLine[] =>
  Array.from({ length: copies }, (_, i) =>
    CORPUS_SERVERS.map((s) => ({ namespace: (i === 0 ? s.name : `${s.name}_${i}`).replace(/-/g, "_"), description: s.description })),
  ).flat();

const executeText = (tools: readonly ListedTool[]) => tools.find((t) => t.name === "execute")!.description!;

describe("fitCodeDefinitions", () => {
  it("lists every namespace with its description, byte for byte as without a budget, while that fits", () => {
    const namespaces = team(1);
    const fitted = fitCodeDefinitions(namespaces, 200_000, counter);
    expect(fitted.form).toEqual({ kind: "whole" });
    expect(fitted.fits).toBe(true);
    expect(fitted.tools).toEqual(codeDefinitions(namespaces));
    expect(fitted.tokens).toBe(paid(fitted.tools));
    expect(executeText(fitted.tools)).toContain(`- ${namespaces[0]!.namespace}: `);
  });

  it("names every namespace without descriptions when only that fits", () => {
    const namespaces = team(1);
    const whole = paid(codeDefinitions(namespaces));
    const names = paid(codeDefinitions(namespaces, { kind: "names", named: namespaces.length }));
    expect(names).toBeLessThan(whole);
    const fitted = fitCodeDefinitions(namespaces, whole - 1, counter);
    expect(fitted.form).toEqual({ kind: "names", named: namespaces.length });
    const text = executeText(fitted.tools);
    expect(text).toContain(`Namespaces (loaded on first use): ${namespaces.map((n) => n.namespace).join(", ")}.`);
    expect(text).not.toContain("more:");
    expect(fitted.tokens).toBe(names);
  });

  it("past that, names the first namespaces in config order, as many as fit, and counts the rest", () => {
    const namespaces = team(40);
    for (const budget of [CATALOG_BUDGET.min, 1000, CATALOG_BUDGET.default]) {
      const fitted = fitCodeDefinitions(namespaces, budget, counter);
      expect(fitted.fits, `budget ${budget}`).toBe(true);
      expect(paid(fitted.tools), `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(fitted.tokens).toBe(paid(fitted.tools));
      expect(fitted.form.kind).toBe("names");
      const named = fitted.form.kind === "names" ? fitted.form.named : -1;
      expect(named).toBeGreaterThan(0);
      expect(named).toBeLessThan(namespaces.length);
      // As many as fit: one more name would not.
      expect(paid(codeDefinitions(namespaces, { kind: "names", named: named + 1 })), `budget ${budget}`).toBeGreaterThan(budget);
      const text = executeText(fitted.tools);
      const shown = namespaces.slice(0, named).map((n) => n.namespace).join(", ");
      expect(text).toContain(`Namespaces (loaded on first use): ${shown}, and ${namespaces.length - named} more: search finds them and their methods.`);
      expect(text).not.toContain(namespaces[named]!.namespace + ",");
    }
  });

  it("never costs more than the budget, from 20 to 4,000 namespaces; the same config gives the same bytes", () => {
    for (const copies of [1, 5, 50, 200]) {
      const namespaces = team(copies);
      for (const budget of [CATALOG_BUDGET.min, CATALOG_BUDGET.default, 4000]) {
        const fitted = fitCodeDefinitions(namespaces, budget, counter);
        expect(fitted.fits, `${copies} copies, budget ${budget}`).toBe(true);
        expect(paid(fitted.tools), `${copies} copies, budget ${budget}`).toBeLessThanOrEqual(budget);
        expect(JSON.stringify(fitCodeDefinitions(namespaces, budget, counter).tools)).toBe(JSON.stringify(fitted.tools));
      }
    }
  }, 60_000);

  it("below the three tools' own size, names none and says it does not fit", () => {
    const namespaces = team(1);
    const fitted = fitCodeDefinitions(namespaces, 50, counter);
    expect(fitted.fits).toBe(false);
    expect(fitted.form).toEqual({ kind: "names", named: 0 });
    expect(executeText(fitted.tools)).toContain(`Namespaces (loaded on first use): ${namespaces.length} more: search finds them and their methods.`);
  });

  it("says so when there are no namespaces", () => {
    const fitted = fitCodeDefinitions([], CATALOG_BUDGET.default, counter);
    expect(fitted.form).toEqual({ kind: "whole" });
    expect(executeText(fitted.tools)).toMatch(/No namespaces yet\.$/);
  });
});
