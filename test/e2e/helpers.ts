// End-to-end test helpers: a tool result's text and the MCP Inspector CLI (the team CLI and the SDK Client are in
// harness/clients.ts).
import { execFile } from "node:child_process";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { packageFile } from "../../harness/processes.ts";

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
