// An admin reload while calls are under way, in both eras. A running call finishes on the upstream client it started
// with and returns the upstream's own result; a call waiting for the host's answer to an upstream's question gets it;
// the next request of the same session (2025) or of the same principal's object (2026-07-28) takes the new config;
// the old runtime's upstream clients close once its calls have ended. A 2025 host's GET stream moves to the new
// runtime, which tells it that its lists may have changed. The same scenarios run in the workerd pool
// (test/workers/reload.test.ts) and against `wrangler dev` (test/e2e/reload.test.ts).
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import type { CorpusServer, ReplayRoute } from "../../harness/replay-types.ts";
import { waitFor } from "./wait.ts";

type TeamConfig = { mcp: Record<string, { url: string }> };
type UseTool = { tool_name: string; tool_input: Record<string, unknown> };

/** The replay routes the scenarios count DELETEs on (one per era), and the one the new config adds. */
export const reloadRoutes = (catalog: CorpusServer): Record<string, ReplayRoute> => ({
  "reload-2025": { catalog },
  "reload-2026": { catalog },
  "reload-added": { catalog },
});

/** What a runtime gives the scenarios. */
export interface ReloadHarness {
  /** Where the proxy is, and how to reach it. */
  mcpUrl(team: string): string;
  fetch: typeof fetch;
  /** Stores a team's config and mints a token for it. */
  seed(team: string, config: TeamConfig): Promise<string>;
  /** An admin's `POST /admin/teams/<team>/sessions/reload`; how many live sessions took it. */
  reload(team: string): Promise<number>;
  /** The upstreams: server-everything, a 2025 upstream whose `confirm` asks the user (an elicitation), replay routes. */
  everythingUrl: string;
  askingUrl: string;
  replayUrl(route: string): string;
  deletes(route: string): Promise<number>;
}

/** server-everything's slow tool: four seconds in eight steps, a progress notification after each. */
const LONG = { tool_name: "everything/trigger-long-running-operation", tool_input: { duration: 4, steps: 8 } };
const LONG_RESULT = "Long running operation completed. Duration: 4 seconds, Steps: 8.";

const text = (result: unknown) => (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");

interface Host {
  use(args: UseTool, onprogress?: () => void): Promise<CallToolResult>;
  close(): Promise<void>;
}
/** How the host answers an upstream's question: the content it accepts with, once it is ready. */
type Answer = () => Promise<Record<string, string | boolean>>;
type HostOf = (h: ReloadHarness, team: string, token: string, answer?: Answer) => Promise<Host & { client: Client | ModernClient }>;

/** A 2025-11-25 host: the v1 SDK client, one session (its GET stream open). */
const sessionHost: HostOf = async (h, team, token, answer) => {
  const transport = new StreamableHTTPClientTransport(new URL(h.mcpUrl(team)), { fetch: h.fetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "reload-host", version: "1.0.0" }, { capabilities: answer ? { elicitation: {} } : {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  if (answer) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: await answer() }));
  await client.connect(transport);
  return {
    client,
    use: (args, onprogress) => client.callTool({ name: "use_tool", arguments: args }, undefined, onprogress ? { onprogress } : {}) as Promise<CallToolResult>,
    close: () => client.close(),
  };
};

/** A 2026-07-28 host: the v2 SDK client in automatic mode (no session: its requests reach the principal's object). */
const modernHost: HostOf = async (h, team, token, answer) => {
  const transport = new ModernTransport(new URL(h.mcpUrl(team)), { fetch: h.fetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new ModernClient({ name: "reload-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: answer ? { elicitation: {} } : {} });
  if (answer) client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: await answer() }));
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return {
    client,
    use: (args, onprogress) => client.callTool({ name: "use_tool", arguments: args }, onprogress ? { onprogress } : {}) as Promise<CallToolResult>,
    close: () => client.close(),
  };
};

export function reloadScenarios(h: ReloadHarness): void {
  /** The team's config gains `added` (an upstream only the new config has), and an admin reloads its one live session. */
  const changeAndReload = async (team: string, config: TeamConfig) => {
    await h.seed(team, { mcp: { ...config.mcp, added: { url: h.replayUrl("reload-added") } } });
    expect(await h.reload(team)).toBe(1);
  };
  /** A request that takes the reload: the upstream only the new config has answers it. */
  const usesNewConfig = async (host: Host) => {
    const next = await host.use({ tool_name: "added/read_graph", tool_input: {} });
    expect(next.isError, text(next)).toBeFalsy();
    expect(text(next)).toContain('"tool":"read_graph"');
  };

  describe.each([
    ["a 2025 session", "reload-2025", sessionHost],
    ["a 2026-07-28 principal's object", "reload-2026", modernHost],
  ] as const)("an admin reload during calls, in %s", (_label, team, hostOf) => {
    it("lets a running call finish with its result; the next request takes the new config; the old clients close after the call", async () => {
      const config = { mcp: { everything: { url: h.everythingUrl }, graph: { url: h.replayUrl(team) } } };
      const host = await hostOf(h, team, await h.seed(team, config));
      // Both upstreams connected in the runtime the reload will retire.
      expect((await host.use({ tool_name: "graph/read_graph", tool_input: {} })).isError).toBeFalsy();
      const deletes = await h.deletes(team);

      let progressed = false;
      let finished = false;
      const running = host.use(LONG, () => (progressed = true)).finally(() => (finished = true));
      // The upstream is running the call (it has sent progress) when the reload comes.
      expect(await waitFor(() => progressed, { tries: 200, ms: 20 })).toBe(true);
      await changeAndReload(team, config);
      await usesNewConfig(host);
      // All that happened while the first call was still running.
      expect(finished).toBe(false);
      const deletesMeanwhile = await h.deletes(team);

      const result = await running;
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toBe(LONG_RESULT);
      // Its runtime kept its upstream clients while the call ran…
      expect(deletesMeanwhile).toBe(deletes);
      // …and closes them (graph's among them) once it has answered; the new runtime goes on.
      expect(await waitFor(async () => (await h.deletes(team)) === deletes + 1)).toBe(true);
      expect((await host.use({ tool_name: "graph/read_graph", tool_input: {} })).isError).toBeFalsy();
      await host.close();
    });

    it("brings the host's answer to a call that waits for it across the reload", async () => {
      const config = { mcp: { up: { url: h.askingUrl } } };
      let asked = false;
      let ready!: () => void;
      const answered = new Promise<void>((resolve) => (ready = resolve));
      const host = await hostOf(h, `${team}-ask`, await h.seed(`${team}-ask`, config), async () => {
        asked = true;
        await answered;
        return { ok: true };
      });
      // A 2025 upstream asks the user to confirm (an elicitation): the call waits for the host's answer.
      const running = host.use({ tool_name: "up/confirm", tool_input: { action: "deploy" } });
      expect(await waitFor(() => asked)).toBe(true);
      await changeAndReload(`${team}-ask`, config);
      await usesNewConfig(host);
      ready();
      const result = await running;
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toBe("deploy: confirmed");
      await host.close();
    });
  });

  describe("a 2025 host's GET stream across a reload", () => {
    it("moves to the new runtime, which tells the host that its lists may have changed", async () => {
      const config = { mcp: { graph: { url: h.replayUrl("reload-added") } } };
      const host = await sessionHost(h, "reload-get", await h.seed("reload-get", config));
      const client = host.client as Client;
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      const description = async () => (await client.listTools()).tools.find((t) => t.name === "discover_tool")?.description ?? "";
      expect(await description()).not.toContain("added:");
      await changeAndReload("reload-get", config);
      await usesNewConfig(host);
      // The old runtime ended the host's stream; the host opened it again (the SDK client does, after a second), on
      // the new runtime, which said the lists may have changed.
      expect(await waitFor(() => changed > 0, { tries: 150, ms: 20 })).toBe(true);
      expect(await description()).toContain("added:");
      await host.close();
    });
  });
}
