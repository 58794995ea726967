// discover_tool's lookup costs the model what the tool's definition says and little more: over every corpus tool,
// each of its text and its structured content stays within the minified schemas, the description and 150 tokens.
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import { corpusFiles, loadCorpus } from "../../harness/replay-server.ts";
import { lookupAnswer } from "../../src/views/discover-answers.ts";
import type { ToolDetails } from "../../src/catalog/render.ts";

const encoder = getEncoding("o200k_base");
const tokens = (text: string): number => encoder.encode(text, [], []).length;
const OVERHEAD = 150;

const tools = corpusFiles().flatMap((file) => (loadCorpus(file).tools as ToolDetails[]).map((tool) => ({ ...tool, name: `${file.replace(/\.json$/, "")}/${tool.name}` })));

/** What the definition itself costs: its schemas as minified JSON, and its description. */
const contentCost = (tool: ToolDetails): number =>
  tokens(JSON.stringify(tool.inputSchema)) + (tool.outputSchema === undefined ? 0 : tokens(JSON.stringify(tool.outputSchema))) + tokens(tool.description ?? "");

describe("discover_tool's lookup", () => {
  it("covers the whole corpus", () => {
    expect(tools.length).toBeGreaterThanOrEqual(421);
  });

  it("costs at most the definition plus 150 tokens, in its text and in its structured content, asking first or not", () => {
    const over: string[] = [];
    for (const tool of tools) {
      const cap = contentCost(tool) + OVERHEAD;
      for (const asks of [false, true]) {
        const answer = lookupAnswer(tool, asks);
        const text = answer.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        const sizes = { text: tokens(text), structured: tokens(JSON.stringify(answer.structuredContent)) };
        for (const [part, size] of Object.entries(sizes)) if (size > cap) over.push(`${tool.name} ${part}${asks ? " (asks)" : ""}: ${size} > ${cap}`);
      }
    }
    expect(over).toEqual([]);
  });

  it("keeps every part of the definition, schemas minified", () => {
    const tool = tools.find((t) => t.outputSchema !== undefined && t.annotations !== undefined) ?? tools.find((t) => t.outputSchema !== undefined)!;
    const answer = lookupAnswer(tool, true);
    const text = answer.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(text).toContain(JSON.stringify(tool.inputSchema));
    expect(text).toContain(JSON.stringify(tool.outputSchema));
    expect(text).not.toMatch(/\n {2}"/);
    expect(answer.structuredContent).toMatchObject({ name: tool.name, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, needsApproval: true });
  });
});
