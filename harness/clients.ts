// End-to-end plumbing shared by the end-to-end tests and the benchmarks: the team CLI run as an operator would,
// and a real SDK Client over real HTTP.
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

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

/**
 * Stores a team's config and mints a token through a running proxy's admin API (much faster than the team CLI,
 * which starts wrangler for each write); returns the token.
 */
export async function provisionByAdmin(proxyUrl: string, adminToken: string, team: string, config: unknown, label = "harness"): Promise<string> {
  const headers = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" };
  const put = await fetch(`${proxyUrl}/admin/teams/${team}/config`, { method: "PUT", headers, body: JSON.stringify(config) });
  if (!put.ok) throw new Error(`storing the config of ${team}: HTTP ${put.status} ${await put.text()}`);
  const minted = await fetch(`${proxyUrl}/admin/teams/${team}/tokens`, { method: "POST", headers, body: JSON.stringify({ label }) });
  if (!minted.ok) throw new Error(`minting a token of ${team}: HTTP ${minted.status} ${await minted.text()}`);
  return ((await minted.json()) as { token: string }).token;
}
