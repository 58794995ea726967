// The dashboard's policies page through the real Worker: the policies as stored, each problem the admin API's
// validation finds in them named on the page, and "view as": the catalog a token labelled ci-bot gets is byte for byte
// what that token's own 2026 tools/list sends; a member in a group denied a whole server does not see it; the tools
// that ask for consent and those hidden are listed.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { kvKeys } from "../../src/config/keys.ts";
import { BASE, adminFetch, replayUrl, seedTeam, waitFor, workerFetch } from "./helpers.ts";
import { expectPageHeaders, getPage, signIn } from "./dashboard-helpers.ts";

const TEAM = "dash-pol";

async function modernList(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${TEAM}/mcp`), {
    fetch: (input, init) => workerFetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "dash-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
  } finally {
    await client.close();
  }
}

const unescape = (html: string) =>
  html.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&");
const catalogOf = (html: string) => unescape(/<pre class="catalog" data-catalog="[^"]*">(.*?)<\/pre>/s.exec(html)?.[1] ?? "");
const listOf = (html: string, name: string) => [...(new RegExp(`<ul data-list="${name}">(.*?)</ul>`, "s").exec(html)?.[1] ?? "").matchAll(/<li>(?:<code>)?(.*?)(?:<\/code>)?<\/li>/g)].map((m) => unescape(m[1]!));

const POLICIES = [
  { who: ["*"], deny: ["graph/delete_entities"], approve: ["graph/create_entities"] },
  { who: ["token:ci-bot"], allow: ["graph/read_graph", "graph/search_nodes", "graph/create_entities"] },
  { who: ["group:contractors"], deny: ["k8s/*"] },
];

describe("the dashboard's policies page", () => {
  it("shows the policies, and the catalog each caller gets exactly as their own tools/list sends it", async () => {
    const seeded = await seedTeam(TEAM, { mcp: { graph: { url: replayUrl("dash-tools") }, k8s: { url: replayUrl("dash-big") } }, policies: POLICIES });
    const minted = (await (await adminFetch("POST", `/teams/${TEAM}/tokens`, { label: "ci-bot" })).json()) as { token: string };
    const botList = await modernList(minted.token);
    // The team's catalog reaches the cache through any caller's list.
    await modernList(seeded);

    const address = "192.0.2.50";
    const cookie = await signIn(address);
    const page = async (query = "") => {
      const res = await getPage(`/dashboard/teams/${TEAM}/policies${query}`, { address, cookie });
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      return res.text();
    };
    const plain = await page();
    expect(unescape(/<textarea[^>]*name="policies"[^>]*>(.*?)<\/textarea>/s.exec(plain)?.[1] ?? "")).toBe(JSON.stringify(POLICIES, null, 2));
    expect(plain).toContain('<option value="ci-bot">ci-bot</option>');
    expect(plain).not.toContain(minted.token);

    // As the bot: byte for byte its own tools/list; the consent tool and the hidden ones listed.
    await waitFor(async () => catalogOf(await page("?label=ci-bot")) === botList, { tries: 40, ms: 50 });
    expect(catalogOf(await page("?label=ci-bot"))).toBe(botList);
    const bot = await page("?label=ci-bot");
    expect(listOf(bot, "approve")).toEqual(["graph/create_entities"]);
    expect(listOf(bot, "hidden")).toContain("graph/delete_entities");
    expect(listOf(bot, "hidden")).toContain("graph/add_observations");
    expect(listOf(bot, "hidden").some((n) => n.startsWith("k8s/"))).toBe(true);

    // As a contractor: no k8s server at all; graph as everyone sees it, deletes hidden.
    const contractor = await page(`?email=${encodeURIComponent("cory@partner.example")}&groups=contractors`);
    expect(catalogOf(contractor)).not.toMatch(/\bk8s\b/);
    expect(catalogOf(contractor)).toContain("read_graph");
    expect(listOf(contractor, "hidden").filter((n) => n.startsWith("graph/"))).toEqual(["graph/delete_entities"]);
    const staff = await page(`?email=${encodeURIComponent("sam@acme.example")}&groups=staff`);
    expect(catalogOf(staff)).toMatch(/\bk8s\b/);

    // Stored policies the admin API would refuse: named on the page (and, meanwhile, everything is hidden).
    await env.TEAMS.put(kvKeys.config(TEAM), JSON.stringify({ mcp: { graph: { url: replayUrl("dash-tools") } }, policies: [{ who: ["team:x"], deny: ["graph/*"] }] }));
    const broken = await page();
    expect(listOf(broken, "issues").join("\n")).toMatch(/^policies\[0\]\.who\[0\]: unknown selector kind "team:"/);
  });
});
