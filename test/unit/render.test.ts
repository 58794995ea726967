// The catalog text: one-line descriptions, layout in both modes, determinism, and unknown-name answers.
import { describe, expect, it } from "vitest";
import { MAX_SUGGESTED, closestNames, editDistance, oneLine, rankByCloseness, renderDiscoverDescription, renderToolDetails, renderUnknownTool } from "../../src/catalog/render.ts";
import type { CatalogView } from "../../src/catalog/catalog.ts";

describe("oneLine", () => {
  it("keeps the first sentence only", () => {
    expect(oneLine("Reads a file. Use it for text files only.")).toBe("Reads a file");
    expect(oneLine("Version 1.2 parser! More text")).toBe("Version 1.2 parser!");
    expect(oneLine("  Multi\n  line\tdescription  ")).toBe("Multi line description");
    expect(oneLine(undefined)).toBe("");
  });

  it("cuts at a word boundary within 100 characters and ends with …", () => {
    const long = "Search the organisation's repositories for code, issues, pull requests and discussions matching a query string with filters";
    const line = oneLine(long);
    expect(line.length).toBeLessThanOrEqual(100);
    expect(line.endsWith("…")).toBe(true);
    expect(long.startsWith(line.slice(0, -1))).toBe(true);
    expect(long[line.length - 1]).toBe(" ");
    const exact = "x".repeat(100);
    expect(oneLine(exact)).toBe(exact);
    expect(oneLine("y".repeat(150))).toBe(`${"y".repeat(99)}…`);
  });
});

const view = (over: Partial<CatalogView>): CatalogView => ({ mode: "multi", groups: [], lazy: [], dynamic: false, ...over });

describe("renderDiscoverDescription", () => {
  it("groups tools under their server, servers and tools in code-point order, failed servers with a reason", () => {
    const text = renderDiscoverDescription(
      view({
        groups: [
          { server: "zeta", state: "ready", tools: [{ name: "b", description: "Bee. More." }, { name: "a", description: "Ay" }] },
          { server: "alpha", state: "unavailable", reason: "unreachable (connection refused)" },
          { server: "Beta", state: "ready", tools: [{ name: "only" }] },
        ],
      }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Returns the full description and input schema of a tool listed below; call it before use_tool. With query instead of tool_name, finds tools.
      Tool names are server/tool.

      <tools>
      Beta:
      - only
      alpha: unavailable — unreachable (connection refused)
      zeta:
      - a: Ay
      - b: Bee
      </tools>"
    `);
  });

  it("lists bare names in single-MCP mode, with no namespace hint", () => {
    const text = renderDiscoverDescription(
      view({ mode: "single", groups: [{ server: "mcp", state: "ready", tools: [{ name: "echo", description: "Echo it." }] }] }),
    );
    expect(text.endsWith("\n\n<tools>\n- echo: Echo it\n</tools>")).toBe(true);
    expect(text).not.toContain("server/tool");
  });

  it("is byte-for-byte the same whatever order the upstreams arrived in", () => {
    const a = { server: "a", state: "ready" as const, tools: [{ name: "x" }, { name: "y" }] };
    const b = { server: "b", state: "ready" as const, tools: [{ name: "z" }] };
    const reversed = { ...a, tools: [...a.tools].reverse() };
    expect(renderDiscoverDescription(view({ groups: [a, b] }))).toBe(renderDiscoverDescription(view({ groups: [b, reversed] })));
  });

  it("shows an empty tools block when nothing is configured", () => {
    expect(renderDiscoverDescription(view({})).endsWith("<tools>\n</tools>")).toBe(true);
  });

  it("in dynamic mode with nothing loaded: how to call and load, then one line per lazy server in config order, no <tools>", () => {
    const text = renderDiscoverDescription(
      view({ dynamic: true, lazy: [{ name: "zeta", description: "Zeta does z.\n  Load it for\tz." }, { name: "alpha", description: "Alpha does a." }] }),
    );
    expect(text).toMatchInlineSnapshot(`
      "Returns the full description and input schema of a tool listed below; call it before use_tool. With query instead of tool_name, finds tools.
      Tool names are server/tool.

      Servers under <mcp_servers> are not loaded yet: load_mcp with a server's name adds its tools to <tools> for the rest of the session.

      <mcp_servers>
      zeta: Zeta does z. Load it for z.
      alpha: Alpha does a.
      </mcp_servers>"
    `);
  });

  it("in dynamic mode lists loaded servers under <tools> after the servers still lazy", () => {
    const text = renderDiscoverDescription(
      view({ dynamic: true, lazy: [{ name: "later", description: "Later." }], groups: [{ server: "now", state: "ready", tools: [{ name: "t", description: "Tee." }] }] }),
    );
    expect(text.endsWith("\n\n<mcp_servers>\nlater: Later.\n</mcp_servers>\n\n<tools>\nnow:\n- t: Tee\n</tools>")).toBe(true);
    // Everything lazy loaded: no <mcp_servers> block and no paragraph about it.
    const done = renderDiscoverDescription(view({ dynamic: true, groups: [{ server: "now", state: "ready", tools: [{ name: "t" }] }] }));
    expect(done).not.toContain("mcp_servers");
    expect(done).toContain("Tool names are server/tool.\n\n<tools>\nnow:\n- t\n</tools>");
  });
});

describe("renderToolDetails", () => {
  it("gives the name as exposed, the full description and the schemas", () => {
    const text = renderToolDetails({
      name: "gh/search",
      description: "Search code.\nLong details.",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { n: { type: "number" } } },
      annotations: { readOnlyHint: true },
    });
    expect(text).toContain("Tool: gh/search\nDescription: Search code.\nLong details.\n\nInput Schema:\n{\"type\":\"object\"}");
    expect(text).toContain("Output Schema:");
    expect(text).toContain('Output Schema:\n{"type":"object","properties":{"n":{"type":"number"}}}');
    expect(text).toContain('Annotations:\n{"readOnlyHint":true}');
    expect(renderToolDetails({ name: "x", inputSchema: {} })).not.toContain("Output Schema");
  });
});

describe("unknown names", () => {
  it("ranks the closest names first", () => {
    expect(rankByCloseness("gh/serch", ["gh/list", "gh/search", "fs/search", "gh/searches"])).toEqual([
      "gh/search",
      "fs/search",
      "gh/searches",
      "gh/list",
    ]);
  });

  it("keeps exactly the k best of a full ranking, with the same order, however the names are spread", () => {
    // A seeded generator, so a failure can be replayed.
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const word = () => Array.from({ length: 3 + Math.floor(random() * 10) }, () => "abcdeghilmnorst_"[Math.floor(random() * 16)]).join("");
    const names = Array.from({ length: 400 }, () => `${word().slice(0, 4)}/${word()}`);
    const full = (query: string) => {
      const q = query.toLowerCase();
      const score = (name: string) => {
        const n = name.toLowerCase();
        const bare = n.slice(n.indexOf("/") + 1);
        if (n === q || bare === q) return 0;
        let best = Math.min(editDistance(q, n), editDistance(q, bare));
        if (n.includes(q) || (q.length > 2 && q.includes(bare))) best = Math.min(best, 1);
        return best;
      };
      return [...names].sort((a, b) => score(a) - score(b) || (a < b ? -1 : a > b ? 1 : 0));
    };
    for (const query of [names[3]!, `${names[9]!}x`, word(), names[17]!.split("/")[1]!, "ab", ""]) {
      for (const k of [1, 5, 50, 400]) expect(closestNames(query, names, k)).toEqual(full(query).slice(0, k));
    }
  });

  it("stops measuring a distance once it must exceed the limit", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("kitten", "sitting", 3)).toBe(3);
    expect(editDistance("kitten", "sitting", 2)).toBe(3);
    expect(editDistance("a", "abcdefgh", 2)).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests at most 8 names, closest first, then how many more and the call that finds them", () => {
    const names = Array.from({ length: 70 }, (_, i) => `s/tool${String(i).padStart(2, "0")}`);
    const text = renderUnknownTool("s/tool07x", names, "discover_tool with query finds the others");
    expect(text.startsWith('Unknown tool: "s/tool07x". Available tools (closest first): s/tool07, ')).toBe(true);
    expect(text.replace(/ … .*$/, "").split(", ")).toHaveLength(MAX_SUGGESTED);
    expect(text.endsWith(" … and 62 more: discover_tool with query finds the others.")).toBe(true);
    expect(renderUnknownTool("s/tool07x", names)).toMatch(/ … and 62 more\.$/);
    // A short catalog is named whole, with nothing after it.
    expect(renderUnknownTool("s/tool0", names.slice(0, 3), "hint")).toBe('Unknown tool: "s/tool0". Available tools (closest first): s/tool00, s/tool01, s/tool02.');
    expect(renderUnknownTool("x", [])).toBe('Unknown tool: "x". No tools are available yet.');
  });
});
