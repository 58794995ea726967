// The dashboard's upstreams page with real data, through the real Worker: a team with a healthy replay upstream (its
// header a secret), one that refuses every connect and a lazy one; a session's real calls; then the page's states from
// its probe, and its calls, outcomes, latencies and last failure equal to what the audit API reports; the Reload
// button refused without the CSRF token and, with it, the admin API's reload, recorded in the audit trail as its
// admin action; nothing secret on the page.
import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { kvKeys } from "../../src/config/keys.ts";
import { describe, expect, it } from "vitest";
import { nearestRank } from "../../src/team/audit-trail.ts";
import { adminFetch, connect, replayStats, replayUrl, seedTeam, waitFor, workerFetch } from "./helpers.ts";
import { csrfOf, expectPageHeaders, getPage, postForm, signIn } from "./dashboard-helpers.ts";

const TEAM = "dash-ups";
const SECRET_VALUE = "s3cret-probe-header-never-shown";

interface Entry {
  kind: string;
  tool: string;
  outcome: string;
  ms: number;
}

async function auditEntries(team: string): Promise<Entry[]> {
  const res = await adminFetch("GET", `/teams/${team}/audit?limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
}

/** The page's figure `name` of server `server`, as text. */
function figure(html: string, server: string, name: string): string {
  const section = new RegExp(`<section class="server" data-server="${server}".*?</section>`, "s").exec(html)?.[0];
  expect(section, `the section of ${server}`).toBeDefined();
  const value = new RegExp(`data-figure="${name}">(.*?)</dd>`, "s").exec(section!)?.[1];
  expect(value, `${server}'s ${name}`).toBeDefined();
  return value!;
}

/** How many tools the upstream itself lists (an SDK client straight to the replay server). */
async function upstreamTools(route: string): Promise<number> {
  const client = new Client({ name: "dash-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(replayUrl(route))));
  try {
    return (await client.listTools()).tools.length;
  } finally {
    await client.close();
  }
}

describe("the dashboard's upstreams page", () => {
  it("shows each server's probed state and the audit trail's figures; Reload needs the CSRF token and is audited", async () => {
    const token = await seedTeam(TEAM, {
      mcp: {
        ok: { url: replayUrl("dash-ok"), headers: { "x-api-key": "${secret:PROBE_KEY}" } },
        down: { url: replayUrl("dash-down") },
        later: { url: replayUrl("dash-lazy"), description: "Loaded on demand" },
      },
    });
    expect((await adminFetch("PUT", `/teams/${TEAM}/secrets/PROBE_KEY`, { value: SECRET_VALUE })).status).toBe(204);
    const { client } = await connect(TEAM, token);
    for (const tool_name of ["ok/search_nodes", "ok/read_graph", "ok/search_nodes", "down/search_nodes"]) {
      await client.callTool({ name: "use_tool", arguments: { tool_name, tool_input: { query: "dashboard" } } });
    }
    const calls = (e: Entry) => e.kind === "tool_call";
    expect(await waitFor(async () => (await auditEntries(TEAM)).filter(calls).length >= 4, { tries: 100, ms: 50 })).toBe(true);
    const trail = (await auditEntries(TEAM)).filter(calls);

    const address = "192.0.2.30";
    const cookie = await signIn(address);
    const listedBefore = (await replayStats("dash-ok")).methods["tools/list"] ?? 0;
    const res = await getPage(`/dashboard/teams/${TEAM}/upstreams`, { address, cookie });
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const html = await res.text();

    expect(figure(html, "ok", "state")).toContain('data-state="connected"');
    // The probe listed the tools anew, connected as a session does: the team's secret resolved into its header.
    const stats = await replayStats("dash-ok");
    expect(stats.methods["tools/list"] ?? 0).toBeGreaterThan(listedBefore);
    expect(stats.lastHeaders["x-api-key"]).toBe(SECRET_VALUE);
    expect(figure(html, "ok", "tools")).toBe(String(await upstreamTools("dash-ok")));
    expect(figure(html, "down", "state")).toContain('data-state="failing"');
    expect(figure(html, "down", "state")).toContain("failing: http 503");
    expect(figure(html, "later", "state")).toContain('data-state="lazy"');
    expect(figure(html, "later", "calls")).toBe("0");

    for (const server of ["ok", "down"]) {
      const mine = trail.filter((e) => e.tool.startsWith(`${server}/`));
      const ms = mine.map((e) => e.ms).sort((a, b) => a - b);
      expect(figure(html, server, "calls")).toBe(String(mine.length));
      expect(figure(html, server, "latency")).toBe(`${nearestRank(ms, 0.5)} / ${nearestRank(ms, 0.95)} ms`);
      const outcomes = new Map<string, number>();
      for (const e of mine) outcomes.set(e.outcome, (outcomes.get(e.outcome) ?? 0) + 1);
      expect(figure(html, server, "outcomes")).toBe([...outcomes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([o, n]) => `${o} ${n}`).join(", "));
    }
    expect(trail.filter((e) => e.tool.startsWith("ok/")).every((e) => e.outcome === "ok")).toBe(true);
    expect(figure(html, "ok", "last-error")).toBe("none");
    const failed = trail.find((e) => e.tool === "down/search_nodes")!;
    expect(failed.outcome).not.toBe("ok");
    expect(figure(html, "down", "last-error")).toContain(`${failed.outcome}, `);

    // Nothing secret: the secret's value, the header carrying it, the team's token, the admin token, the upstream's words.
    for (const secret of [SECRET_VALUE, "x-api-key", token, "test-admin-token", "down for maintenance"]) expect(html).not.toContain(secret);
    expect(html).toContain(`href="/dashboard/teams/${TEAM}/tools"`);

    // Reload: refused without the session's CSRF token (nothing audited), done with it (one live session took it).
    const reloads = async () => (await auditEntries(TEAM)).filter((e) => e.kind === "admin" && e.tool === "admin/sessions.reload");
    const refused = await postForm(`/dashboard/teams/${TEAM}/reload`, {}, { address, cookie });
    expect(refused.status).toBe(403);
    expectPageHeaders(refused);
    expect(await reloads()).toHaveLength(0);
    const done = await postForm(`/dashboard/teams/${TEAM}/reload`, { csrf: csrfOf(html) }, { address, cookie });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/dashboard/teams/${TEAM}/upstreams?reloaded=1`);
    const audited = await reloads();
    expect(audited).toHaveLength(1);
    expect(audited[0]!.outcome).toBe("ok");
    const after = await (await getPage(done.headers.get("location")!, { address, cookie })).text();
    expect(after).toContain("Reload sent: 1 live session take");
    await client.close();
  });

  it("probes through the session's URL guard: a URL the guard refuses is never fetched", async () => {
    // Written past the store (which refuses it too), as a config stored before a stricter policy would be. The pool
    // allows private addresses (ALLOW_PRIVATE_UPSTREAMS), so the URL is one the guard refuses under any policy.
    const config = { mcp: { metadata: { url: "http://probe-user:probe-pass@169.254.169.254/latest/mcp" } } };
    await env.TEAMS.put(kvKeys.config("dash-ssrf"), JSON.stringify(config));
    const address = "192.0.2.32";
    const cookie = await signIn(address);
    const html = await (await getPage("/dashboard/teams/dash-ssrf/upstreams", { address, cookie })).text();
    expect(figure(html, "metadata", "state")).toContain("failing: config");
    for (const shown of ["169.254.169.254", "probe-pass"]) expect(html).not.toContain(shown);
  });

  it("counts every call of a single-MCP team for its one server", async () => {
    const token = await seedTeam("dash-single", { url: replayUrl("dash-ok") });
    const { client, transport } = await connect("dash-single", token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "search_nodes", tool_input: { query: "one" } } });
    await transport.terminateSession();
    await client.close();
    expect(await waitFor(async () => (await auditEntries("dash-single")).some((e) => e.kind === "tool_call"), { tries: 100, ms: 50 })).toBe(true);
    const address = "192.0.2.33";
    const cookie = await signIn(address);
    const html = await (await getPage("/dashboard/teams/dash-single/upstreams", { address, cookie })).text();
    expect(figure(html, "mcp", "calls")).toBe("1");
    expect(figure(html, "mcp", "outcomes")).toBe("ok 1");
  });

  it("an unknown team is a 404 page; without a session, the sign-in", async () => {
    const address = "192.0.2.31";
    const cookie = await signIn(address);
    expect((await getPage("/dashboard/teams/no-such-team/upstreams", { address, cookie })).status).toBe(404);
    const anonymous = await getPage(`/dashboard/teams/${TEAM}/upstreams`, { address });
    expect(anonymous.status).toBe(303);
    expect((await workerFetch(`http://proxy.test/dashboard/teams/${TEAM}/reload`, { method: "POST" })).status).toBe(403);
  });
});
