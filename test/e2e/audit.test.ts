// The audit trail as an operator meets it: `wrangler dev` serving, a labelled token's host calling tools through the
// meta and direct views (server-everything's echo carries a distinctive argument), then the calls read back through
// the admin API and the team CLI, and searched for the argument everywhere: the API's answers, the CLI's output and
// the proxy's own log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCli, teamCliAsync } from "../../harness/clients.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { waitFor } from "../shared/wait.ts";
import { text } from "./helpers.ts";

const ADMIN_TOKEN = "e2e-admin";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN };
const CANARY = "wombatcanary";
let stack: DevStack;
let token: string;
let tokenIdOf: string;

interface Entry {
  id: string;
  kind: string;
  tool: string;
  outcome: string;
  view?: string;
  era?: string;
  principal: { kind: string; id: string };
  client?: { name: string };
}

beforeAll(async () => {
  stack = await startDevStack({
    name: "audit",
    replay: {},
    vars: VARS,
    provision: ({ dir, state, everything }) => {
      provisionTeam(dir, state, "audit", { mcp: { everything: { url: everything.url } } });
      const minted = teamCli(["token", "audit", "--label", "ci-bot", "--persist-to", state]);
      if (minted.status !== 0) throw new Error(`team token failed: ${minted.stderr}`);
      token = minted.stdout.trim().split("\n").at(-1)!;
      tokenIdOf = /minted token ([0-9a-f]{16})/.exec(minted.stdout)![1]!;
    },
  });
});

afterAll(() => stack?.stop());

const audit = async (query = ""): Promise<{ entries: Entry[]; next: string | null }> => {
  const res = await fetch(`http://127.0.0.1:${stack.port}/admin/teams/audit/audit${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.json() as Promise<{ entries: Entry[]; next: string | null }>;
};

describe("the audit trail through wrangler dev", () => {
  it("records each call, reads them back filtered through the admin API and the CLI, and never holds an argument", async () => {
    const shown = stack.proxy.output().length;
    const meta = await connectClient(stack.mcpUrl("audit"), token);
    const echoed = await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: CANARY } } });
    expect(text(echoed)).toContain(CANARY);
    await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 1, b: 2 } } });
    await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/nope", tool_input: {} } });
    const direct = await connectClient(stack.mcpUrl("audit", "?view=direct"), token);
    await direct.client.callTool({ name: "everything__echo", arguments: { message: CANARY } });
    let entries: Entry[] = [];
    expect(await waitFor(async () => (entries = (await audit()).entries).length >= 4, { tries: 100, ms: 100 })).toBe(true);
    expect(entries.map((e) => [e.view, e.tool, e.outcome])).toEqual([
      ["direct", "everything/echo", "ok"],
      ["meta", "everything/nope", "unknown_tool"],
      ["meta", "everything/get-sum", "ok"],
      ["meta", "everything/echo", "ok"],
    ]);
    expect(entries.every((e) => e.kind === "tool_call" && e.era === "2025" && e.principal.kind === "token" && e.principal.id === tokenIdOf)).toBe(true);
    expect(entries[0]!.client?.name).toBe("e2e-host");
    expect((await audit("?tool=everything/echo")).entries).toHaveLength(2);
    expect((await audit("?outcome=unknown_tool")).entries.map((e) => e.tool)).toEqual(["everything/nope"]);
    const paged = await audit("?limit=3");
    expect(paged.entries).toHaveLength(3);
    expect((await audit(`?limit=3&cursor=${paged.next}`)).entries.map((e) => e.id)).toEqual([entries[3]!.id]);
    const ndjson = await (await fetch(`http://127.0.0.1:${stack.port}/admin/teams/audit/audit?format=ndjson`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(ndjson.trim().split("\n")).toHaveLength(4);
    // The CLI reads the same through the admin API.
    const cli = await teamCliAsync(["audit", "audit", "--tool", "everything/echo"], { DYNMCP_URL: `http://127.0.0.1:${stack.port}`, DYNMCP_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout.trim().split("\n")).toHaveLength(2);
    expect(cli.stdout).toContain(`token:ci-bot  tool_call  everything/echo  ok`);
    const bad = await teamCliAsync(["audit", "audit", "--limit", "0"], { DYNMCP_URL: `http://127.0.0.1:${stack.port}`, DYNMCP_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("--limit");
    // Each entry is an `audit` log line; the argument is in no entry, export, CLI line or log line.
    expect(await waitFor(() => (stack.proxy.output().slice(shown).match(/"event":"audit"/g) ?? []).length >= 4, { tries: 50, ms: 100 })).toBe(true);
    for (const seen of [JSON.stringify(entries), ndjson, cli.stdout, stack.proxy.output()]) expect(seen).not.toContain(CANARY);
    await meta.client.close();
    await direct.client.close();
  });
});
