// Child processes the dev script, the end-to-end tests and the benchmarks start: free ports, readiness, clean stops.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

export interface Running {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the process printed so far (for error messages). */
  output: () => string;
  stop: () => Promise<void>;
}

/** A port the OS says is free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

const require = createRequire(import.meta.url);
export const packageFile = (pkg: string, ...path: string[]): string =>
  join(dirname(require.resolve(`${pkg}/package.json`)), ...path);

/** A scrubbed environment: fixtures such as server-everything's get-env tool return theirs to any caller. */
export function scrubbedEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...extra };
}

/** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), graceMs).unref();
  });
}

/** Runs a script with this Node, its output on this process's own; resolves to its exit code (1 if it failed to run). */
export function runScript(script: string, args: string[] = []): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: "inherit" });
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.once("error", () => resolve(1));
  });
}

/** Starts a process and resolves once `ready` matches its output (or rejects on exit / time-out). */
export function startProcess(opts: {
  command: string;
  args: string[];
  env: Record<string, string>;
  ready: RegExp;
  url: string;
  port: number;
  timeoutMs?: number;
  cwd?: string;
}): Promise<Running> {
  const child = spawn(opts.command, opts.args, { env: opts.env, cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const stop = () => stopChild(child, 3000);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${opts.command} did not become ready in ${opts.timeoutMs ?? 30000} ms:\n${output}`));
    }, opts.timeoutMs ?? 30000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (opts.ready.test(output)) {
        clearTimeout(timer);
        resolve({ url: opts.url, port: opts.port, child, output: () => output, stop });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${opts.command} exited with ${code} before it was ready:\n${output}`));
    });
  });
}

/** `@modelcontextprotocol/server-everything` on a loopback port, over streamable HTTP or the older HTTP+SSE transport. */
export async function startEverything(port?: number, transport: "streamableHttp" | "sse" = "streamableHttp"): Promise<Running> {
  const p = port ?? (await freePort());
  return startProcess({
    command: process.execPath,
    args: [packageFile("@modelcontextprotocol/server-everything", "dist", "index.js"), transport],
    env: scrubbedEnv({ PORT: String(p) }),
    ready: transport === "sse" ? /running on port/i : /listening on port/i,
    url: transport === "sse" ? `http://127.0.0.1:${p}/sse` : `http://127.0.0.1:${p}/mcp`,
    port: p,
  });
}

/** A stdio MCP server of the project's dev dependencies, as `supergateway` runs it. */
export interface StdioServer {
  /** The npm package whose `dist/index.js` is the server. */
  pkg: string;
  args?: string[];
  env?: Record<string, string>;
}

const shellQuoted = (arg: string): string => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * A stdio MCP server behind `supergateway` (streamable HTTP, one child process per MCP session), the way a team puts
 * a stdio server in front of a remote proxy. `port` keeps a restarted gateway at the same URL.
 */
export async function startGatewayed(server: StdioServer, port?: number): Promise<Running> {
  const p = port ?? (await freePort());
  const stdio = [process.execPath, packageFile(server.pkg, "dist", "index.js"), ...(server.args ?? [])].map(shellQuoted).join(" ");
  return startProcess({
    command: process.execPath,
    args: [packageFile("supergateway", "dist", "index.js"), "--stdio", stdio, "--outputTransport", "streamableHttp", "--stateful", "--port", String(p)],
    env: scrubbedEnv(server.env ?? {}),
    ready: /Listening on port/,
    url: `http://127.0.0.1:${p}/mcp`,
    port: p,
  });
}

/** Arguments to run the project's wrangler with this Node (`process.execPath`). */
export function wranglerArgs(args: string[]): string[] {
  return [packageFile("wrangler", "bin", "wrangler.js"), ...args];
}

/**
 * The environment a local wrangler runs in. `wrangler dev` fetches the `cf` object it fakes for requests from
 * workers.cloudflare.com at start; offline, that fetch fails and prints its error and stack twice, which a newcomer
 * reads as a failure. Miniflare's fallback object serves as well here (the proxy reads nothing of `request.cf`), so
 * the fetch is off unless the caller's environment says otherwise.
 */
export function wranglerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = process.env as Record<string, string>;
  return { ...env, CLOUDFLARE_CF_FETCH_ENABLED: env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false", ...extra };
}

/** `wrangler dev` of this project on a loopback port, with its local state in `persistTo`. */
export async function startWranglerDev(opts: {
  persistTo: string;
  vars: Record<string, string>;
  port?: number;
  config?: string;
}): Promise<Running> {
  const port = opts.port ?? (await freePort());
  // Local runs reach loopback upstreams: the SSRF guard's private-address rule is lifted here only.
  const all = { ALLOW_PRIVATE_UPSTREAMS: "true", ...opts.vars };
  const vars = Object.entries(all).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  return startProcess({
    command: process.execPath,
    args: wranglerArgs([
      "dev",
      ...(opts.config ? ["--config", opts.config] : []),
      "--ip", "127.0.0.1",
      "--port", String(port),
      "--persist-to", opts.persistTo,
      "--inspector-port", String(await freePort()),
      "--show-interactive-dev-session=false",
      ...vars,
    ]),
    env: wranglerEnv({ WRANGLER_SEND_METRICS: "false", CI: "true" }),
    ready: /Ready on http/,
    url: `http://127.0.0.1:${port}`,
    port,
    timeoutMs: 60_000,
  });
}
