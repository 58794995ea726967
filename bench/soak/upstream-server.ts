// The upstream process (`node bench/soak.ts --upstreams`, started by the soak): two replay servers, "healthy"
// (server-everything's catalog) and "chaos" (server-memory's), that take the chaos route's faults over IPC and
// answer questions about their requests in flight and their event-loop stalls. Ends with the soak.
import type { Server } from "node:http";
import { longKeepAlive } from "../lib/keep-alive.ts";
import { loadCorpus, startReplayServer, type Fault, type ReplayRoute } from "../../harness/replay-server.ts";
import { watchStalls, type Stall } from "./stalls.ts";

const HEALTHY_CATALOG = "modelcontextprotocol__server-everything";
const CHAOS_CATALOG = "modelcontextprotocol__server-memory";

/** A fault change for the chaos route, or a question about requests in flight or event-loop stalls. */
export type ToUpstreams = { seq: number; faults: Record<string, Fault> | null } | { seq: number; query: "inflight" | "stalls" };
export interface InFlight {
  healthy: number;
  chaos: number;
}
export type FromUpstreams =
  | { type: "ready"; healthy: number; chaos: number }
  | { type: "ack"; seq: number; inflight?: InFlight; stalls?: Stall[] };

/**
 * Requests each server has received and not finished answering: a response ends when it is sent or when the
 * client closes the connection. A request the proxy gave up on (a timeout) but never aborted stays here.
 */
const inFlight = new Map<Server, number>();
function countInFlight(server: Server): void {
  inFlight.set(server, 0);
  server.on("request", (_req, res) => {
    inFlight.set(server, (inFlight.get(server) ?? 0) + 1);
    res.once("close", () => inFlight.set(server, (inFlight.get(server) ?? 1) - 1));
  });
}
const inFlightOn = (port: number): number => {
  for (const [server, n] of inFlight) {
    const address = server.address();
    if (typeof address === "object" && address?.port === port) return n;
  }
  return 0;
};

export async function serveUpstreams(): Promise<void> {
  longKeepAlive(countInFlight);
  const chaosRoutes: Record<string, ReplayRoute> = { chaos: { catalog: loadCorpus(CHAOS_CATALOG) } };
  const healthy = await startReplayServer({ healthy: { catalog: loadCorpus(HEALTHY_CATALOG) } });
  const chaos = await startReplayServer(chaosRoutes);
  const stalls = watchStalls();
  const stop = () => void Promise.all([healthy.close(), chaos.close()]).then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop); // the soak is gone: never outlive it
  process.on("message", (raw) => {
    const message = raw as ToUpstreams;
    if ("query" in message && message.query === "stalls") {
      process.send?.({ type: "ack", seq: message.seq, stalls: stalls.stalls } satisfies FromUpstreams);
      return;
    }
    if ("query" in message) {
      const inflight = { healthy: inFlightOn(healthy.port), chaos: inFlightOn(chaos.port) };
      process.send?.({ type: "ack", seq: message.seq, inflight } satisfies FromUpstreams);
      return;
    }
    // The replay server reads a route's faults on every request, so swapping the object takes effect at once.
    const route = chaosRoutes.chaos!;
    if (message.faults) route.faults = message.faults;
    else delete route.faults;
    process.send?.({ type: "ack", seq: message.seq } satisfies FromUpstreams);
  });
  process.send?.({ type: "ready", healthy: healthy.port, chaos: chaos.port } satisfies FromUpstreams);
}
