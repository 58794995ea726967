// The catalog budget through the real runtime: a session's whole tools/list costs at most the team's budget; the
// same state gives the same bytes in every session; promoted tools count against it. Counted with the Worker's own
// counter (see hostPaid in helpers.ts); the same budget is checked with js-tiktoken itself in test/unit/budget.test.ts
// and, through wrangler dev, in test/e2e/catalog.test.ts.
import { describe, expect, it } from "vitest";
import { connect, hostPaid, replayUrl, seedTeam } from "./helpers.ts";

/** What a host pays for the list (shared/corpus/README.md, "host tokens"). */
const paid = await hostPaid();

const servers = { gitlab: { url: replayUrl("gitlab") }, kubernetes: { url: replayUrl("kubernetes") }, memory: { url: replayUrl("memory") } };

describe("catalog budget", () => {
  it("keeps the whole tools/list within the default 1,500 tokens, shortening the largest server first", async () => {
    const token = await seedTeam("budget-default", { mcp: servers });
    const { client } = await connect("budget-default", token);
    const { tools } = await client.listTools();
    expect(paid(tools)).toBeLessThanOrEqual(1500);
    const description = tools.find((t) => t.name === "discover_tool")!.description!;
    expect(description).toMatch(/^gitlab \(118 tools, names only\): |^gitlab: 118 tools — /m);
    expect(description).toContain("discover_tool with server alone lists one's tools");
    // What is cut short stays reachable: a search finds a gitlab tool.
    const found = await client.callTool({ name: "discover_tool", arguments: { query: "merge request", server: "gitlab" } });
    expect(JSON.stringify(found.structuredContent)).toContain("gitlab/");
    await client.close();
  });

  it("shows the whole catalog when the team's budget holds it, and the same bytes in every session of the same state", async () => {
    const token = await seedTeam("budget-big", { catalog_budget: 50_000, mcp: servers });
    const first = await connect("budget-big", token);
    const a = await first.client.listTools();
    expect(a.tools.find((t) => t.name === "discover_tool")!.description).toContain("gitlab:\n- ");
    const second = await connect("budget-big", token);
    const b = await second.client.listTools();
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
    expect(JSON.stringify((await first.client.listTools()).tools)).toBe(JSON.stringify(a.tools));
    await first.client.close();
    await second.client.close();
  });

  it("counts promoted tools against the budget: the catalog shrinks to make room for them", async () => {
    const small = { kubernetes: servers.kubernetes, memory: servers.memory };
    const wide = await seedTeam("budget-wide", { catalog_budget: 200_000, mcp: small });
    const probe = await connect("budget-wide", wide);
    const whole = await probe.client.listTools();
    await probe.client.close();
    // A budget that holds exactly the whole catalog: without promotion it is shown whole.
    const budget = paid(whole.tools);
    const description = (list: typeof whole.tools) => list.find((t) => t.name === "discover_tool")!.description!;
    const plain = await seedTeam("budget-plain", { catalog_budget: budget, mcp: small });
    const other = await connect("budget-plain", plain);
    expect(description((await other.client.listTools()).tools)).toBe(description(whole.tools));
    await other.client.close();
    const promote = ["kubernetes/kubectl_get", "memory/read_graph"];
    const token = await seedTeam("budget-promoted", { catalog_budget: budget, promote, mcp: small });
    const { client } = await connect("budget-promoted", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(promote));
    expect(paid(tools)).toBeLessThanOrEqual(budget);
    expect(description(tools).length).toBeLessThan(description(whole.tools).length);
    await client.close();
  });

  it("leaves lazy servers out past the budget, and a search finds them by what they do", async () => {
    const mcp: Record<string, { url: string; description: string }> = {};
    for (let i = 0; i < 60; i++) {
      mcp[`svc-${String(i).padStart(2, "0")}`] = {
        url: replayUrl("memory"),
        description: `Service number ${i} of the fleet: reads its dashboards, alerts and on-call rotas, and pages whoever is on call for it.`,
      };
    }
    mcp["ledger"] = { url: replayUrl("memory"), description: "Accounting ledger: invoices, payouts and the general journal of the finance team." };
    const token = await seedTeam("budget-lazy", { catalog_budget: 800, mcp });
    const { client } = await connect("budget-lazy", token);
    const { tools } = await client.listTools();
    expect(paid(tools)).toBeLessThanOrEqual(800);
    const description = tools.find((t) => t.name === "discover_tool")!.description!;
    expect(description).toMatch(/… and \d+ more servers to load: find them with discover_tool's query\./);
    // The last in config order is left out first: the ledger is not in the description, and a search finds it.
    expect(description).not.toContain("ledger");
    const found = await client.callTool({ name: "discover_tool", arguments: { query: "journal of the finance team's invoices" } });
    expect(found.isError).toBeFalsy();
    const servers = (found.structuredContent as { servers?: Array<{ name: string }> }).servers ?? [];
    expect(servers[0]?.name).toBe("ledger");
    // No loaded tool does it: the lazy server that matches is named first among the closest, with the call that loads it.
    expect((found.content as Array<{ text: string }>)[0]!.text).toContain('load one not loaded yet with load_mcp {"mcp_name": "<name>"}):\n- ledger (not loaded): ');
    await client.close();
  });
});
