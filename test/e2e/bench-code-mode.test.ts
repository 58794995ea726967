// The code-mode benchmark's smoke run (`bench/code-mode.ts --smoke`: the real proxy under wrangler dev, the task set on
// replay upstreams with scripted answers, every view once, nothing written), so the benchmark cannot rot: every run
// must reach the upstreams with exactly the program's calls, and the figures it prints must hang together. Also the
// replay server's scripted answers, which the benchmark relies on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { loadCorpus, startReplayServer } from "../../harness/replay-server.ts";
import { VIEWS } from "../../src/config/view.ts";
import { figures, resultsUnchanged, runBench } from "./bench-run.ts";

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("replay routes with scripted answers", () => {
  it("answer a fixed result, one made from the arguments, a thrown error as a tool error, and echo the rest", async () => {
    const memory = loadCorpus("modelcontextprotocol__server-memory");
    const replay = await startReplayServer({
      graph: {
        catalog: memory,
        answers: {
          read_graph: { structuredContent: { entities: [], relations: [] } },
          search_nodes: (args) => ({ content: [{ type: "text", text: `found ${String(args.query)}` }] }),
          open_nodes: () => {
            throw new Error("no such node");
          },
        },
      },
    });
    const client = new Client({ name: "scripted", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(replay.url("graph"))));
      // Without content, the structured result's JSON is its text.
      const graph = (await client.callTool({ name: "read_graph", arguments: {} })) as CallToolResult;
      expect(graph.structuredContent).toEqual({ entities: [], relations: [] });
      expect(JSON.parse(textOf(graph))).toEqual({ entities: [], relations: [] });
      expect(textOf((await client.callTool({ name: "search_nodes", arguments: { query: "ana" } })) as CallToolResult)).toBe("found ana");
      const failed = (await client.callTool({ name: "open_nodes", arguments: { names: ["x"] } })) as CallToolResult;
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toBe("no such node");
      // A tool without an answer still echoes; the calls are counted as before.
      const echoed = (await client.callTool({ name: "delete_entities", arguments: { entityNames: ["x"] } })) as CallToolResult;
      expect(JSON.parse(textOf(echoed))).toEqual({ tool: "delete_entities", arguments: { entityNames: ["x"] } });
      expect(replay.stats("graph").calls.map((c) => c.name)).toEqual(["read_graph", "search_nodes", "open_nodes", "delete_entities"]);
    } finally {
      await client.close();
      await replay.close();
    }
  });
});

describe("bench/code-mode.ts --smoke", () => {
  it("does every task in every view through the proxy, each run making exactly the program's upstream calls", async () => {
    const done = resultsUnchanged("code-mode");
    const run = await runBench("bench/code-mode.ts");
    expect(run.code, run.output.slice(-4000)).toBe(0);
    const out = run.stdout;
    const f = figures(run);
    expect(f.errorCount, run.stderr).toBe(0);

    // The programs ran offline against their scripted answers: the calls every view must make.
    expect(out).toMatch(/^offline: 4 programs run against their scripted answers: /m);
    expect(f.tasks).toHaveLength(4);

    // The code view is measured whenever the proxy knows it.
    const codeKnown = (VIEWS as readonly string[]).includes("code");
    expect(f.code.available).toBe(codeKnown);
    const views = codeKnown ? ["meta", "direct", "code"] : ["meta", "direct"];

    // Every run reached the upstreams with exactly the program's calls.
    const runs = f.tasks.length * 2 * views.length;
    expect(out).toContain(`upstream calls verified: ${runs} of ${runs} runs made exactly the program's calls`);
    expect(f.verified).toEqual({ runs, exact: runs });

    for (const t of f.tasks) {
      expect(t.upstreamCalls).toBeGreaterThanOrEqual(3);
      for (const variant of ["eager", "lazy"]) {
        const r = t.runs[variant];
        // Meta: a turn of lookups (after one of load_mcp when lazy), then the program's waves; direct: the waves.
        expect(r.meta.turns).toBe(t.waves.length + (variant === "lazy" ? 2 : 1));
        expect(r.meta.byTool.use_tool.calls).toBe(t.upstreamCalls);
        expect(r.direct.turns).toBe(t.waves.length);
        expect(r.direct.hostCalls).toBe(t.upstreamCalls);
        for (const view of views) {
          expect(r[view].tokens).toBe(r[view].listTokens + r[view].resultTokens);
          expect(r[view].listTokens).toBeGreaterThan(0);
          expect(r[view].wallMs).toBeGreaterThan(0);
          const line = new RegExp(`^${t.id} ${variant} ${view}: ${r[view].turns} turns, ${r[view].hostCalls} host calls .*, ${r[view].tokens} tokens sent `, "m");
          expect(out).toMatch(line);
        }
        // Upstream results the meta and direct views pass on whole cost the same in both.
        expect(r.meta.byTool.use_tool.tokens).toBe(r.direct.byTool.tool.tokens);
        if (codeKnown) {
          // search, describe, execute; one more search turn where a server's search did not offer every method.
          expect(r.code.turns).toBe(r.code.byTool.search.calls > t.servers.length ? 4 : 3);
          expect(r.code.byTool.describe.calls).toBe(1);
          expect(r.code.executes).toBe(1);
          expect(r.code.byTool.execute.calls).toBe(1);
        }
      }
    }

    if (codeKnown) {
      expect(out).toContain("code view: 1 execute per task: met");
      const ratio = /^code vs meta: ([\d.]+)× fewer tokens on tasks of ≥3 calls \(worst: [\w-]+; over all: ([\d.]+)×\); goal ≥ 5×: (met|missed)$/m.exec(out);
      expect(ratio, out).not.toBeNull();
      expect(Number(ratio![1])).toBeGreaterThan(1);
      expect(ratio![3]).toBe(Number(ratio![1]) >= 5 ? "met" : "missed");
    } else {
      expect(out).toContain("code vs meta: not measured");
    }
    expect(out).toContain("## Code mode: multi-step tasks");
    expect(done(), "a smoke run must not write bench/results").toBe(true);
  }, 300_000);
});
