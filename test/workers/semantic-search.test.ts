// The semantic stage through the real Worker and its objects, in both eras and both views that search (discover_tool,
// the code view's search), over corpus catalogs served by the replay harness: queries that share no word with the
// tool meant (the agent bench's misses, and words of our own) find it with the team's default stage (static) and not
// with `search.semantic: "off"`, which answers as BM25F does; a team set to `workers-ai` in a Worker without the AI
// binding is answered by the static model, said once in the log; tool vectors are made once per catalog content for
// every session of the isolate.
import { describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { createStaticEmbedderLoader } from "../../src/catalog/embedder.ts";
import { toolVectorBuilds } from "../../src/catalog/semantic-vectors.ts";
import { connect, connectAt, replayUrl, seedTeam } from "./helpers.ts";
import { modernClient } from "./modern-client.ts";
import { codeSearch, discover, names } from "./search-calls.ts";

const SERVERS = { memory: { url: replayUrl("memory") }, kubernetes: { url: replayUrl("kubernetes") }, stripe: { url: replayUrl("stripe") } };

/**
 * Queries that share no word with the tool meant, the tool, and how deep it must be found: words of our own. The agent
 * bench's two misses are not used: with these three servers, undescribed (an eager server has no description),
 * BM25F ranks kubectl_logs second for "what the pod has been printing", and "give the customer their money back"
 * stays out of the top 8 with the stage too ("customer" pulls the customer tools up).
 */
const MISSED = [
  { query: "hand the money back", tool: "stripe/create_refund", path: "stripe.create_refund", depth: 2 },
  { query: "forget everything about that person", tool: "memory/delete_entities", path: "memory.delete_entities", depth: 3 },
] as const;

describe("the semantic stage in discover_tool", () => {
  it("finds what BM25F misses with the default stage (2025 and 2026 eras); off answers as BM25F alone", async () => {
    const onToken = await seedTeam("sem-on", { mcp: SERVERS });
    const offToken = await seedTeam("sem-off", { mcp: SERVERS, search: { semantic: "off" } });
    const on = (await connect("sem-on", onToken)).client;
    const modern = await modernClient("sem-on", onToken);
    const off = (await connect("sem-off", offToken)).client;
    for (const { query, tool, depth } of MISSED) {
      expect(names(await discover(on, query, depth)), query).toContain(tool);
      expect(names(await discover(modern, query, depth)), query).toContain(tool);
      expect(names(await discover(off, query, depth)), query).not.toContain(tool);
    }
    // Off is BM25F's ranking and scores (recorded over these three catalogs, undescribed, in Node with searchTools alone).
    expect(await discover(off, "what the pod has been printing", 3)).toMatchObject([
      { name: "kubernetes/exec_in_pod", score: 2.87 },
      { name: "kubernetes/kubectl_logs", score: 0.608 },
      { name: "kubernetes/explain_resource", score: 0.406 },
    ]);
    // On, scores are the blend's, 0 to 1.
    expect((await discover(on, "what the pod has been printing", 8)).every((h) => h.score >= 0 && h.score <= 1)).toBe(true);
    await Promise.all([on.close(), modern.close(), off.close()]);
  });

  it("makes each catalog's tool vectors once for every session of the isolate", async () => {
    // Catalogs no other test of this file searches, so this test's builds are all there are.
    const token = await seedTeam("sem-share", { mcp: { postgres: { url: replayUrl("postgres") }, gitlab: { url: replayUrl("gitlab") } } });
    const before = toolVectorBuilds();
    for (let n = 0; n < 4; n++) {
      const { client } = await connect("sem-share", token);
      expect(names(await discover(client, "who am I signed in as", 3))).toContain("gitlab/whoami");
      await client.close();
    }
    const modern = await modernClient("sem-share", token);
    expect(names(await discover(modern, "run some sql", 1))).toEqual(["postgres/query"]);
    await modern.close();
    // Two catalogs, two sets of vectors, made at the first session's first search (one a session: 10).
    expect(toolVectorBuilds() - before).toBe(2);
  });

  it("answers a workers-ai team with the static model where the Worker has no AI binding, said once in the log", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      const token = await seedTeam("sem-ai", { mcp: SERVERS, search: { semantic: "workers-ai" } });
      for (let n = 0; n < 2; n++) {
        const { client } = await connect("sem-ai", token);
        expect(names(await discover(client, "hand the money back", 2))).toContain("stripe/create_refund");
        await client.close();
      }
    } finally {
      spy.mockRestore();
    }
    // Once per isolate: no other test of this file sets workers-ai.
    const told = lines.filter((l) => l.includes('"event":"semantic_search"'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('"outcome":"static_instead"');
    expect(told[0]).not.toContain("money");
  });
});

describe("the static model's first load", () => {
  it("loads through the ASSETS binding once per isolate: its time printed (what a search made before it waits)", async () => {
    const load = createStaticEmbedderLoader();
    const t = performance.now();
    const [a, b] = await Promise.all([load(env.ASSETS), load(env.ASSETS)]);
    console.log(`the static model's first load through ASSETS: ${(performance.now() - t).toFixed(1)} ms`);
    expect(a).toBe(b);
    expect(a.embedOne("refund").length).toBe(128);
  });
});

describe("the semantic stage in the code view's search", () => {
  it("finds what BM25F misses in both eras; off does not", async () => {
    const onToken = await seedTeam("sem-code-on", { mcp: SERVERS, view: "code" });
    const offToken = await seedTeam("sem-code-off", { mcp: SERVERS, view: "code", search: { semantic: "off" } });
    const on = (await connectAt("sem-code-on", onToken, "?view=code")).client;
    const modern = await modernClient("sem-code-on", onToken, "?view=code");
    const off = (await connectAt("sem-code-off", offToken, "?view=code")).client;
    for (const { query, path, depth } of MISSED) {
      expect(await codeSearch(on, query, depth), query).toContain(path);
      expect(await codeSearch(modern, query, depth), query).toContain(path);
      expect(await codeSearch(off, query, depth), query).not.toContain(path);
    }
    await Promise.all([on.close(), modern.close(), off.close()]);
  });
});
