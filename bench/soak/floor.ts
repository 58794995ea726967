// The floor after the soak: the local runtime's own RSS growth per request, measured on a trivial Worker
// (bench/floor) under its own `wrangler dev`, to tell from the proxy's.
import { Server } from "node:http";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startWranglerDev, type Running } from "../../harness/processes.ts";
import { KEEP_ALIVE_MS } from "../lib/keep-alive.ts";
import { rssKiB } from "../lib/proc.ts";
import { short } from "./clock.ts";
import { workerPid } from "./worker.ts";

export interface FloorFigures {
  requests: number;
  errors: number;
  seconds: number;
  rssStartMiB: number;
  rssEndMiB: number;
  /** RSS growth per request, KiB. */
  kibPerRequest: number;
}

/** A plain Node server that answers every request at once; resolves with it and its URL. */
async function plainServer(): Promise<{ node: Server; url: string }> {
  const node = new Server((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'));
  });
  node.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  const address = node.address();
  return { node, url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/` };
}

/**
 * The local runtime's own memory growth: a trivial Worker forwarding every request to one Durable Object that
 * fetches a plain Node server (bench/floor, `/do-fetch`), under its own `wrangler dev`, sent `requests` requests
 * `concurrency` at a time. Its RSS per request, beside the proxy's, tells what the proxy adds.
 */
export async function runFloor(dir: string, requests: number, concurrency: number): Promise<FloorFigures | undefined> {
  const { node, url } = await plainServer();
  let floor: Running | undefined;
  try {
    floor = await startWranglerDev({ persistTo: join(dir, "floor"), vars: { NODE_URL: url }, config: "bench/floor/wrangler.toml" });
    return await measureFloor(floor, requests, concurrency);
  } catch (err) {
    console.error(`soak: the floor run failed: ${short(err)}`);
    return undefined;
  } finally {
    await floor?.stop();
    node.closeAllConnections();
    await new Promise<void>((resolve) => node.close(() => resolve()));
  }
}

/** Sends the floor Worker its requests and reads its workerd's RSS before and after. */
async function measureFloor(floor: Running, requests: number, concurrency: number): Promise<FloorFigures> {
  const target = `${floor.url}/do-fetch`;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { message: "floor" } } });
  const post = async () => {
    const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    return response.ok;
  };
  await post(); // the Worker and its object are up before the first reading
  let pid = workerPid(floor);
  const rss = () => {
    if (pid === undefined || rssKiB(pid) === 0) pid = workerPid(floor);
    return (pid === undefined ? 0 : rssKiB(pid)) / 1024;
  };
  const rssStartMiB = rss();
  const started = performance.now();
  let sent = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < requests) {
        sent++;
        if (!(await post().catch(() => false))) errors++;
      }
    }),
  );
  const rssEndMiB = rss();
  return {
    requests: sent,
    errors,
    seconds: (performance.now() - started) / 1000,
    rssStartMiB,
    rssEndMiB,
    kibPerRequest: ((rssEndMiB - rssStartMiB) * 1024) / Math.max(1, sent),
  };
}
