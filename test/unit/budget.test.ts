// The catalog budget: the whole catalog while it fits, stable steps down past that, never over the budget whatever
// the number of tools, the same bytes for the same state. Counted here with js-tiktoken itself (the benchmarks'
// tokenizer), not with the Worker's counter, so a counter that undercounts cannot hide an overrun.
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/server";
import { fitCatalog, hostTokens, type ListedTool } from "../../src/catalog/budget.ts";
import type { CatalogGroup, CatalogView } from "../../src/catalog/catalog.ts";
import { renderDiscoverDescription, serverSummary } from "../../src/catalog/render.ts";
import { CATALOG_BUDGET } from "../../src/config/schema.ts";
import { DiscoverToolInput, LoadMcpInput, UseToolInput, inputJsonSchema } from "../../src/views/schemas.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { CORPUS_SERVERS } from "../../bench/tokens.ts";
import { random } from "../../bench/lib/random.ts";

const encoder = getEncoding("o200k_base");
const counter = { count: (text: string) => encoder.encode(text, [], []).length };
/** What a host pays for the list, counted independently of budget.ts. */
const paid = (tools: readonly ListedTool[]) =>
  encoder.encode(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))), [], []).length;

const corpus = CORPUS_SERVERS.map((s) => ({ name: s.name, description: s.description, tools: loadCorpus(s.file).tools as Tool[] }));

/** The meta-tools as a session lists them, discover_tool's description filled in. */
function listWith(dynamic: boolean, promoted: readonly Tool[] = []) {
  return (description: string): ListedTool[] => [
    { name: "discover_tool", description, inputSchema: inputJsonSchema(DiscoverToolInput) },
    { name: "use_tool", description: "Calls a tool listed by discover_tool.", inputSchema: inputJsonSchema(UseToolInput) },
    ...(dynamic ? [{ name: "load_mcp", description: "Loads a server.", inputSchema: inputJsonSchema(LoadMcpInput) }] : []),
    ...promoted,
  ];
}

/** A team of `copies` renamed copies of the 20 corpus servers, `lazy` of the servers (from the end) not loaded yet. */
function team(copies: number, lazy = 0): CatalogView {
  const servers = Array.from({ length: copies }, (_, i) => corpus.map((s) => ({ ...s, name: i === 0 ? s.name : `${s.name}-${i}` }))).flat();
  const loaded = servers.slice(0, servers.length - lazy);
  return {
    mode: "multi",
    groups: loaded.map((s): CatalogGroup => ({ server: s.name, state: "ready", tools: s.tools })),
    lazy: servers.slice(servers.length - lazy).map((s) => ({ name: s.name, description: s.description })),
    dynamic: lazy > 0,
  };
}

describe("fitCatalog", () => {
  it("shows the whole catalog, byte for byte as without a budget, while it fits", () => {
    const view = team(1);
    const whole = renderDiscoverDescription(view);
    const fitted = fitCatalog(view, 200_000, listWith(false), counter);
    expect(fitted.description).toBe(whole);
    expect(fitted.level).toBe(0);
    expect(fitted.tokens).toBe(paid(listWith(false)(whole)));
  });

  it("never costs more than the budget, from 1 to 950 servers (21 to some 20,000 tools), eager and lazy", () => {
    const cases: Array<[number, number]> = [
      [1, 0],
      [1, 20],
      [3, 10],
      [12, 0],
      [48, 0],
      [48, 400],
    ];
    for (const [copies, lazy] of cases) {
      const view = team(copies, lazy);
      for (const budget of [CATALOG_BUDGET.min, 1000, CATALOG_BUDGET.default, 4000, 20_000]) {
        const list = listWith(view.dynamic);
        const fitted = fitCatalog(view, budget, list, counter);
        expect(fitted.fits, `${copies} copies, ${lazy} lazy, budget ${budget}`).toBe(true);
        expect(paid(list(fitted.description)), `${copies} copies, ${lazy} lazy, budget ${budget}`).toBeLessThanOrEqual(budget);
        expect(fitted.tokens).toBe(paid(list(fitted.description)));
      }
    }
  }, 120_000);

  it("goes down in stable steps: names only for the largest servers first, then summaries, then a line that says to search", () => {
    const view = team(1);
    const list = listWith(false);
    const whole = paid(list(renderDiscoverDescription(view)));
    const budgets = [0.8, 0.5, 0.3, 0.15].map((f) => Math.round(whole * f)).concat(CATALOG_BUDGET.min);
    const fitted = budgets.map((b) => fitCatalog(view, b, list, counter));
    const texts = fitted.map((f) => f.description);
    // 80%: the largest server (gitlab, 118 tools) is by names only, the smallest still whole.
    expect(texts[0]).toMatch(/^gitlab \(118 tools, names only\): /m);
    expect(texts[0]).toContain("postgres:\n- query");
    expect(texts[0]).toContain("discover_tool with server alone lists one's tools");
    // 30% and below: the largest are summaries.
    expect(texts[2]).toMatch(/^gitlab: 118 tools — /m);
    // At the least budget a config may set, 20 servers still fit as summaries; 100 do not, and some are only counted.
    expect(texts[4]).toMatch(/^gitlab: 118 tools — /m);
    const hundred = fitCatalog(team(5), CATALOG_BUDGET.min, list, counter).description;
    expect(hundred).toMatch(/… and \d+ more servers? with \d+ tools?: find them with discover_tool's query\./);
    // Less budget never shows more.
    const levels = fitted.map((f) => f.level);
    expect([...levels].sort((a, b) => a - b)).toEqual(levels);
  });

  it("cuts, then leaves out, lazy servers under <mcp_servers> when they alone are over the budget", () => {
    const view = team(20, 400);
    const fitted = fitCatalog(view, CATALOG_BUDGET.default, listWith(true), counter);
    expect(fitted.description).toContain("<mcp_servers>");
    expect(fitted.description).toMatch(/… and \d+ more servers to load: find them with discover_tool's query\./);
  });

  it("is the same text for the same state, whatever order the servers arrived in", () => {
    const view = team(6, 5);
    const next = random(7);
    const shuffled = { ...view, groups: [...view.groups].map((g) => ({ g, k: next() })).sort((a, b) => a.k - b.k).map((x) => x.g) };
    for (const budget of [CATALOG_BUDGET.min, CATALOG_BUDGET.default, 9000]) {
      const a = fitCatalog(view, budget, listWith(true), counter);
      const b = fitCatalog(shuffled, budget, listWith(true), counter);
      expect(b.description).toBe(a.description);
      expect(fitCatalog(view, budget, listWith(true), counter).description).toBe(a.description);
    }
  });

  it("reports that nothing fits when the other tools alone are over the budget", () => {
    const big = corpus.find((s) => s.name === "gitlab")!.tools.slice(0, 20);
    const fitted = fitCatalog(team(1), CATALOG_BUDGET.min, listWith(false, big), counter);
    expect(fitted.fits).toBe(false);
  });

  it("counts as the benchmarks do: the compact JSON of name, description and input_schema", () => {
    const tools = [{ name: "a", description: "b", inputSchema: { type: "object" } }];
    expect(hostTokens(tools, counter)).toBe(counter.count('[{"name":"a","description":"b","input_schema":{"type":"object"}}]'));
  });
});

describe("serverSummary", () => {
  it("takes the description's first sentence when there is one", () => {
    expect(serverSummary([], "Stripe payments: customers and invoices. Load it when…")).toBe("Stripe payments: customers and invoices");
  });

  it("else the words its tool names use most, generic verbs left out, ties in code-point order", () => {
    const tools = ["list_issues", "create_issue", "get_issue", "list_pipelines", "retry_pipeline", "get_merge_request", "list_labels"].map((name) => ({ name }));
    expect(serverSummary(tools)).toBe("issue, pipeline, labels, merge, request, retry");
  });
});
