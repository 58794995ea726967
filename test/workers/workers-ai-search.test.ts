// A team set to `search: { semantic: "workers-ai" }` searched through the real Worker and its objects, with the
// Workers AI binding played by ai-stand-in.ts (the pool has no AI binding and Workers AI has no local mode): the test
// puts the stand-in on the Worker's `env` as `AI` before the sessions start, the way the objects of this isolate read
// their bindings, and takes it off after. The stand-in's calls are counted: each tool text embedded once for every
// session of both eras and the code view, a query once per search in its query form; a hanging binding leaves a
// search answering by words after the bounded wait, the vectors still made for the searches after; a failing one
// answers by words with one log line and is not asked again at every search. No clock: the stand-in holds its answers
// until the test lets them go.
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { getPage, signIn } from "./dashboard-helpers.ts";
import { connect, connectAt, replayUrl, seedTeam } from "./helpers.ts";
import { modernClient } from "./modern-client.ts";
import { aiStandIn } from "./ai-stand-in.ts";
import { codeSearch, discover, names } from "./search-calls.ts";

const ai = aiStandIn();
const bindings = env as { AI?: unknown };

beforeAll(() => void (bindings.AI = ai));
afterAll(() => void delete bindings.AI);

let lines: string[] = [];
const searchLines = () => lines.filter((l) => l.includes('"event":"semantic_search"'));
afterEach(() => {
  vi.restoreAllMocks();
  ai.failWith = undefined;
});
const listen = () => {
  lines = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
};

const queries = () => ai.calls.filter((c) => c.field === "queries");

describe("a workers-ai team's search over the AI binding", () => {
  it("ranks by the binding's vectors in both eras and the code view: each tool text embedded once, a query once a search", async () => {
    listen();
    const servers = { memory: { url: replayUrl("memory") }, postgres: { url: replayUrl("postgres") } };
    const token = await seedTeam("wai-rank", { mcp: servers, search: { semantic: "workers-ai" } });
    const codeToken = await seedTeam("wai-rank-code", { mcp: servers, view: "code", search: { semantic: "workers-ai" } });
    const asked: string[] = [];
    const ask = (query: string) => (asked.push(query), query);
    for (let n = 0; n < 2; n++) {
      const { client } = await connect("wai-rank", token);
      expect(names(await discover(client, ask("forget everything about that person"), 3))).toContain("memory/delete_entities");
      await client.close();
    }
    const modern = await modernClient("wai-rank", token);
    expect(names(await discover(modern, ask("forget everything about that person"), 3))).toContain("memory/delete_entities");
    await modern.close();
    const code = (await connectAt("wai-rank-code", codeToken, "?view=code")).client;
    // Among the hits, or the weak matches of an answer judged not useful (this query is one of its false alarms).
    expect(await codeSearch(code, ask("forget everything about that person"), 3)).toContain("memory.delete_entities");
    await code.close();

    // Every tool text once (memory's 9 tools, postgres's 1), for four sessions of two teams, two eras and two views.
    const documents = ai.texts("documents");
    expect(documents).toHaveLength(10);
    expect(new Set(documents).size).toBe(documents.length);
    // One query call a search, in Qwen3's query form.
    expect(queries().map((c) => c.texts)).toEqual(asked.map((q) => [q]));
    expect(queries().every((c) => c.instruction !== undefined)).toBe(true);
    expect(ai.calls.every((c) => c.model === "@cf/qwen/qwen3-embedding-0.6b")).toBe(true);
    expect(searchLines()).toEqual([]);
  });

  it("answers by words past the bounded wait on a hanging binding, said once; the vectors made go to the next searches", async () => {
    listen();
    const servers = { kubernetes: { url: replayUrl("kubernetes") }, stripe: { url: replayUrl("stripe") } };
    const token = await seedTeam("wai-hang", { mcp: servers, search: { semantic: "workers-ai" } });
    const offToken = await seedTeam("wai-hang-off", { mcp: servers, search: { semantic: "off" } });
    const off = (await connect("wai-hang-off", offToken)).client;
    const words = await discover(off, "hand the money back", 5);
    expect(names(words)).not.toContain("stripe/create_refund");
    const release = ai.hold();
    const { client } = await connect("wai-hang", token);
    const modern = await modernClient("wai-hang", token);
    try {
      expect(await discover(client, "hand the money back", 5)).toEqual(words);
      expect(await discover(modern, "hand the money back", 5)).toEqual(words);
      const told = searchLines();
      expect(told).toHaveLength(1);
      expect(told[0]).toContain('"outcome":"words_only"');
      expect(told[0]).not.toContain("money");
    } finally {
      release();
    }
    // Made in the background once let go: a later search ranks by meaning.
    await vi.waitFor(async () => expect(names(await discover(client, "hand the money back", 2))).toContain("stripe/create_refund"), { timeout: 20_000, interval: 100 });
    expect(new Set(ai.texts("documents")).size).toBe(ai.texts("documents").length);
    await Promise.all([client.close(), modern.close(), off.close()]);
  });

  it("ranks the dashboard's search box by the binding too, a query once a search", async () => {
    // stripe's tools under a server name of their own: a catalog content no other test searched.
    const token = await seedTeam("wai-dash", { mcp: { payments: { url: replayUrl("stripe") } }, search: { semantic: "workers-ai" } });
    // A 2026 list fills the team's catalog cache, which the page searches.
    const client = await modernClient("wai-dash", token);
    await client.listTools();
    expect(names(await discover(client, "hand the money back", 2))).toContain("payments/create_refund");
    await client.close();
    const address = "192.0.2.41";
    const cookie = await signIn(address);
    const search = async () => {
      const res = await getPage(`/dashboard/teams/wai-dash/tools?q=${encodeURIComponent("give them their money back")}`, { address, cookie });
      expect(res.status).toBe(200);
      return [...(await res.text()).matchAll(/<li data-tool="([^"]+)"/g)].map((m) => m[1]);
    };
    // The cache is written beside the list's answer: wait for the page to see it.
    await vi.waitFor(async () => expect(await search()).not.toEqual([]), { timeout: 10_000, interval: 50 });
    const asked = queries().length;
    expect((await search()).slice(0, 2)).toContain("payments/create_refund");
    expect(queries().slice(asked).map((c) => c.texts)).toEqual([["give them their money back"]]);
  });

  it("answers by words when the binding fails, with one log line quoting nothing, and does not ask it again at every search", async () => {
    listen();
    const servers = { github: { url: replayUrl("github") } };
    const token = await seedTeam("wai-fail", { mcp: servers, search: { semantic: "workers-ai" } });
    const offToken = await seedTeam("wai-fail-off", { mcp: servers, search: { semantic: "off" } });
    const off = (await connect("wai-fail-off", offToken)).client;
    const words = await discover(off, "open a bug report", 5);
    ai.failWith = new Error('3040: Capacity temporarily exceeded for "open a bug report"');
    const { client } = await connect("wai-fail", token);
    const modern = await modernClient("wai-fail", token);
    expect(await discover(client, "open a bug report", 5)).toEqual(words);
    const calls = ai.calls.length;
    expect(calls).toBeGreaterThan(0);
    expect(await discover(modern, "open a bug report", 5)).toEqual(words);
    expect(await discover(client, "open a bug report", 5)).toEqual(words);
    // Held off after the failure: no call at these searches, and the one line.
    expect(ai.calls.length).toBe(calls);
    const told = searchLines();
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('"reason":"EmbedderError"');
    expect(told[0]).not.toContain("bug");
    await Promise.all([client.close(), modern.close(), off.close()]);
  });
});
