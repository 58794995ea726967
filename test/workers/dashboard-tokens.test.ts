// The dashboard's members-and-tokens page through the real Worker: tokens listed by id and label (never a token), a
// token minted through the form is shown once and works at the MCP endpoint, a bad view is named and mints nothing,
// revoking one makes the endpoint refuse it, both changes are admin actions in the audit trail, and neither runs
// without the session's CSRF token or from another site.
import { describe, expect, it } from "vitest";
import { adminFetch, connect, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { csrfOf, expectPageHeaders, getPage, postForm, signIn } from "./dashboard-helpers.ts";

const TEAM = "dash-tokens";

async function adminEntries(): Promise<Array<{ tool: string; target?: string; outcome: string }>> {
  const res = await adminFetch("GET", `/teams/${TEAM}/audit?tool=admin/*&limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Array<{ tool: string; target?: string; outcome: string }> }).entries;
}

describe("the dashboard's members and tokens page", () => {
  it("lists, mints once-shown and revokes tokens through the admin API's store, audited, CSRF-checked", async () => {
    const seeded = await seedTeam(TEAM, { mcp: { memory: { url: replayUrl("memory") } } });
    const address = "192.0.2.41";
    const cookie = await signIn(address);
    const path = `/dashboard/teams/${TEAM}/members`;

    const listed = await getPage(path, { address, cookie });
    expect(listed.status).toBe(200);
    expectPageHeaders(listed);
    const listHtml = await listed.text();
    const before = (await (await adminFetch("GET", `/teams/${TEAM}/tokens`)).json()) as { tokens: Array<{ id: string }> };
    expect([...listHtml.matchAll(/<tr data-token="([0-9a-f]{16})">/g)].map((m) => m[1]).sort()).toEqual(before.tokens.map((t) => t.id).sort());
    expect(listHtml).not.toContain(seeded);
    const csrf = csrfOf(listHtml);

    // Without the CSRF token, or from another site: nothing minted.
    expect((await postForm(`/dashboard/teams/${TEAM}/tokens`, { label: "nope" }, { address, cookie })).status).toBe(403);
    expect((await postForm(`/dashboard/teams/${TEAM}/tokens`, { csrf, label: "nope" }, { address, cookie, origin: "https://evil.example" })).status).toBe(403);
    // A bad view is named, and mints nothing.
    const bad = await postForm(`/dashboard/teams/${TEAM}/tokens`, { csrf, label: "x", view: "everything" }, { address, cookie });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/No token minted: view: /);
    expect(((await (await adminFetch("GET", `/teams/${TEAM}/tokens`)).json()) as { tokens: unknown[] }).tokens).toHaveLength(before.tokens.length);

    // Minted: shown once, labelled, and it works.
    const minted = await postForm(`/dashboard/teams/${TEAM}/tokens`, { csrf, label: "ci-bot", view: "direct" }, { address, cookie });
    expect(minted.status).toBe(201);
    expectPageHeaders(minted);
    const mintedHtml = await minted.text();
    const token = /<code data-minted-token="?[^>]*>([^<]+)<\/code>/.exec(mintedHtml)?.[1];
    expect(token).toBeDefined();
    const id = new RegExp(`<tr data-token="([0-9a-f]{16})"><td><code>[0-9a-f]{16}</code></td><td>ci-bot</td><td>direct</td>`).exec(mintedHtml)?.[1];
    expect(id).toBeDefined();
    const { client } = await connect(TEAM, token!);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("memory__read_graph");
    await client.close();
    // Never again: the list shows its id, not the token.
    const again = await (await getPage(path, { address, cookie })).text();
    expect(again).toContain(`<tr data-token="${id}">`);
    expect(again).not.toContain(token!);

    // Revoked: refused at the MCP endpoint once the isolate's cache lets go (the test pool's cache is short).
    const revoked = await postForm(`/dashboard/teams/${TEAM}/tokens/${id}/revoke`, { csrf }, { address, cookie });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).not.toContain(`<tr data-token="${id}">`);
    expect(await waitFor(async () => (await connect(TEAM, token!).then(async (c) => (await c.client.close(), false)).catch(() => true)), { tries: 40, ms: 100 })).toBe(true);
    const unknown = await postForm(`/dashboard/teams/${TEAM}/tokens/${id}/revoke`, { csrf }, { address, cookie });
    expect(unknown.status).toBe(404);

    // Both changes, and the refused revoke, are admin actions in the trail.
    const entries = await adminEntries();
    expect(entries.filter((e) => e.target === id).map((e) => `${e.tool} ${e.outcome}`).reverse()).toEqual(["admin/token.mint ok", "admin/token.revoke ok", "admin/token.revoke refused"]);
  });
});
