// The dashboard's audit page through the real Worker: a session's real calls are on it newest first, filters are the
// admin API's own (a bad one named on the page, nothing read), pages follow the cursor, the export is the admin API's
// NDJSON for the same filters, a session is needed for both, and no argument of a call appears anywhere.
import { describe, expect, it } from "vitest";
import { adminFetch, connect, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { expectPageHeaders, getPage, signIn } from "./dashboard-helpers.ts";

const TEAM = "dash-audit";
const CANARY = "wombatcanary";

async function apiEntries(query: string): Promise<Array<{ id: string; tool: string; outcome: string }>> {
  const res = await adminFetch("GET", `/teams/${TEAM}/audit${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Array<{ id: string; tool: string; outcome: string }> }).entries;
}

const rowIds = (html: string) => [...html.matchAll(/<tr data-entry="([^"]+)">/g)].map((m) => m[1]!);

describe("the dashboard's audit page", () => {
  it("shows the trail as the admin API reads it: filtered, paged, exported, nothing of the arguments", async () => {
    const token = await seedTeam(TEAM, { mcp: { memory: { url: replayUrl("memory") } } });
    const { client } = await connect(TEAM, token);
    for (const tool_name of ["memory/search_nodes", "memory/read_graph", "memory/no_such_tool"]) {
      await client.callTool({ name: "use_tool", arguments: { tool_name, tool_input: { query: CANARY } } });
    }
    await client.close();
    expect(await waitFor(async () => (await apiEntries("?limit=1000")).filter((e) => e.tool.startsWith("memory/")).length >= 3, { tries: 100, ms: 50 })).toBe(true);
    const address = "192.0.2.31";
    const cookie = await signIn(address);

    // Every entry the API has, in its order; the unknown tool's outcome named.
    const all = await getPage(`/dashboard/teams/${TEAM}/audit`, { address, cookie });
    expect(all.status).toBe(200);
    expectPageHeaders(all);
    const html = await all.text();
    expect(rowIds(html)).toEqual((await apiEntries("")).map((e) => e.id));
    expect(html).toContain('<td data-outcome="unknown_tool">unknown_tool</td>');
    expect(html).not.toContain(CANARY);
    expect(html).not.toContain(token);

    // A filter, as the API's.
    const filtered = await (await getPage(`/dashboard/teams/${TEAM}/audit?outcome=unknown_tool&tool=&since=`, { address, cookie })).text();
    expect(rowIds(filtered)).toEqual((await apiEntries("?outcome=unknown_tool")).map((e) => e.id));
    expect(filtered).toContain('name="outcome" value="unknown_tool"');

    // Pages of one, through the "Older entries" link, hold every entry once.
    const seen: string[] = [];
    let path: string | undefined = `/dashboard/teams/${TEAM}/audit?limit=1`;
    for (let i = 0; path && i < 10; i++) {
      const pageHtml = await (await getPage(path, { address, cookie })).text();
      seen.push(...rowIds(pageHtml));
      path = /<a rel="next" href="([^"]+)"/.exec(pageHtml)?.[1]?.replaceAll("&amp;", "&");
    }
    expect(seen).toEqual((await apiEntries("")).map((e) => e.id));

    // A bad filter is named beside the form, and nothing is read.
    const bad = await getPage(`/dashboard/teams/${TEAM}/audit?since=yesterday&limit=0`, { address, cookie });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toMatch(/since: must be an ISO 8601 time/);
    expect(badHtml).toMatch(/limit: limit is a whole number from 1 to 1000/);
    expect(rowIds(badHtml)).toEqual([]);

    // The export is the API's NDJSON for the same filters, as a file.
    const exported = await getPage(`/dashboard/teams/${TEAM}/audit.ndjson?tool=memory/*`, { address, cookie });
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(exported.headers.get("content-disposition")).toBe(`attachment; filename="${TEAM}-audit.ndjson"`);
    const apiNdjson = await (await adminFetch("GET", `/teams/${TEAM}/audit?tool=memory/*&format=ndjson`)).text();
    expect(await exported.text()).toBe(apiNdjson);

    // Without a session, neither.
    for (const p of [`/dashboard/teams/${TEAM}/audit`, `/dashboard/teams/${TEAM}/audit.ndjson`]) {
      const anonymous = await getPage(p, { address });
      expect(anonymous.status).toBe(303);
      expect(anonymous.headers.get("location")).toBe("/dashboard");
    }
  });
});
