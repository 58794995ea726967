// End-to-end plumbing: the team CLI run as an operator would, and a real SDK Client over real HTTP.
import { execFile, spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { packageFile } from "../../scripts/lib/processes.ts";

/** The secrets key of end-to-end runs: the CLI encrypts with it, `wrangler dev` (see VARS in the tests) decrypts. */
export const E2E_SECRETS_KEY = "e2e-secrets-key-0123456789abcdef";

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run team -- <args>`, as the README shows it (run with the same Node, without npm's banner). */
export function teamCli(args: string[], env: Record<string, string> = {}, input?: string): CliResult {
  const run = spawnSync(process.execPath, ["scripts/team.ts", ...args], {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
    env: { ...process.env, ALLOW_PRIVATE_UPSTREAMS: "true", SECRETS_KEY: E2E_SECRETS_KEY, ...env },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * The same, without blocking the event loop: a blocked test process misses keep-alive sockets closing on the
 * proxy's side and then reuses a dead one ("other side closed"), and its in-process upstreams stop answering.
 */
export function teamCliAsync(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["scripts/team.ts", ...args], {
      env: { ...process.env, ALLOW_PRIVATE_UPSTREAMS: "true", SECRETS_KEY: E2E_SECRETS_KEY, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/** Writes a config file, stores it with `team put`, mints a token with `team token`; returns the token. */
export function provisionTeam(dir: string, persistTo: string, team: string, config: unknown): string {
  const file = join(dir, `${team}.json`);
  writeFileSync(file, JSON.stringify(config));
  const put = teamCli(["put", team, file, "--persist-to", persistTo]);
  if (put.status !== 0) throw new Error(`team put failed: ${put.stderr}`);
  const minted = teamCli(["token", team, "--persist-to", persistTo]);
  if (minted.status !== 0) throw new Error(`team token failed: ${minted.stderr}`);
  return minted.stdout.trim().split("\n").at(-1)!;
}

export async function connectClient(url: string, token: string, sessionId?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client({ name: "e2e-host", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId ?? sessionId ?? "" };
}

export function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/**
 * The MCP Inspector's CLI, a real client used by people, against the proxy. Asynchronous on purpose: the
 * fixtures upstreams live in this process and must keep answering while it runs.
 */
export function inspector(url: string, token: string, args: string[]): Promise<{ status: number; json: unknown; raw: string }> {
  const cli = packageFile("@modelcontextprotocol/inspector", "clients", "launcher", "build", "index.js");
  const argv = [cli, "--cli", url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout.slice(stdout.indexOf("{"), stdout.lastIndexOf("}") + 1));
      } catch {
        json = undefined;
      }
      const status = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ status, json, raw: stdout + stderr });
    });
  });
}
