// Bench-only: the upstream side of bench/latency.ts and bench/load.ts, in a process of its own (as a remote server
// is), so the benchmark's client never shares an event loop with the servers it measures.
//   - the plain Node HTTP server of the floor: answers every request at once with a fixed JSON body;
//   - the replay upstream (harness/replay-server.ts) with one route per corpus server, named by its file
//     (e.g. `modelcontextprotocol__server-everything`), plus any `--route name=corpus-file` given.
// Prints one line `SERVING {"node":<url>,"replay":<base url>}` once both listen; ends on SIGTERM or when its parent is gone.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { scrubbedEnv, startProcess } from "../../harness/processes.ts";
import { longKeepAlive } from "../lib/keep-alive.ts";
import { corpusFiles, loadCorpus, startReplayServer, type ReplayRoute } from "../../harness/replay-server.ts";

const OK = '{"ok":true}';

export async function main(argv: string[]): Promise<void> {
  if (!argv.includes("--default-keep-alive")) longKeepAlive();
  const routes: Record<string, ReplayRoute> = {};
  for (const file of corpusFiles()) {
    const name = file.replace(/\.json$/, "");
    routes[name] = { catalog: loadCorpus(name) };
  }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== "--route") continue;
    const [name, file] = (argv[++i] ?? "").split("=");
    if (name && file) routes[name] = { catalog: loadCorpus(file) };
  }
  const replay = await startReplayServer(routes);

  const plain = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": OK.length }).end(OK));
  });
  await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
  const address = plain.address();
  const nodePort = typeof address === "object" && address ? address.port : 0;

  const stop = () => {
    plain.closeAllConnections();
    plain.close();
    void replay.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // Never outlive the benchmark that started this process, even when it was killed.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && stop(), 1000).unref();
  process.stdout.write(`SERVING ${JSON.stringify({ node: `http://127.0.0.1:${nodePort}/`, replay: `http://127.0.0.1:${replay.port}` })}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));

export interface Upstreams {
  /** The plain Node server of the floor. */
  node: string;
  /** The replay upstream's URL of a route (a corpus file name, or a `--route` name). */
  replay: (route: string) => string;
  /** The serving process (benchmarks sample its CPU and memory). */
  pid: number;
  stop: () => Promise<void>;
}

/**
 * Starts this file as a child process and waits for its `SERVING` line. `defaultKeepAlive` keeps Node's 5 s idle
 * keep-alive (to reproduce the stale-connection failures it causes under load).
 */
export async function startUpstreams(extraRoutes: Record<string, string> = {}, defaultKeepAlive = false): Promise<Upstreams> {
  const args = Object.entries(extraRoutes).flatMap(([name, file]) => ["--route", `${name}=${file}`]);
  if (defaultKeepAlive) args.push("--default-keep-alive");
  const running = await startProcess({
    command: process.execPath,
    args: [fileURLToPath(import.meta.url), ...args],
    env: scrubbedEnv({}),
    ready: /^SERVING \{.*\}$/m,
    url: "",
    port: 0,
  });
  const line = /^SERVING (\{.*\})$/m.exec(running.output())![1]!;
  const urls = JSON.parse(line) as { node: string; replay: string };
  return { node: urls.node, replay: (route) => `${urls.replay}/${route}/mcp`, pid: running.child.pid ?? 0, stop: running.stop };
}
