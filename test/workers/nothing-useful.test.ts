// A search that finds nothing useful, through the real Worker and its objects, in both eras and both views that search
// (discover_tool, the code view's search), over corpus catalogs served by the replay harness and a lazy server: the
// answer says first that no loaded tool does it, names the closest servers (the lazy one that matches first, not
// loaded) with the call that shows a server's tools, then the weak hits marked as weak; `structuredContent` keeps
// `tools[]` with its fields and adds `useful: false` and `closest`. A query a tool does answers as before.
import { describe, expect, it } from "vitest";
import { connect, connectAt, replayUrl, seedTeam, text } from "./helpers.ts";
import { modernClient } from "./modern-client.ts";

const SERVERS = {
  memory: { url: replayUrl("memory") },
  kubernetes: { url: replayUrl("kubernetes") },
  stripe: { url: replayUrl("stripe") },
  fax: { url: replayUrl("code-lazy"), description: "Send and receive faxes." },
};
const ABSENT = "send a fax to the insurance company about the claim";
const GOOD = "refund a stripe charge";

interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

interface Answer {
  isError?: boolean;
  structuredContent?: { tools: Array<Record<string, unknown>>; useful?: boolean; closest?: Array<{ server: string; description: string; loaded: boolean }> };
}

const call = async (client: Caller, name: string, query: string) => (await client.callTool({ name, arguments: { query } })) as Answer;

describe("a search that finds nothing useful", () => {
  it("says so in discover_tool's answer and names the closest servers, a lazy one first (2025 and 2026 eras)", async () => {
    const token = await seedTeam("nothing-meta", { mcp: SERVERS });
    const clients: Caller[] = [(await connect("nothing-meta", token)).client, await modernClient("nothing-meta", token)];
    for (const client of clients) {
      const found = await call(client, "discover_tool", ABSENT);
      expect(found.isError).toBeFalsy();
      const lines = text(found).split("\n");
      expect(lines[0]).toBe(`No loaded tool does what "${ABSENT}" asks.`);
      expect(text(found)).toContain('Closest servers (see a server\'s tools with discover_tool {"server": "<name>"}; load one not loaded yet with load_mcp {"mcp_name": "<name>"}):\n- fax (not loaded): Send and receive faxes');
      expect(text(found)).toContain("Weak matches, probably not what was asked:\n- ");
      const structured = found.structuredContent!;
      expect(structured.useful).toBe(false);
      expect(structured.closest?.[0]).toEqual({ server: "fax", description: "Send and receive faxes", loaded: false });
      expect(structured.closest!.length).toBeLessThanOrEqual(3);
      expect(structured.closest!.slice(1).every((s) => s.loaded)).toBe(true);
      // The hits are still there, with their fields, for an agent that knows better.
      expect(structured.tools.length).toBeGreaterThan(0);
      for (const hit of structured.tools) expect(Object.keys(hit).sort()).toEqual(["description", "name", "score", "server"]);

      const good = await call(client, "discover_tool", GOOD);
      expect(text(good).split("\n")[0]).toMatch(/^- stripe\/create_refund: /);
      expect(good.structuredContent!.useful).toBeUndefined();
      expect(good.structuredContent!.closest).toBeUndefined();
    }
    await Promise.all(clients.map((c) => c.close()));
  });

  it("says so in the code view's search, with describe as the call that shows a namespace (2025 and 2026 eras)", async () => {
    const token = await seedTeam("nothing-code", { mcp: SERVERS, view: "code" });
    const clients: Caller[] = [(await connectAt("nothing-code", token, "?view=code")).client, await modernClient("nothing-code", token, "?view=code")];
    for (const client of clients) {
      const found = text(await call(client, "search", ABSENT));
      expect(found.split("\n")[0]).toBe(`No loaded API does what "${ABSENT}" asks.`);
      expect(found).toContain('Closest servers (see a server\'s APIs with describe {"path": "<namespace>"}):\n- fax (not loaded): Send and receive faxes');
      expect(found).toContain("Weak matches, probably not what was asked:\n- ");
      expect(text(await call(client, "search", GOOD)).split("\n")[0]).toMatch(/^stripe\.create_refund: /);
    }
    await Promise.all(clients.map((c) => c.close()));
  });
});
