// Reading the workerd that runs the Worker and every session object: its pid, its CPU ticks, and the V8 heap of its
// isolate (through wrangler's inspector port).
import type { Running } from "../../harness/processes.ts";
import { readStat, wranglerProcesses } from "../lib/proc.ts";

/** The workerd that runs the Worker and every session object (not wrangler's proxy worker): the one measured. */
export const workerPid = (proxy: Running): number | undefined => wranglerProcesses(proxy.child.pid, proxy.port).worker;

/** CPU ticks (user + system) of a process. */
export function cpuTicks(pid: number | undefined): number {
  return pid === undefined ? 0 : (readStat(pid)?.ticks ?? 0);
}

export interface HeapReading {
  /** s since the run started. */
  t: number;
  usedMiB: number;
  totalMiB: number;
  /** ArrayBuffer backing stores (outside the V8 heap), as V8 reports them. */
  backingMiB: number;
}

/**
 * The V8 heap of the Worker's isolate (every session object lives in it), read through wrangler's inspector port
 * with the DevTools protocol's Runtime.getHeapUsage. Connected only for a reading (an attached debugger could slow
 * the Worker); undefined when it cannot be read. workerd does not implement HeapProfiler.collectGarbage, so the
 * used size includes garbage not yet collected.
 */
export async function workerHeap(proxy: Running): Promise<Omit<HeapReading, "t"> | undefined> {
  const args = proxy.child.spawnargs;
  const port = args[args.indexOf("--inspector-port") + 1];
  if (!port) return undefined;
  let ws: WebSocket | undefined;
  try {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(5_000) })).json()) as Array<{
      webSocketDebuggerUrl?: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) return undefined;
    // wrangler's inspector proxy accepts DevTools' origin only; Node's WebSocket (undici) takes headers.
    const Socket = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;
    const socket = new Socket(url, { headers: { Origin: "https://devtools.devprod.cloudflare.dev" } });
    ws = socket;
    return await heapUsage(socket);
  } catch {
    return undefined;
  } finally {
    ws?.close();
  }
}

/** Asks an inspector connection for Runtime.getHeapUsage; undefined on an error or after 5 s without an answer. */
function heapUsage(socket: WebSocket): Promise<Omit<HeapReading, "t"> | undefined> {
  return new Promise<Omit<HeapReading, "t"> | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 5_000);
    socket.addEventListener("error", () => (clearTimeout(timer), resolve(undefined)));
    socket.addEventListener("open", () => socket.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" })));
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: { usedSize: number; totalSize: number; backingStorageSize?: number };
      };
      if (message.id !== 1 || !message.result) return;
      clearTimeout(timer);
      const r = message.result;
      resolve({
        usedMiB: r.usedSize / 2 ** 20,
        totalMiB: r.totalSize / 2 ** 20,
        backingMiB: (r.backingStorageSize ?? 0) / 2 ** 20,
      });
    });
  });
}
