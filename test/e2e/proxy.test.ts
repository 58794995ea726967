// The whole product as a user runs it: the team CLI seeds local KV, `wrangler dev` serves, real clients connect
// (the SDK Client and the MCP Inspector CLI) to real upstreams on loopback; the dev server is restarted mid-way.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCliAsync } from "../../harness/clients.ts";
import { listeningClient } from "../shared/listening-client.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import { inspector, text } from "./helpers.ts";

const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY };
let dir: string;
let state: string;
let everything: Running;
let reference: Running;
let replay: ReplayServer;
let proxy: Running;
let port: number;
let tokens: Record<string, string>;
const mcpUrl = (team: string) => `http://127.0.0.1:${port}/t/${team}/mcp`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-e2e-"));
  state = join(dir, "state");
  [everything, reference, replay] = await Promise.all([
    startEverything(),
    startEverything(),
    startReplayServer({
      memory: { catalog: loadCorpus("modelcontextprotocol__server-memory") },
      lazy: { catalog: loadCorpus("modelcontextprotocol__server-memory") },
    }),
  ]);
  const dead = `http://127.0.0.1:${await freePort()}/mcp`;
  tokens = {
    multi: provisionTeam(dir, state, "multi", {
      mcp: {
        everything: { transport: "streamable-http", url: everything.url },
        memory: { transport: "http", url: replay.url("memory") },
        down: { url: dead },
        later: { url: replay.url("lazy"), description: "A knowledge graph; load it to remember facts." },
        reference: { url: reference.url, description: "The MCP reference server: echo, sums, sample resources and prompts." },
      },
    }),
    single: provisionTeam(dir, state, "single", { transport: "streamable-http", url: everything.url }),
  };
  port = await freePort();
  proxy = await startWranglerDev({ persistTo: state, vars: VARS, port });
});

afterAll(async () => {
  await Promise.all([proxy?.stop(), everything?.stop(), reference?.stop(), replay?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("config-file mode through wrangler dev", () => {
  it("shows every upstream's tools, names the one that is down, discovers and uses a tool", async () => {
    const { client } = await connectClient(mcpUrl("multi"), tokens.multi!);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    const description = tools[0]!.description!;
    expect(description).toContain("everything:\n- echo: Echoes back the input string");
    expect(description).toContain("memory:\n- add_observations:");
    expect(description).toMatch(/\ndown: unavailable — unreachable/);
    expect(description).toContain(
      "<mcp_servers>\nlater: A knowledge graph; load it to remember facts.\nreference: The MCP reference server: echo, sums, sample resources and prompts.\n</mcp_servers>",
    );

    const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: "everything/echo" } });
    expect(text(found)).toContain('"message"');
    const echoed = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "through the edge" } } });
    expect(text(echoed)).toBe("Echo: through the edge");
    const unknown = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/ech" } });
    expect(unknown.isError).toBe(true);
    const down = await client.callTool({ name: "use_tool", arguments: { tool_name: "down/x" } });
    expect(down.isError).toBe(true);
    expect(replay.stats("lazy").requests).toBe(0);
    await client.close();
  });

  it("never forwards the host's Authorization header upstream", async () => {
    const { client } = await connectClient(mcpUrl("multi"), tokens.multi!);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    const seen = replay.stats("memory").lastHeaders;
    expect(seen.authorization).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain(tokens.multi!);
    await client.close();
  });
});

describe("dynamic discovery through wrangler dev", () => {
  it("loads a lazy server: list-changed arrives once, on the load_mcp answer, though the host holds a GET stream; its tools appear and are callable", async () => {
    const { client, listChanges } = await listeningClient(mcpUrl("multi"), tokens.multi!, true, fetch);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    const loaded = await client.callTool({ name: "load_mcp", arguments: { mcp_name: "later" } });
    expect(loaded.isError).toBeFalsy();
    // Its index: every tool by its bare name (use_tool calls it `later/<tool>`, as the text says).
    expect(Object.keys((loaded.structuredContent as { tools: Record<string, string> }).tools)).toContain("read_graph");
    expect(text(loaded)).toContain('Its tools, called with use_tool as "later/<tool>":\n- add_observations: ');
    // The memory catalog brings tools and a resource.
    expect(await listChanges(2)).toEqual(["post notifications/tools/list_changed", "post notifications/resources/list_changed"]);
    const used = await client.callTool({ name: "use_tool", arguments: { tool_name: "later/read_graph" } });
    expect(JSON.parse(text(used))).toEqual({ tool: "read_graph", arguments: {} });
    const ref = await client.callTool({ name: "load_mcp", arguments: { mcp_name: "reference" } });
    const counts = (ref.structuredContent as { counts: { prompts: number } }).counts;
    expect(counts.prompts).toBeGreaterThan(0);
    // The full lists are where the answer says: the host's prompts/list has them all.
    expect(text(ref)).toContain("Its resources and prompts: resources/list, resources/templates/list and prompts/list.");
    expect((await client.listPrompts()).prompts.filter((p) => p.name.startsWith("reference/"))).toHaveLength(counts.prompts);
    // And the index again, from discover_tool with the server alone.
    const index = await client.callTool({ name: "discover_tool", arguments: { server: "reference" } });
    expect(text(index)).toContain("\n- get-sum: ");
    expect(await listChanges(3)).toEqual([
      "post notifications/tools/list_changed",
      "post notifications/resources/list_changed",
      "post notifications/prompts/list_changed",
    ]);
    const sum = await client.callTool({ name: "use_tool", arguments: { tool_name: "reference/get-sum", tool_input: { a: 1, b: 1 } } });
    expect(text(sum)).toContain("2");
    const description = (await client.listTools()).tools[0]!.description!;
    expect(description).toContain("later:\n- add_observations:");
    expect(description).toContain("reference:\n- echo:");
    expect(description).not.toContain("<mcp_servers>");
    expect(replay.stats("lazy").methods.initialize).toBe(1);
    await client.close();
  });

  it("sends a host without a GET stream each list_changed of a load once, on the load_mcp answer", async () => {
    const { client, listChanges } = await listeningClient(mcpUrl("multi"), tokens.multi!, false, fetch);
    const ref = await client.callTool({ name: "load_mcp", arguments: { mcp_name: "reference" } });
    expect(ref.isError).toBeFalsy();
    expect(await listChanges(3)).toEqual([
      "post notifications/tools/list_changed",
      "post notifications/resources/list_changed",
      "post notifications/prompts/list_changed",
    ]);
    await client.close();
  });
});

describe("the rest of MCP through wrangler dev", () => {
  it("forwards resources, prompts, completion and progress from two upstreams", async () => {
    const { client } = await connectClient(mcpUrl("multi"), tokens.multi!);
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain("demo://resource/static/document/features.md");
    expect(uris).toContain("memory://knowledge-graph");
    expect((await client.readResource({ uri: "memory://knowledge-graph" })).contents[0]).toMatchObject({ text: "replayed memory://knowledge-graph" });
    expect((await client.readResource({ uri: "demo://resource/dynamic/text/7" })).contents[0]!.uri).toBe("demo://resource/dynamic/text/7");
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toContain("everything/simple-prompt");
    expect((await client.getPrompt({ name: "everything/simple-prompt" })).messages.length).toBeGreaterThan(0);
    const completion = await client.complete({ ref: { type: "ref/prompt", name: "everything/completable-prompt" }, argument: { name: "department", value: "Mark" } });
    expect(completion.completion.values).toContain("Marketing");
    const progress: number[] = [];
    await client.callTool(
      { name: "use_tool", arguments: { tool_name: "everything/trigger-long-running-operation", tool_input: { duration: 1, steps: 2 } } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(progress.length).toBeGreaterThanOrEqual(1);
    await expect(client.readResource({ uri: "nowhere://x" })).rejects.toMatchObject({ code: -32002 });
    await client.close();
  });
});

describe("single-MCP mode through wrangler dev", () => {
  it("lists and calls bare tool names", async () => {
    const { client } = await connectClient(mcpUrl("single"), tokens.single!);
    const { tools } = await client.listTools();
    expect(tools[0]!.description).toContain("<tools>\n- echo: Echoes back the input string");
    const r = await client.callTool({ name: "use_tool", arguments: { tool_name: "get-sum", tool_input: { a: 20, b: 22 } } });
    expect(text(r)).toContain("42");
    await client.close();
  });
});

describe("the MCP Inspector CLI as the host", () => {
  it("lists the meta-tools, discovers and uses an everything tool", async () => {
    const list = await inspector(mcpUrl("multi"), tokens.multi!, ["--method", "tools/list"]);
    expect(list.status, list.raw).toBe(0);
    const tools = (list.json as { tools: Array<{ name: string; description: string }> }).tools;
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
    expect(tools[0]!.description).toContain("- get-sum: Returns the sum of two numbers");

    const found = await inspector(mcpUrl("multi"), tokens.multi!, ["--method", "tools/call", "--tool-name", "discover_tool", "--tool-arg", "tool_name=everything/get-sum"]);
    expect(found.status, found.raw).toBe(0);
    expect(JSON.stringify(found.json)).toContain("Tool: everything/get-sum");

    const used = await inspector(mcpUrl("multi"), tokens.multi!, [
      "--method", "tools/call", "--tool-name", "use_tool",
      "--tool-arg", "tool_name=everything/get-sum", "--tool-arg", 'tool_input={"a":5,"b":6}',
    ]);
    expect(used.status, used.raw).toBe(0);
    expect(JSON.stringify(used.json)).toContain("The sum of 5 and 6 is 11.");

    const loaded = await inspector(mcpUrl("multi"), tokens.multi!, ["--method", "tools/call", "--tool-name", "load_mcp", "--tool-arg", "mcp_name=later"]);
    expect(loaded.status, loaded.raw).toBe(0);
    expect(JSON.stringify(loaded.json)).toContain('called with use_tool as \\"later/<tool>\\"');
    expect(JSON.stringify(loaded.json)).toContain("read_graph");
  });

  it("is refused without a valid token", async () => {
    const forged = "dmt_0000000000000000_" + "A".repeat(43);
    /** The inspector's error envelope, which it prints on stderr. */
    const envelope = (raw: string) => (JSON.parse(raw.slice(raw.indexOf('{"error"'))) as { error: { code: string; message: string } }).error;
    // 3 is the inspector's exit code for auth_required: what it makes of the proxy's 401.
    const denied = await inspector(mcpUrl("multi"), forged, ["--method", "tools/list"]);
    expect(denied.status, denied.raw).toBe(3);
    expect(envelope(denied.raw).code).toBe("auth_required");
    // Told not to start an interactive OAuth flow (as in CI), it shows the proxy's own 401 body.
    const stored = await inspector(mcpUrl("multi"), forged, ["--method", "tools/list", "--stored-auth-only"]);
    expect(stored.status, stored.raw).toBe(3);
    expect(envelope(stored.raw)).toEqual({
      code: "auth_required",
      message: expect.stringContaining('{"error":"unauthorized","message":"A valid bearer token for this team is required."}'),
    });
  });
});

describe("the team command", () => {
  it("refuses a bad file with its errors and a non-zero exit, and stores nothing", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ mcp: { fs: { transport: "stdio", command: "npx" } } }));
    for (const args of [["check", bad], ["put", "multi", bad, "--persist-to", state]]) {
      const r = await teamCliAsync(args);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("mcp.fs.transport: stdio servers cannot run at the edge");
    }
    expect((await teamCliAsync(["get", "multi", "--persist-to", state])).stdout).toContain('"everything"');
  });

  it("masks literal header values on the way back and warns about them on check", async () => {
    const file = join(dir, "headers.json");
    writeFileSync(file, JSON.stringify({ mcp: { a: { url: "https://a.example/mcp", headers: { Authorization: "Bearer live-credential-123", "X-Ref": "${secret:API_KEY}" } } } }));
    const check = await teamCliAsync(["check", file]);
    expect(check.status).toBe(0);
    expect(check.stderr).toContain("warning: mcp.a.headers.Authorization: the value looks like a credential");
    // The reference names a secret the team does not have yet: refused, naming it.
    const early = await teamCliAsync(["put", "masked", file, "--persist-to", state]);
    expect(early.status).toBe(1);
    expect(early.stderr).toContain("mcp.a.headers.X-Ref: the team has no secret named API_KEY");
    const secret = await teamCliAsync(["secret", "put", "masked", "API_KEY", "--persist-to", state], {}, "s3cr3t-value\n");
    expect(secret.status, secret.stderr).toBe(0);
    const put = await teamCliAsync(["put", "masked", file, "--persist-to", state]);
    expect(put.status, put.stderr).toBe(0);
    const got = await teamCliAsync(["get", "masked", "--persist-to", state]);
    expect(got.stdout).not.toContain("live-credential-123");
    expect(JSON.parse(got.stdout).mcp.a.headers).toEqual({ Authorization: "***", "X-Ref": "${secret:API_KEY}" });
  });
});

describe("the team command's oauth", () => {
  // Six runs of the CLI, each starting wrangler's local KV: about 40 s on a loaded two-core machine.
  it("sets, shows and removes a team's identity provider in local state; a missing client secret is refused first", { timeout: 150_000 }, async () => {
    const set = ["oauth", "set", "masked", "--issuer", "http://127.0.0.1:9/idp", "--client-id", "proxy", "--client-secret", "IDP_SECRET", "--domains", "example.com,Example.org", "--persist-to", state];
    const refused = await teamCliAsync(set);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("client_secret: the team has no secret named IDP_SECRET");
    expect((await teamCliAsync(["secret", "put", "masked", "IDP_SECRET", "--persist-to", state], {}, "idp-client-secret\n")).status).toBe(0);
    expect((await teamCliAsync(set)).status).toBe(0);
    const got = await teamCliAsync(["oauth", "get", "masked", "--persist-to", state]);
    expect(JSON.parse(got.stdout)).toMatchObject({ issuer: "http://127.0.0.1:9/idp", client_secret: "IDP_SECRET", allowed_domains: ["example.com", "example.org"] });
    expect(got.stdout).not.toContain("idp-client-secret");
    expect((await teamCliAsync(["oauth", "delete", "masked", "--persist-to", state])).status).toBe(0);
    expect((await teamCliAsync(["oauth", "get", "masked", "--persist-to", state])).status).toBe(1);
  });

  it("lists users and upstream accounts through the running Worker's admin API, and says plainly why it cannot (no admin token it takes)", async () => {
    const token = "e2e-cli-admin-token-not-printed";
    const r = await teamCliAsync(["oauth", "users", "masked"], { DYNMCP_URL: `http://127.0.0.1:${port}`, DYNMCP_ADMIN_TOKEN: token });
    expect(r.status).toBe(1);
    // 503 when no ADMIN_TOKEN reaches wrangler dev; 401 when a developer's .dev.vars gives it one.
    expect(r.stderr).toMatch(/admin API GET \/admin\/teams\/masked\/users: HTTP (503: The admin API is disabled|401: A valid admin token is required)/);
    expect(r.stderr + r.stdout).not.toContain(token);
    const accounts = await teamCliAsync(["oauth", "accounts", "masked", "github"], { DYNMCP_URL: `http://127.0.0.1:${port}`, DYNMCP_ADMIN_TOKEN: token });
    expect(accounts.status).toBe(1);
    expect(accounts.stderr).toMatch(/admin API GET \/admin\/teams\/masked\/upstreams\/github\/accounts: HTTP (503: The admin API is disabled|401: A valid admin token is required)/);
    expect(accounts.stderr + accounts.stdout).not.toContain(token);
  });
});

describe("restarting wrangler dev with its state kept", () => {
  it("keeps the session id working, with its loaded servers", async () => {
    const first = await connectClient(mcpUrl("multi"), tokens.multi!);
    await first.client.callTool({ name: "load_mcp", arguments: { mcp_name: "later" } });
    const before = (await first.client.listTools()).tools[0]!.description;
    expect(before).toContain("later:\n");
    await first.client.close();

    await proxy.stop();
    proxy = await startWranglerDev({ persistTo: state, vars: VARS, port });

    const again = await connectClient(mcpUrl("multi"), tokens.multi!, first.sessionId);
    expect((await again.client.listTools()).tools[0]!.description).toBe(before);
    const r = await again.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "still here" } } });
    expect(text(r)).toBe("Echo: still here");
    const graph = await again.client.callTool({ name: "use_tool", arguments: { tool_name: "later/read_graph" } });
    expect(graph.isError).toBeFalsy();
    await again.client.close();
  });
});
