// The team's tool policies as users meet them under `wrangler dev`: two labelled team tokens, one narrowed to a few
// tools, both denied one tool, one denied a whole (lazy) server, using server-everything at once through a 2025
// session (meta, direct and code views) and the 2026-07-28 era (the v2 client in automatic mode). Each sees exactly
// its catalog; a hidden tool called by name is unknown, never reaches the upstream, and is recorded as denied.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCli } from "../../harness/clients.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { waitFor } from "../shared/wait.ts";
import { text } from "./helpers.ts";

const ADMIN_TOKEN = "e2e-admin";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN };
const TEAM = "policies";
const LABELS = ["reader", "writer"] as const;
type Label = (typeof LABELS)[number];
let stack: DevStack;
const tokens = {} as Record<Label, string>;

beforeAll(async () => {
  stack = await startDevStack({
    name: "policies",
    replay: {},
    vars: VARS,
    provision: ({ dir, state, everything }) => {
      provisionTeam(dir, state, TEAM, {
        mcp: { everything: { url: everything.url }, vault: { url: everything.url, description: "A second copy of the reference server." } },
        policies: [
          { who: ["*"], deny: ["everything/get-sum"] },
          { who: ["token:reader"], allow: ["everything/echo", "everything/get-env"] },
          { who: ["token:reader"], deny: ["vault/*"] },
        ],
      });
      for (const label of LABELS) {
        const minted = teamCli(["token", TEAM, "--label", label, "--persist-to", state]);
        if (minted.status !== 0) throw new Error(`team token failed: ${minted.stderr}`);
        tokens[label] = minted.stdout.trim().split("\n").at(-1)!;
      }
    },
  });
});

afterAll(() => stack?.stop());

/** The names an unknown-tool answer suggests, in code-point order (their order follows the name asked for). */
const suggestions = (answer: string, asked: string) =>
  answer.split(asked).join("").replace(/^[\s\S]*closest first\): /, "").replace(/ … and \d+ more[^\n]*$/, "").replace(/\.$/, "").split(", ").sort();

async function modern(label: Label) {
  const transport = new ModernTransport(new URL(stack.mcpUrl(TEAM)), { requestInit: { headers: { Authorization: `Bearer ${tokens[label]}` } } });
  const client = new ModernClient({ name: "e2e-policies", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

async function tour(label: Label): Promise<void> {
  const meta = await connectClient(stack.mcpUrl(TEAM), tokens[label]);
  const catalog = (await meta.client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
  expect(catalog).toContain("echo");
  expect(catalog).not.toContain("get-sum");
  if (label === "reader") {
    expect(catalog).not.toMatch(/\bvault\b/);
    expect(catalog).not.toContain("get-tiny-image");
  } else {
    expect(catalog).toContain("get-tiny-image");
    expect(catalog).toMatch(/<mcp_servers>\nvault: /);
  }
  const echoed = await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: label } } });
  expect(text(echoed)).toContain(`Echo: ${label}`);
  const hidden = await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 1, b: 2 } } });
  const missing = await meta.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sun", tool_input: { a: 1, b: 2 } } });
  expect(hidden.isError).toBe(true);
  expect(text(hidden)).toMatch(/^Unknown tool: "everything\/get-sum"/);
  // Answered as a name that exists nowhere: as many of the closest visible tools, the same count of the rest, and
  // the hidden one neither named nor counted.
  const [ofHidden, ofMissing] = [suggestions(text(hidden), "everything/get-sum"), suggestions(text(missing), "everything/get-sun")];
  expect(ofHidden).toHaveLength(ofMissing.length);
  const shapeOf = (answer: string, asked: string) => answer.split(asked).join("NAME").replace(/closest first\): [^…\n]*/, "closest first): LIST");
  expect(shapeOf(text(hidden), "everything/get-sum")).toBe(shapeOf(text(missing), "everything/get-sun"));
  expect(ofHidden.join(" ")).not.toContain("get-sum");
  // The reader has no lazy server left to load (load_mcp may not even be listed): refused either way.
  const load = await meta.client.callTool({ name: "load_mcp", arguments: { mcp_name: "vault" } }).catch(() => ({ isError: true }));
  expect(Boolean(load.isError)).toBe(label === "reader");
  await meta.client.close();

  const direct = await connectClient(stack.mcpUrl(TEAM, "?view=direct"), tokens[label]);
  const names = (await direct.client.listTools()).tools.map((t) => t.name);
  if (label === "reader") expect(names.sort()).toEqual(["everything__echo", "everything__get-env"]);
  else expect(names).toContain("everything__get-tiny-image");
  expect(names).not.toContain("everything__get-sum");
  const directHidden = await direct.client.callTool({ name: "everything__get-sum", arguments: { a: 1, b: 2 } });
  expect(text(directHidden)).toMatch(/^Unknown tool: "everything__get-sum"/);
  await direct.client.close();

  // The code view: search and describe never name a hidden tool, and a program's call of one fails as an unknown one.
  const code = await connectClient(stack.mcpUrl(TEAM, "?view=code"), tokens[label]);
  const found = text(await code.client.callTool({ name: "search", arguments: { query: "sum of two numbers add" } }));
  expect(found).not.toContain("get_sum");
  expect(found).not.toContain("get-sum");
  const described = text(await code.client.callTool({ name: "describe", arguments: { path: "everything" } }));
  expect(described).toContain("echo");
  expect(described).not.toMatch(/get_sum|get-sum/);
  expect(/get_tiny_image|get-tiny-image/.test(described)).toBe(label === "writer");
  const ran = await code.client.callTool({ name: "execute", arguments: { code: 'return await everything["get-sum"]({ a: 1, b: 2 });' } });
  expect(ran.isError).toBe(true);
  expect(text(ran)).toMatch(/^The program failed \(error\) at line 1:\d+: Unknown tool: "everything\.get-sum"\. Available tools/);
  // Its suggestions are drawn from what the caller sees: never the hidden tool.
  expect(text(ran).split("(closest first): ")[1]!.split("\n")[0]).not.toMatch(/get_sum|get-sum/);
  await code.client.close();

  const client = await modern(label);
  const listed = (await client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
  expect(listed).not.toContain("get-sum");
  expect(/\bvault\b/.test(listed)).toBe(label === "writer");
  const modernHidden = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 1, b: 2 } } });
  expect(text(modernHidden)).toMatch(/^Unknown tool: "everything\/get-sum"/);
  await client.close();
}

describe("tool policies through wrangler dev", () => {
  it("shows each labelled token exactly its catalog in both eras, concurrently; hidden tools are unknown and recorded as denied", async () => {
    await Promise.all(LABELS.map((label) => tour(label)));
    type Entry = { tool: string; outcome: string; era: string; principal: { label?: string } };
    let entries: Entry[] = [];
    const denied = () => entries.filter((e) => e.tool === "everything/get-sum" && e.outcome === "denied");
    const read = async () => {
      const res = await fetch(`http://127.0.0.1:${stack.port}/admin/teams/${TEAM}/audit?limit=1000`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      entries = ((await res.json()) as { entries: Entry[] }).entries;
      return denied().length === 8;
    };
    expect(await waitFor(read, { tries: 100, ms: 100 })).toBe(true);
    type Denial = Entry & { view: string };
    expect((denied() as Denial[]).map((e) => `${e.principal.label} ${e.era} ${e.view}`).sort()).toEqual(
      LABELS.flatMap((label) => [`${label} 2025 code`, `${label} 2025 direct`, `${label} 2025 meta`, `${label} 2026 meta`]),
    );
    // The upstream never saw the hidden tool called: no entry of it is anything but a denial.
    expect(entries.filter((e) => e.tool === "everything/get-sum" && e.outcome !== "denied")).toEqual([]);
  });
});
