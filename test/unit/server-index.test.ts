// A server's index over the real corpus catalogs: every tool named, within its cap (load_mcp's, the meta view's and
// the code view's), the descriptions shrinking past the cap and names never dropping, the same bytes for the same
// tools. Counted with js-tiktoken itself (the benchmarks' tokenizer), not the Worker's counter, so a counter that
// undercounts cannot hide an overrun.
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/server";
import type { UpstreamCatalog } from "../../src/catalog/catalog.ts";
import { buildListing, loadCap } from "../../src/catalog/listing.ts";
import { SERVER_INDEX_TOKENS, firstClause, fitIndex, indexText, namespaceIndex, serverIndex } from "../../src/catalog/server-index.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { CORPUS_SERVERS } from "../../bench/tokens.ts";

const encoder = getEncoding("o200k_base");
const tokens = (text: string) => encoder.encode(text, [], []).length;
const counter = { count: tokens };

const corpus = CORPUS_SERVERS.map((s) => {
  const c = loadCorpus(s.file);
  const catalog: UpstreamCatalog = {
    capabilities: {},
    tools: c.tools as Tool[],
    resources: c.resources as UpstreamCatalog["resources"],
    resourceTemplates: c.resourceTemplates as UpstreamCatalog["resourceTemplates"],
    prompts: c.prompts as UpstreamCatalog["prompts"],
    notes: [],
  };
  return { name: s.name, description: s.description, catalog };
});
const gitlab = corpus.find((s) => s.catalog.tools.length === 118)!;

/** A 2026 handle as the router mints it: `<nonce>.ts2.<payload>.<mac>`, base64url (random text costs the most tokens). */
const HANDLE = "3BubjLg141dgx8KO6ZZ8Qw.ts2.eyJleHAiOjE3OTk5OTk5OTl9.taozDuLq4qd8Zy80cWDuFy3L81xX8qAA6BmN1MKYdg8";
const eras = (name: string) => ({
  2025: { first: `Loaded "${name}".` },
  2026: {
    first: `Loaded "${name}" into toolset "${HANDLE}": pass "toolset": "${HANDLE}" with use_tool and discover_tool to reach its tools.`,
    lead: { toolset: HANDLE, toolsetExpiresAt: "2026-11-29T03:00:00.000Z" },
    toolset: HANDLE,
  },
});

/** Each tool of `tools` on a line of its own in `text`, under `prefix`. */
function expectEveryToolNamed(text: string, tools: readonly Tool[], prefix = "") {
  const lines = new Set(text.split("\n").map((l) => /^- ([^:]+)(?::|$)/.exec(l)?.[1]));
  for (const t of tools) expect(lines, t.name).toContain(prefix + t.name);
}

describe("load_mcp's answer", () => {
  it("fits its cap, text and structured each, for every corpus server in both eras, and names every tool", () => {
    for (const s of corpus) {
      for (const [era, words] of Object.entries(eras(s.name))) {
        const { text, structured } = buildListing("multi", s.name, s.catalog, counter, words);
        const cap = loadCap(s.catalog.tools.length);
        expect(tokens(text), `${s.name} ${era} text`).toBeLessThanOrEqual(cap);
        expect(tokens(JSON.stringify(structured)), `${s.name} ${era} structured`).toBeLessThanOrEqual(cap);
        expectEveryToolNamed(text, s.catalog.tools);
        expect(Object.keys(structured["tools"] as object).sort()).toEqual(s.catalog.tools.map((t) => t.name).sort());
      }
    }
  });

  it("holds the issue's caps: 1,500 tokens for the 118-tool server, 600 for 33 tools", () => {
    expect(loadCap(118)).toBeLessThanOrEqual(1_500);
    expect(loadCap(33)).toBeLessThanOrEqual(600);
    // The corpus has no 33-tool server: the first 33 of the 118 stand for one.
    const tools = gitlab.catalog.tools.slice(0, 33);
    const { text, structured } = buildListing("multi", "gitlab", { ...gitlab.catalog, tools }, counter, eras("gitlab")[2026]);
    expect(tokens(text)).toBeLessThanOrEqual(600);
    expect(tokens(JSON.stringify(structured))).toBeLessThanOrEqual(600);
  });

  it("counts resources, templates and prompts, says where their lists are, and keeps the 2026 handle first", () => {
    const everything = corpus.find((s) => s.name === "everything")!;
    const old = buildListing("multi", "everything", everything.catalog, counter, eras("everything")[2025]);
    expect(old.structured["counts"]).toEqual({ tools: 13, resources: 7, resource_templates: 2, prompts: 4 });
    expect(old.structured).not.toHaveProperty("resources");
    expect(old.text).toContain('"everything" has 13 tools, 7 resources, 2 resource templates, 4 prompts.');
    expect(old.text).toContain('discover_tool {"server":"everything"} answers this list again');
    expect(old.text).toContain("resources/list, resources/templates/list and prompts/list");
    const modern = buildListing("multi", "everything", everything.catalog, counter, eras("everything")[2026]);
    expect(Object.keys(modern.structured)[0]).toBe("toolset");
    expect(modern.text.split("\n")[0]).toContain(`toolset "${HANDLE}"`);
    expect(modern.text).toContain('With that toolset, discover_tool {"server":"everything"}');
  });
});

describe("a server's index", () => {
  it("fits SERVER_INDEX_TOKENS for every corpus server in the meta and code views, every tool named", () => {
    for (const s of corpus) {
      const meta = serverIndex("multi", s.name, s.description, s.catalog.tools, counter);
      expect(tokens(meta.text), s.name).toBeLessThanOrEqual(SERVER_INDEX_TOKENS);
      expect(tokens(JSON.stringify(meta.structured)), s.name).toBeLessThanOrEqual(SERVER_INDEX_TOKENS);
      expectEveryToolNamed(meta.text, s.catalog.tools);
      const namespace = s.name.replace(/-/g, "_");
      const code = namespaceIndex(namespace, s.description, s.catalog.tools, counter, "describe");
      expect(tokens(code), s.name).toBeLessThanOrEqual(SERVER_INDEX_TOKENS);
      expectEveryToolNamed(code, s.catalog.tools, `${namespace}.`);
    }
  });

  it("ends the code view's index with a describe of two of its own method paths", () => {
    const code = namespaceIndex("gitlab", gitlab.description, gitlab.catalog.tools, counter, "describe");
    expect(code.split("\n")[0]).toBe(`gitlab: ${gitlab.description.split(":")[0]}: projects, repositories, files, branches, merge requests and their… (118 methods)`);
    expect(code.split("\n").at(-1)).toBe('Declarations: describe {"path":"gitlab.approve_merge_request, gitlab.bulk_publish_draft_notes"} (method paths, comma-separated).');
  });

  it("shrinks the descriptions past the cap, then names tools alone, never dropping one", () => {
    const tools = gitlab.catalog.tools;
    const cost = (lines: Parameters<typeof indexText>[0]) => tokens(indexText(lines));
    const whole = fitIndex(tools, cost, Number.POSITIVE_INFINITY);
    expect(whole.detail).toBe("sentences");
    const steps = [1_650, 1_400, 1_000, 300].map((cap) => fitIndex(tools, cost, cap));
    expect(steps.map((s) => s.detail)).toEqual(["clauses", "words", "some names", "names"]);
    for (const [i, step] of steps.entries()) {
      expect(step.lines.map((l) => l.name).sort()).toEqual(tools.map((t) => t.name).sort());
      // Past what names alone cost, the cap holds; below it, the names still all come.
      if (i < 3) expect(step.tokens).toBeLessThanOrEqual([1_650, 1_400, 1_000][i]!);
      else expect(step.lines.every((l) => l.about === "")).toBe(true);
    }
    const partial = steps[2]!.lines;
    const kept = partial.findIndex((l) => l.about === "");
    expect(kept).toBeGreaterThan(0);
    expect(partial.slice(kept).every((l) => l.about === "")).toBe(true);
  });

  it("is the same bytes for the same tools, in whatever order they come", () => {
    const tools = gitlab.catalog.tools;
    const reversed = [...tools].reverse();
    expect(serverIndex("multi", "gitlab", undefined, reversed, counter)).toEqual(serverIndex("multi", "gitlab", undefined, tools, counter));
    expect(buildListing("multi", "gitlab", { ...gitlab.catalog, tools: reversed }, counter, { first: "x" })).toEqual(
      buildListing("multi", "gitlab", gitlab.catalog, counter, { first: "x" }),
    );
  });
});

describe("firstClause", () => {
  it("keeps the first sentence's first clause within the width, cut at a word", () => {
    expect(firstClause("Get branch details (commit, protection status). Use this for a known branch.", 64)).toBe("Get branch details");
    expect(firstClause("Runs a query; read-only.", 64)).toBe("Runs a query");
    expect(firstClause("Lists files - paginated", 64)).toBe("Lists files");
    expect(firstClause("Create or update the status of a commit in the pipeline", 24)).toBe("Create or update the…");
    expect(firstClause("The field name, e.g. 'System.Title'. Required.", 64)).toBe("The field name, e.g. 'System.Title'");
    expect(firstClause(undefined, 64)).toBe("");
  });
});
