// Real stdio MCP servers the project did not write, behind `supergateway` (stdio → streamable HTTP, a child process
// per MCP session), as a team would put them in front of a remote proxy: `@modelcontextprotocol/server-memory` (a
// knowledge graph in a file) and `@modelcontextprotocol/server-filesystem` (a temporary folder), through the proxy
// under `wrangler dev` with the SDK Client. Their answers and side effects are real: files written on disk, entities
// kept in the graph's file. The code view runs one program over both (the filesystem lazy, loaded by the program);
// the team's consent rule meets the servers' own `destructiveHint` annotations; the meta view reaches the same tools;
// and when the filesystem's gateway dies mid-session, a program gets an error it can catch, the other server goes on,
// and the restarted gateway is used again. The tests run in order over the same servers, each leaving the graph as
// the next expects it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { E2E_SECRETS_KEY, connectClient, provisionTeam } from "../../harness/clients.ts";
import { startGatewayed, type Running, type StdioServer } from "../../harness/processes.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

let stack: DevStack;
let token: string;
let consentToken: string;
let memory: Running;
let files: Running;
/** The folder server-filesystem may use (its real path: the server answers with resolved paths). */
let folder: string;
let graphFile: string;
const filesServer = (): StdioServer => ({ pkg: "@modelcontextprotocol/server-filesystem", args: [folder] });

/** The test's own folder: the filesystem server's folder and the graph's file inside it. */
let root: string;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "dynmcp-e2e-stdio-")));
  folder = join(root, "files");
  mkdirSync(folder);
  graphFile = join(root, "graph.jsonl");
  [memory, files] = await Promise.all([
    startGatewayed({ pkg: "@modelcontextprotocol/server-memory", env: { MEMORY_FILE_PATH: graphFile } }),
    startGatewayed(filesServer()),
  ]);
  stack = await startDevStack({
    name: "stdio",
    replay: {},
    vars: { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY },
    provision: ({ dir, state }) => {
      const mcp = {
        memory: { url: memory.url },
        files: { url: files.url, description: "The project's files: read, write and list them." },
      };
      token = provisionTeam(dir, state, "stdio", { mcp });
      consentToken = provisionTeam(dir, state, "stdio-consent", { view: "code", approve_destructive: true, mcp });
    },
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), memory?.stop(), files?.stop()]);
  rmSync(root, { recursive: true, force: true });
});

async function session(team: string, bearer: string, query = "") {
  const { client } = await connectClient(stack.mcpUrl(team, query), bearer);
  const call = (name: string, args: Record<string, unknown>) =>
    client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema) as Promise<CallToolResult>;
  return { client, call };
}

describe("server-memory and server-filesystem behind supergateway, through wrangler dev", () => {
  it("code view: one program writes to the graph and to a file (loading the lazy filesystem) and reads both back", async () => {
    const { client, call } = await session("stdio", token, "?view=code");
    const declared = text(await call("describe", { path: "memory.create_entities" }));
    // The server's output schema gives the result type.
    expect(declared).toMatch(/create_entities\(input: \{[^]*\}\): Promise<\{[^]*entities: /);
    const path = join(folder, "services.md");
    const program = [
      "async () => {",
      "  const made = await memory.create_entities({ entities: [{ name: 'payments-db', entityType: 'service', observations: ['moves to Postgres 17'] }] });",
      `  const wrote = await files.write_file({ path: ${JSON.stringify(path)}, content: '# Services\\n' + made.entities.map((e) => e.name).join('\\n') });`,
      `  const back = await files.read_text_file({ path: ${JSON.stringify(path)} });`,
      "  const graph = await memory.read_graph();",
      "  return { wrote: typeof wrote.content, back: back.content, entities: graph.entities.map((e) => e.name) };",
      "}",
    ].join("\n");
    const ran = await call("execute", { code: program });
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(JSON.parse(text(ran))).toEqual({ wrote: "string", back: "# Services\npayments-db", entities: ["payments-db"] });
    // Real side effects: the file on disk, the entity in the graph's file.
    expect(readFileSync(path, "utf8")).toBe("# Services\npayments-db");
    expect(readFileSync(graphFile, "utf8")).toContain('"name":"payments-db"');
    await client.close();
  });

  it("consent: the servers' own destructiveHint marks write_file and delete_entities; the program pauses, and its resume makes each call once", async () => {
    const { client, call } = await session("stdio-consent", consentToken);
    expect(text(await call("describe", { path: "files.write_file, memory.delete_entities, memory.read_graph" })).match(/@needsApproval/g)).toHaveLength(2);
    const path = join(folder, "removed.md");
    const program = [
      "const before = await memory.read_graph();",
      "await memory.delete_entities({ entityNames: ['payments-db'] });",
      `await files.write_file({ path: ${JSON.stringify(path)}, content: 'removed: payments-db' });`,
      "const after = await memory.read_graph();",
      "return [before.entities.length, after.entities.length];",
    ].join("\n");
    const first = await call("execute", { code: program });
    const id = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(first))?.[1];
    expect(id, text(first)).toBeDefined();
    expect(readFileSync(graphFile, "utf8")).toContain('"name":"payments-db"');
    const second = await call("execute", { code: program, approve: id });
    const next = /approve: "(pr_[A-Za-z0-9_-]+)"/.exec(text(second))?.[1];
    expect(text(second)).toMatch(/^The program paused before files\.write_file\(/);
    expect(readFileSync(graphFile, "utf8")).not.toContain('"name":"payments-db"');
    expect(existsSync(path)).toBe(false);
    const done = await call("execute", { code: program, approve: next });
    expect(done.isError, text(done)).toBeFalsy();
    expect(JSON.parse(text(done))).toEqual([1, 0]);
    expect(readFileSync(path, "utf8")).toBe("removed: payments-db");
    await client.close();
  });

  it("meta view: discover_tool and use_tool reach the same real tools", async () => {
    const { client, call } = await session("stdio", token);
    expect(text(await call("discover_tool", { tool_name: "memory/search_nodes" }))).toContain('"query"');
    const entity = { name: "ledger", entityType: "service", observations: ["keeps the books in Postgres"] };
    expect((await call("use_tool", { tool_name: "memory/create_entities", tool_input: { entities: [entity] } })).isError).toBeFalsy();
    const found = await call("use_tool", { tool_name: "memory/search_nodes", tool_input: { query: "Postgres" } });
    expect(found.isError, text(found)).toBeFalsy();
    expect(text(found)).toContain('"name": "ledger"');
    // In the meta view each call is the host's own: no consent step for a destructive tool.
    expect((await call("use_tool", { tool_name: "memory/delete_entities", tool_input: { entityNames: ["ledger"] } })).isError).toBeFalsy();
    expect(readFileSync(graphFile, "utf8")).not.toContain('"name":"ledger"');
    await client.close();
  });

  it("the filesystem's gateway dies mid-session: the program catches the failure, memory goes on; restarted, it is used again", async () => {
    const { client, call } = await session("stdio", token, "?view=code");
    const listing = `await files.list_directory({ path: ${JSON.stringify(folder)} })`;
    expect(text(await call("execute", { code: `return (${listing}).content.includes('services.md');` }))).toBe("true");
    await files.stop();
    const caught = await call("execute", {
      code: `let failed;\ntry { ${listing}; } catch (e) { failed = e.message; }\nconst graph = await memory.read_graph();\nreturn { failed, entities: graph.entities.length };`,
    });
    expect(caught.isError, text(caught)).toBeFalsy();
    expect(JSON.parse(text(caught))).toEqual({ failed: expect.stringMatching(/^files\.list_directory failed: could not reach "files" \(/), entities: 0 });
    files = await startGatewayed(filesServer(), files.port);
    const back = await call("execute", { code: `return (${listing}).content.includes('removed.md');` });
    expect(back.isError, text(back)).toBeFalsy();
    expect(text(back)).toBe("true");
    await client.close();
  });
});
