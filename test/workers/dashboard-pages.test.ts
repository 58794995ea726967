// The operator dashboard's pages with real data, through the real Worker: a session makes tool calls (one ok twice, one
// of a name that exists nowhere, one whose name is markup), and the team list and the team's overview then show what
// the admin API's usage and audit routes report, with every name escaped and no token or secret anywhere on the page.
import { describe, expect, it } from "vitest";
import { adminFetch, connect, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { csrfOf, expectPageHeaders, getPage, signIn, totalOf } from "./dashboard-helpers.ts";

const TEAM = "dash-a";
const SECRET_VALUE = "s3cret-header-value-never-shown";
/** A tool name that is markup: the host chose it, the trail keeps it, a page must show it as text. */
const MARKUP_TOOL = 'memory/<script>alert("x")</script>';

interface Totals {
  sessions: number;
  direct: number;
  sent: number;
  saved: number;
  ratio: number | null;
  calls: { tools: number };
}

async function usageTotals(team: string, query = ""): Promise<Totals> {
  const res = await adminFetch("GET", `/teams/${team}/usage${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { totals: Totals }).totals;
}

async function auditCalls(team: string): Promise<Array<{ tool: string; outcome: string; kind: string }>> {
  const res = await adminFetch("GET", `/teams/${team}/audit?limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Array<{ tool: string; outcome: string; kind: string }> }).entries.filter((e) => e.kind === "tool_call");
}

/** Seeds the team (an upstream whose header is a secret), makes the calls, ends the session, waits for both stores. */
async function teamWithCalls(): Promise<string> {
  const token = await seedTeam(TEAM, { mcp: { memory: { url: replayUrl("memory"), headers: { "x-api-key": "${secret:API_KEY}" } } } });
  expect((await adminFetch("PUT", `/teams/${TEAM}/secrets/API_KEY`, { value: SECRET_VALUE })).status).toBe(204);
  const { client, transport } = await connect(TEAM, token);
  for (const tool_name of ["memory/search_nodes", "memory/search_nodes", "memory/no_such_tool", MARKUP_TOOL]) {
    await client.callTool({ name: "use_tool", arguments: { tool_name, tool_input: { query: "dashboard" } } });
  }
  await transport.terminateSession();
  await client.close();
  expect(await waitFor(async () => (await usageTotals(TEAM)).calls.tools >= 4 && (await auditCalls(TEAM)).length >= 4, { tries: 100, ms: 50 })).toBe(true);
  return token;
}

describe("the dashboard's pages", () => {
  it("the team list and the overview show the usage and audit APIs' figures, names escaped, nothing secret", async () => {
    const token = await teamWithCalls();
    const address = "192.0.2.10";
    const cookie = await signIn(address);

    const list = await getPage("/dashboard", { address, cookie });
    expect(list.status).toBe(200);
    expectPageHeaders(list);
    const listHtml = await list.text();
    const week = await usageTotals(TEAM, "?days=7");
    const row = new RegExp(`<tr data-team="${TEAM}">.*?</tr>`, "s").exec(listHtml)?.[0] ?? "";
    expect(row).toContain(`<a href="/dashboard/teams/${TEAM}">${TEAM}</a>`);
    expect(row).toContain('data-servers="1"');
    expect(row).toContain('data-tokens="1"');
    expect(row).toContain(`data-calls="${week.calls.tools}"`);
    expect(week.calls.tools).toBe(4);
    // Every row is a team with a config: the team's tokens, secret and catalog keys under team/<name>/ make no rows.
    const listed = [...listHtml.matchAll(/<tr data-team="([^"]+)">/g)].map((m) => m[1]!);
    expect(listed.filter((t) => t === TEAM)).toHaveLength(1);
    for (const team of listed) expect((await adminFetch("GET", `/teams/${team}/config`)).status, team).toBe(200);

    const res = await getPage(`/dashboard/teams/${TEAM}`, { address, cookie });
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const html = await res.text();
    const usage = await usageTotals(TEAM);
    expect(Number(totalOf(html, "sessions"))).toBe(usage.sessions);
    expect(Number(totalOf(html, "calls"))).toBe(usage.calls.tools);
    expect(Number(totalOf(html, "direct"))).toBe(usage.direct);
    expect(Number(totalOf(html, "sent"))).toBe(usage.sent);
    expect(Number(totalOf(html, "saved"))).toBe(usage.saved);
    expect(usage.saved).toBeGreaterThan(0);
    expect(totalOf(html, "ratio")).toBe(usage.ratio!.toFixed(4));
    const calls = await auditCalls(TEAM);
    const failed = calls.filter((e) => e.outcome !== "ok");
    expect(failed.length).toBe(2);
    expect(Number(totalOf(html, "errors"))).toBe(failed.length);

    // Today's row and its bars, and the top tools with their failures.
    const today = new Date().toISOString().slice(0, 10);
    expect(html).toMatch(new RegExp(`<tr data-day="${today}"><th scope="row">${today}</th><td class="num">1</td><td class="num">4</td><td class="num">2</td>`));
    expect(html).toContain(`<title>${today}: 4 calls</title>`);
    expect(html).toMatch(/<tr data-tool="memory\/search_nodes"><th scope="row"><code>memory\/search_nodes<\/code><\/th><td class="num">2<\/td><td class="num">0<\/td>/);
    expect(html).toMatch(/<tr data-tool="memory\/no_such_tool">.*?<td class="num">1<\/td><td class="num">1<\/td>/);

    // The markup name is text: escaped in the attribute and the cell, never a tag.
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    // Nothing secret: not the team's token, the secret's value, its header, nor the admin token.
    for (const page of [listHtml, html]) {
      for (const secret of [token, SECRET_VALUE, "x-api-key", "test-admin-token"]) expect(page).not.toContain(secret);
    }
    // The signed-in pages carry the sign-out form with the session's CSRF token; the overview links its built
    // neighbours, and no page not built yet.
    expect(csrfOf(html)).toBe(csrfOf(listHtml));
    // Pages that exist are linked; those still to come are not (no link may lead to a 404).
    for (const built of ["/upstreams", "/tools", "/policies", "/audit", "/members"]) {
      expect(html).toContain(`href="/dashboard/teams/${TEAM}${built}"`);
      expect((await getPage(`/dashboard/teams/${TEAM}${built}`, { address, cookie })).status).toBe(200);
    }
  });

  it("an overview without calls says so", async () => {
    const address = "192.0.2.11";
    const cookie = await signIn(address);
    await seedTeam("dash-quiet", { mcp: { memory: { url: replayUrl("memory") } } });
    const html = await (await getPage("/dashboard/teams/dash-quiet", { address, cookie })).text();
    expect(html).toContain("No sessions or calls in this window yet.");
    expect(html).toContain("No tool calls in the audit trail of this window.");
    expect(totalOf(html, "ratio")).toBe("–");
  });
});
