// A signed-in member as the principal of everything a session records (issue 16, increment 4): the session record,
// the log lines of its calls, the usage figures per principal, and one rate limit per member across all of their
// grants. A team token's session is named by its token id the same way.
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { app } from "../../src/edge/app.ts";
import { tokenId } from "../../src/auth/token.ts";
import { adminFetch, initializeBody, replayUrl, seedTeam, waitFor } from "./helpers.ts";
import { OAUTH_BASE, mintAccessToken, withOAuth } from "./oauth-helpers.ts";

const proxyFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  app.fetch(new Request(input, init), withOAuth, createExecutionContext());

async function connectWith(team: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${OAUTH_BASE}/t/${team}/mcp`), {
    fetch: proxyFetch,
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "principal-host", version: "1.0.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId! };
}

/** The JSON log lines written so far by `console.log`, parsed. */
const logLines = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.flatMap((args) => {
    try {
      return [JSON.parse(String(args[0])) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

describe("the member as principal", () => {
  it("names the member in the session record, the call's log line and the usage figures; a team token by its id", async () => {
    const teamToken = await seedTeam("pr-one", { mcp: { memory: { url: replayUrl("memory") } } });
    const user = "pr-one.AAAAAAAAAAAAAAAAAAAAAA";
    const { accessToken } = await mintAccessToken("pr-one", user);
    const out = vi.spyOn(console, "log");
    try {
      for (const token of [accessToken, teamToken]) {
        const { client, transport, sessionId } = await connectWith("pr-one", token);
        const result = await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph", tool_input: {} } });
        expect(result.isError).toBeFalsy();
        if (token === accessToken) {
          const record = await runInDurableObject(env.SESSIONS.getByName(`pr-one/${sessionId}`), (_o, state) => state.storage.get<Record<string, unknown>>("session"));
          expect(record).toMatchObject({ team: "pr-one", user });
          // Only the id travels: no email in the object.
          expect(JSON.stringify(record)).not.toContain("@example.test");
        }
        // Ending the session sends its figures to the team's index.
        await transport.terminateSession();
        await client.close();
      }
      const teamPrincipal = `t:${tokenId(teamToken)}`;
      expect(await waitFor(() => logLines(out).filter((l) => l["event"] === "tool_call").length >= 2, { tries: 50, ms: 20 }), JSON.stringify(out.mock.calls.slice(-5))).toBe(true);
      const calls = logLines(out).filter((l) => l["event"] === "tool_call" && l["team"] === "pr-one");
      expect(calls.map((l) => l["principal"]).sort()).toEqual([teamPrincipal, `u:${user}`].sort());
      expect(JSON.stringify(calls)).not.toContain("@example.test");

      // Sessions send their figures to the team's index: one row per principal beside the team's total.
      const index = env.TEAM_INDEX.getByName("pr-one");
      let byPrincipal: Awaited<ReturnType<typeof index.usageByPrincipal>> = [];
      expect(await waitFor(async () => (byPrincipal = await index.usageByPrincipal(1)).length === 2, { tries: 50, ms: 40 })).toBe(true);
      expect(byPrincipal.map((r) => r.principal).sort()).toEqual([teamPrincipal, `u:${user}`].sort());
      for (const row of byPrincipal) expect(row.figures).toMatchObject({ sessions: 1, calls: { tools: 1 } });
      const [total] = await index.usage(1);
      expect(total?.figures.calls.tools).toBe(2);
      // The admin API answers them with ?by=principal.
      const report = (await (await adminFetch("GET", "/teams/pr-one/usage?days=1&by=principal")).json()) as {
        totals: { calls: { tools: number } };
        principals: Array<{ principal: string; totals: { sessions: number; calls: { tools: number } } }>;
      };
      expect(report.totals.calls.tools).toBe(2);
      expect(report.principals.map((p) => [p.principal, p.totals.sessions, p.totals.calls.tools])).toEqual(
        [[teamPrincipal, 1, 1], [`u:${user}`, 1, 1]].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
      );
      const plain = (await (await adminFetch("GET", "/teams/pr-one/usage?days=1")).json()) as Record<string, unknown>;
      expect(plain["principals"]).toBeUndefined();
    } finally {
      out.mockRestore();
    }
  });

  it("shares one rate limit among all of a member's grants, apart from the team's tokens", async () => {
    // The test binding allows 150 requests a minute per key (vitest.config.mts).
    const teamToken = await seedTeam("pr-limit", { mcp: { memory: { url: replayUrl("memory") } } });
    const user = "pr-limit.BBBBBBBBBBBBBBBBBBBBBB";
    const first = await mintAccessToken("pr-limit", user);
    const second = await mintAccessToken("pr-limit", user);
    expect(second.binding).not.toBe(first.binding);
    const initialize = (token: string) =>
      proxyFetch(`${OAUTH_BASE}/t/pr-limit/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        // A request the router refuses after the limiter has counted it (no session id): cheap, and no object woken.
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    // Up to three limiter windows' worth: on a slow machine the first 150 may straddle a window's end, and a window
    // may also end between the first grant's refusal and the second's request: then the first is driven over again.
    let shared = false;
    for (let round = 0; round < 2 && !shared; round++) {
      let status = 0;
      for (let i = 0; i < 450 && status !== 429; i++) status = (await initialize(first.accessToken)).status;
      expect(status).toBe(429);
      shared = (await initialize(second.accessToken)).status === 429;
    }
    expect(shared).toBe(true);
    // A team token is its own key.
    const res = await proxyFetch(`${OAUTH_BASE}/t/pr-limit/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${teamToken}` },
      body: JSON.stringify(initializeBody),
    });
    expect(res.status).toBe(200);
  });
});
