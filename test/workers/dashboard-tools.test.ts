// The dashboard's tools page with real data, through the real Worker: the team's catalog as a 2026 client's real
// tools/list shows it (discover_tool's description byte for byte, and the tokens that list costs a host), and the
// search box's ranking and scores equal to discover_tool's for the same query, asked through a real session.
import { describe, expect, it } from "vitest";
import { connect, hostPaid, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { expectPageHeaders, getPage, modernClient, signIn, totalOf, unescapeHtml as unescape } from "./dashboard-helpers.ts";

const TEAM = "dash-tl";
const QUERY = "search the knowledge graph nodes";

/** A 2026-era client's tools/list of the team. */
async function modernList(team: string, token: string) {
  const client = await modernClient(team, token);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const catalogOf = (html: string) => unescape(/<pre class="catalog" data-catalog="">(.*?)<\/pre>/s.exec(html)?.[1] ?? "");

const hitsOf = (html: string) => [...html.matchAll(/<li data-tool="([^"]+)">.*?data-score="([^"]+)"/gs)].map((m) => ({ name: unescape(m[1]!), score: Number(m[2]) }));

describe("the dashboard's tools page", () => {
  it("shows the catalog a 2026 tools/list sends, its tokens, and discover_tool's ranking for a search", async () => {
    const token = await seedTeam(TEAM, {
      mcp: { graph: { url: replayUrl("dash-tools") }, k8s: { url: replayUrl("dash-big") }, later: { url: replayUrl("dash-lazy"), description: "Loaded on demand" } },
      catalog_budget: 800,
    });
    const listed = await modernList(TEAM, token);
    const discover = listed.find((t) => t.name === "discover_tool")!.description!;
    expect(discover).toContain("- search_nodes: Search for nodes");

    const address = "192.0.2.40";
    const cookie = await signIn(address);
    const page = async (query = "") => {
      const res = await getPage(`/dashboard/teams/${TEAM}/tools${query}`, { address, cookie });
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      return res.text();
    };
    // The list's catalog reaches the team's cache as the object shows it: wait for the page to see it.
    expect(await waitFor(async () => catalogOf(await page()) === discover, { tries: 100, ms: 50 })).toBe(true);
    const html = await page();
    expect(Number(totalOf(html, "tokens"))).toBe((await hostPaid())(listed));
    expect(Number(totalOf(html, "budget"))).toBe(800);
    // Over the budget whole: the list is a step down, and the page shows the same step.
    expect(Number(totalOf(html, "level"))).toBeGreaterThan(0);
    expect(html).toContain(`href="/dashboard/teams/${TEAM}/upstreams"`);

    // The search box: the same hits, order and scores as discover_tool's search in a real session.
    const { client, transport } = await connect(TEAM, token);
    const answer = await client.callTool({ name: "discover_tool", arguments: { query: QUERY } });
    const agent = (answer.structuredContent as { tools: Array<{ name: string; score: number }> }).tools;
    await transport.terminateSession();
    await client.close();
    expect(agent.length).toBeGreaterThan(1);
    const searched = await page(`?q=${encodeURIComponent(QUERY)}`);
    expect(hitsOf(searched)).toEqual(agent.map((t) => ({ name: t.name, score: t.score })));
    expect(searched).toContain(`value="${QUERY}"`);

    // A search longer than discover_tool takes is refused, with a page that says why.
    const long = await getPage(`/dashboard/teams/${TEAM}/tools?q=${"x".repeat(1001)}`, { address, cookie });
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("at most 1,000 characters");
    expect(await page("?q=")).not.toContain("data-hits");
    const markup = await page(`?q=${encodeURIComponent('<img src=x onerror="1">')}`);
    expect(markup).not.toContain("<img src=x");
  });
});
