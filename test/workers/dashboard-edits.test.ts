// The dashboard's config edits through the real Worker: promote and unpromote on the tools page (the team's real 2026
// tools/list and a live 2025 session's then carry the tool whole, and it is called by that name), pinning turned on
// and a changed definition approved, the policies saved (an invalid rule named inline and nothing stored; a valid one
// stored, in the audit trail, and hiding a tool from a real session's list); every POST without CSRF refused with
// nothing changed, a form made on a config changed since refused, and the rest of the config written back unredacted.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { kvKeys } from "../../src/config/keys.ts";
import { adminFetch, connect, discoverDescription, mutateTool, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { csrfOf, expectPageHeaders, getPage, modernClient, postForm, signIn, unescapeHtml as unescape } from "./dashboard-helpers.ts";

const versionOf = (html: string) => /name="version" value="([0-9a-f]{64})"/.exec(html)?.[1] ?? "";
const textareaOf = (html: string) => unescape(/<textarea[^>]*name="policies"[^>]*>(.*?)<\/textarea>/s.exec(html)?.[1] ?? "");
const issuesOf = (html: string) => [...(/<ul data-list="issues">(.*?)<\/ul>/s.exec(html)?.[1] ?? "").matchAll(/<li>(.*?)<\/li>/g)].map((m) => unescape(m[1]!));

async function modernTools(team: string, token: string) {
  const client = await modernClient(team, token);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const storedConfig = async (team: string) => JSON.parse((await env.TEAMS.get(kvKeys.config(team)))!) as Record<string, unknown>;

async function auditTools(team: string): Promise<Array<{ tool: string; outcome: string }>> {
  const res = await adminFetch("GET", `/teams/${team}/audit?limit=200`);
  return ((await res.json()) as { entries: Array<{ tool: string; outcome: string }> }).entries;
}

/** A signed-in browser on the dashboard: its pages and its posts (with the page's CSRF token and config version). */
async function browser(address: string) {
  const cookie = await signIn(address);
  const get = async (path: string, status = 200) => {
    const res = await getPage(path, { address, cookie });
    expect(res.status).toBe(status);
    expectPageHeaders(res);
    return res.text();
  };
  const post = async (path: string, form: Record<string, string>, from: string, status: number, csrf?: string) => {
    const res = await postForm(path, { csrf: csrf ?? csrfOf(from), version: versionOf(from), ...form }, { address, cookie });
    const html = await res.text();
    expect(res.status, html.slice(0, 2000)).toBe(status);
    expectPageHeaders(res);
    return html;
  };
  return { get, post, cookie };
}

describe("the dashboard's config edits", () => {
  it("promotes and unpromotes a tool: a live 2025 session's and the 2026 tools/list carry it whole, called by name", async () => {
    const TEAM = "dash-ed";
    const header = "Bearer literal-credential-kept-as-stored-0123456789";
    const token = await seedTeam(TEAM, { mcp: { graph: { url: replayUrl("dash-edit"), headers: { authorization: header } } } });
    const live = await connect(TEAM, token);
    expect((await live.client.listTools()).tools.map((t) => t.name)).not.toContain("graph/read_graph");
    await modernTools(TEAM, token);
    const b = await browser("192.0.2.61");
    const tools = `/dashboard/teams/${TEAM}/tools`;
    expect(await waitFor(async () => (await b.get(tools)).includes('data-row="graph/read_graph"'), { tries: 100, ms: 50 })).toBe(true);
    const before = await b.get(tools);
    expect(versionOf(before)).not.toBe("");

    // Without the CSRF token, or from another site: refused, nothing written.
    await b.post(`${tools}/promote`, { tool: "graph/read_graph", action: "promote" }, before, 403, "forged");
    const foreign = await postForm(`${tools}/promote`, { csrf: csrfOf(before), version: versionOf(before), tool: "graph/read_graph", action: "promote" }, { address: "192.0.2.61", cookie: b.cookie, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await storedConfig(TEAM))["promote"]).toBeUndefined();

    const promoted = await b.post(`${tools}/promote`, { tool: "graph/read_graph", action: "promote" }, before, 200);
    expect(promoted).toContain("Promoted graph/read_graph");
    expect(promoted).toMatch(/data-row="graph\/read_graph">.*?data-whole="true"/s);
    expect(promoted).toContain('aria-label="Unpromote graph/read_graph"');
    const stored = await storedConfig(TEAM);
    expect(stored["promote"]).toEqual(["graph/read_graph"]);
    // The rest of the config written back as stored, not as the admin API's GET masks it.
    expect((stored["mcp"] as { graph: { headers: Record<string, string> } }).graph.headers.authorization).toBe(header);

    // The live 2025 session takes it at its next request; the 2026 list carries it too, the same definition whole.
    const legacy = (await live.client.listTools()).tools.find((t) => t.name === "graph/read_graph");
    expect(legacy?.inputSchema).toBeDefined();
    await live.client.close();
    const modern = (await modernTools(TEAM, token)).find((t) => t.name === "graph/read_graph");
    // The same definition whole; the 2026 era's wire form has no tasks field (`execution`: the SDK leaves it out), which
    // the page, showing the upstream's definition as read, keeps (no host pays for it: hostTokens counts name,
    // description and schema).
    const { execution: _tasks, ...upstream } = legacy!;
    expect(modern).toEqual(upstream);
    const shown = JSON.parse(unescape(/<pre class="catalog" data-promoted-tools="">(.*?)<\/pre>/s.exec(promoted)?.[1] ?? "[]")) as Array<typeof legacy>;
    expect(shown).toEqual([legacy]);
    const client = await modernClient(TEAM, token);
    const called = await client.callTool({ name: "graph/read_graph", arguments: {} });
    await client.close();
    expect(called.isError).toBeFalsy();
    expect((await auditTools(TEAM)).some((e) => e.tool === "admin/config.put" && e.outcome === "ok")).toBe(true);

    // A form rendered before another admin's change is refused: nothing of it stored, the other change kept.
    const stale = await b.get(tools);
    expect((await adminFetch("PUT", `/teams/${TEAM}/config`, { ...(await storedConfig(TEAM)), catalog_budget: 5000 })).status).toBe(200);
    const refused = await b.post(`${tools}/promote`, { tool: "graph/read_graph", action: "unpromote" }, stale, 409);
    expect(refused).toContain("the team&#39;s config changed since this page was shown");
    expect((await storedConfig(TEAM))["promote"]).toEqual(["graph/read_graph"]);
    expect((await storedConfig(TEAM))["catalog_budget"]).toBe(5000);

    const unpromoted = await b.post(`${tools}/promote`, { tool: "graph/read_graph", action: "unpromote" }, refused, 200);
    expect(unpromoted).toContain("Unpromoted graph/read_graph");
    expect((await storedConfig(TEAM))["promote"]).toBeUndefined();
    expect((await modernTools(TEAM, token)).map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);

    // The limit: a 21st promoted tool is refused with a sentence that says so.
    const twenty = Array.from({ length: 20 }, (_, i) => `graph/t${i}`);
    expect((await adminFetch("PUT", `/teams/${TEAM}/config`, { ...(await storedConfig(TEAM)), promote: twenty })).status).toBe(200);
    const full = await b.get(tools);
    expect(await b.post(`${tools}/promote`, { tool: "graph/read_graph", action: "promote" }, full, 400)).toContain("at most 20 tools are promoted");
    expect((await storedConfig(TEAM))["promote"]).toEqual(twenty);
  });

  it("turns pinning on and approves a changed definition, as the admin API's approve does", async () => {
    const TEAM = "dash-ed-pin";
    const token = await seedTeam(TEAM, { mcp: { up: { url: replayUrl("dash-edit-pin") } } });
    const b = await browser("192.0.2.62");
    const tools = `/dashboard/teams/${TEAM}/tools`;
    const off = await b.get(tools);
    expect(off).toContain('data-pin-tools="false"');
    await b.post(`${tools}/pin`, { pin: "on" }, off, 403, "forged");
    expect((await storedConfig(TEAM))["pin_tools"]).toBeUndefined();
    const on = await b.post(`${tools}/pin`, { pin: "on" }, off, 200);
    expect(on).toContain('data-pin-tools="true"');
    expect((await storedConfig(TEAM))["pin_tools"]).toBe(true);

    // The session's first read pins every definition; a changed one is then withheld and waits on the page.
    const first = await connect(TEAM, token);
    expect(await discoverDescription(first.client)).toContain("- add_observations:");
    await first.client.close();
    const changed = await mutateTool("dash-edit-pin");
    const second = await connect(TEAM, token);
    expect(await waitFor(async () => !(await discoverDescription(second.client)).includes(`- ${changed}:`))).toBe(true);
    await second.client.close();
    const waiting = await b.get(tools);
    expect(waiting).toContain(`data-waiting="up/${changed}"`);

    await b.post(`/dashboard/teams/${TEAM}/pins/approve`, { server: "up", tool: changed }, waiting, 403, "forged");
    const pending = async () => ((await (await adminFetch("GET", `/teams/${TEAM}/pins`)).json()) as { pins: Array<{ pending?: string }> }).pins.filter((p) => p.pending);
    expect(await pending()).toHaveLength(1);
    const approved = await b.post(`/dashboard/teams/${TEAM}/pins/approve`, { server: "up", tool: changed }, waiting, 200);
    expect(approved).toContain(`Approved the new definition of up/${changed}`);
    expect(approved).not.toContain("data-waiting=");
    expect(await pending()).toHaveLength(0);
    expect((await auditTools(TEAM)).some((e) => e.tool === "admin/pin.approve" && e.outcome === "ok")).toBe(true);
    const third = await connect(TEAM, token);
    expect(await discoverDescription(third.client)).toContain(`- ${changed}: `);
    await third.client.close();
    // Nothing waits any more: a second approve is refused, as the admin API's 404.
    await b.post(`/dashboard/teams/${TEAM}/pins/approve`, { server: "up", tool: changed }, waiting, 404);
    const offAgain = await b.post(`${tools}/pin`, { pin: "off" }, approved, 200);
    expect(offAgain).toContain('data-pin-tools="false"');
  });

  it("saves policies through the admin API's validation: problems inline and nothing stored, or stored and enforced", async () => {
    const TEAM = "dash-ed-pol";
    const config = { mcp: { graph: { url: replayUrl("dash-edit") } } };
    const token = await seedTeam(TEAM, config);
    expect(await discoverDescription((await connect(TEAM, token)).client)).toContain("delete_entities");
    const b = await browser("192.0.2.63");
    const policies = `/dashboard/teams/${TEAM}/policies`;
    const empty = await b.get(policies);
    expect(textareaOf(empty)).toBe("");
    const adminConfig = async () => (await (await adminFetch("GET", `/teams/${TEAM}/config`)).json()) as Record<string, unknown>;

    // An unknown selector: 400, the rule and field named beside the text, the text as typed, nothing stored.
    const invalid = JSON.stringify([{ who: ["team:x"], deny: ["graph/*"] }]);
    const refused = await b.post(policies, { policies: invalid }, empty, 400);
    expect(issuesOf(refused).join("\n")).toMatch(/^policies\[0\]\.who\[0\]: unknown selector kind "team:"/);
    expect(textareaOf(refused)).toBe(invalid);
    expect(refused).toContain('aria-describedby="policy-problems"');
    expect(await adminConfig()).toEqual(config);
    // Not JSON: a problem shown the same way, not a 500.
    const broken = await b.post(policies, { policies: "[{ who: " }, empty, 400);
    expect(issuesOf(broken)[0]).toMatch(/^policies: not valid JSON/);
    expect(textareaOf(broken)).toBe("[{ who: ");
    // Without the CSRF token: 403, nothing stored.
    await b.post(policies, { policies: "[]" }, empty, 403, "forged");
    // Over the form's limit: 413, nothing stored.
    await b.post(policies, { policies: "x".repeat(300 * 1024) }, empty, 413);
    expect(await adminConfig()).toEqual(config);

    const rules = [{ who: ["*"], deny: ["graph/delete_entities"] }];
    const saved = await b.post(policies, { policies: JSON.stringify(rules) }, empty, 200);
    expect(saved).toContain("Saved");
    expect(JSON.parse(textareaOf(saved))).toEqual(rules);
    expect((await adminConfig())["policies"]).toEqual(rules);
    expect((await auditTools(TEAM)).filter((e) => e.tool === "admin/config.put").map((e) => e.outcome)).toEqual(["ok", "refused"]);
    // Enforced: a real session's list no longer shows the tool; view as shows it hidden.
    expect((await modernTools(TEAM, token)).find((t) => t.name === "discover_tool")!.description).not.toContain("delete_entities");
    expect(await discoverDescription((await connect(TEAM, token)).client)).not.toContain("delete_entities");
    expect(await b.get(`${policies}?email=sam%40acme.example`)).toMatch(/<ul data-list="hidden">.*graph\/delete_entities/s);

    // A save made on the page as it was before another change: refused, the text kept as typed.
    expect((await adminFetch("PUT", `/teams/${TEAM}/config`, { ...config, policies: [] })).status).toBe(200);
    const stale = await b.post(policies, { policies: "[]" }, saved, 409);
    expect(stale).toContain("changed since this page was shown");
    expect(textareaOf(stale)).toBe("[]");
  });
});
