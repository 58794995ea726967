// CI's newcomer check, run by .ci/run on the machine's own Node before anything of the project has run: in a fresh
// copy of the checkout, `npm run dev` as the very first command installs, starts the demo and answers an MCP client
// with the token it printed, saying nothing that reads as a failure; then, in the same copy, `npm test --
// --passWithNoTests nomatch` runs every check and hands its arguments to vitest (exit 0). Plain JavaScript for
// Node 20: nothing here may need the project's Node 22, which the first command installs.
//
// Usage: node .ci/first-run.mjs <fresh copy of the project>
import { spawn } from "node:child_process";
import { createServer } from "node:net";

const folder = process.argv[2];
if (!folder) {
  console.error("usage: node .ci/first-run.mjs <fresh copy of the project>");
  process.exit(2);
}

/** The whole first run, the install included, may take this long before the demo answers. */
const DEV_READY_MS = 6 * 60_000;
const CHECKS_MS = 10 * 60_000;

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** `npm <args>` in the copy, in its own process group (stopped whole), output kept and echoed. */
function npm(args, env) {
  const child = spawn("npm", args, { cwd: folder, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (stream, to) =>
    stream.on("data", (chunk) => {
      output += chunk.toString();
      to.write(chunk);
    });
  keep(child.stdout, process.stdout);
  keep(child.stderr, process.stderr);
  let done = false;
  const exited = new Promise((resolve) =>
    child.once("close", (code, signal) => {
      done = true;
      resolve(code ?? (signal ? 1 : 0));
    }),
  );
  return {
    output: () => output,
    exited,
    done: () => done,
    stop: () => {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    },
  };
}

/** Resolves when `check` is true, or fails after `ms` (checked every half second). */
async function until(what, check, ms) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what} after ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One JSON-RPC message to the MCP URL; the answer's JSON-RPC message (an SSE answer's last data line). */
async function rpc(url, token, session, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(session ? { "mcp-session-id": session } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${body.method} answered ${response.status}: ${text.slice(0, 500)}`);
  if (!("id" in body)) return { session: response.headers.get("mcp-session-id") };
  const data = text.includes("data:") ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).at(-1) : text;
  return { session: response.headers.get("mcp-session-id"), message: JSON.parse(data) };
}

const fail = (why) => {
  console.error(`\nfirst-run check failed: ${why}`);
  process.exitCode = 1;
};

const port = await freePort();
console.log(`first run: npm run dev in ${folder} (port ${port})`);
const dev = npm(["run", "dev"], { PORT: String(port) });
try {
  let token;
  await until(
    "npm run dev to print the demo's token",
    async () => {
      const printed = /token\s+:\s+(\S+)/.exec(dev.output());
      if (printed) token = printed[1];
      if (!token && dev.done()) throw new Error("npm run dev exited before the demo was up");
      return token !== undefined;
    },
    DEV_READY_MS,
  );
  const url = `http://127.0.0.1:${port}/t/demo/mcp`;
  const init = await rpc(url, token, undefined, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ci-first-run", version: "1" } },
  });
  await rpc(url, token, init.session, { jsonrpc: "2.0", method: "notifications/initialized" });
  const list = await rpc(url, token, init.session, { jsonrpc: "2.0", id: 2, method: "tools/list" });
  const names = (list.message.result?.tools ?? []).map((t) => t.name);
  if (!names.includes("discover_tool") || !names.includes("use_tool")) fail(`tools/list named ${JSON.stringify(names)}`);
  const sum = await rpc(url, token, init.session, {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 2, b: 3 } } },
  });
  const said = JSON.stringify(sum.message.result?.content ?? sum.message);
  if (!said.includes("5")) fail(`use_tool everything/get-sum answered ${said.slice(0, 300)}`);
  else console.log(`\nfirst run: the demo answered tools/list (${names.join(", ")}) and use_tool (${said.slice(0, 120)})`);
  // Nothing a newcomer reads as a failure: no error stack, no failed lookup of a Cloudflare host.
  const noisy = dev.output().split("\n").filter((line) => /^\s+at\s|ENOTFOUND|getaddrinfo|\bError:/.test(line));
  if (noisy.length > 0) fail(`npm run dev printed what reads as a failure:\n${noisy.slice(0, 10).join("\n")}`);
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
} finally {
  dev.stop();
  await dev.exited;
}

if (!process.exitCode) {
  console.log(`\nfirst run: npm test -- --passWithNoTests nomatch in ${folder}`);
  const checks = npm(["test", "--", "--passWithNoTests", "nomatch"], {});
  const timer = setTimeout(() => {
    fail(`npm test -- --passWithNoTests nomatch did not end within ${CHECKS_MS / 60_000} minutes`);
    checks.stop();
  }, CHECKS_MS);
  const code = await checks.exited;
  clearTimeout(timer);
  if (code !== 0) fail(`npm test -- --passWithNoTests nomatch exited with ${code}`);
  else if (!/No test files found/.test(checks.output())) fail("vitest did not say it found no test files: the arguments did not reach it");
}
process.exit(process.exitCode ?? 0);
