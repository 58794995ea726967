// The soak's side of the upstream process (bench/soak/upstream-server.ts): starting it, swapping the chaos route's
// faults, its control endpoints, and what the upstreams counted (sessions opened and closed, requests open, stalls).
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { scrubbedEnv, stopChild } from "../../harness/processes.ts";
import type { Fault, RouteStats } from "../../harness/replay-server.ts";
import type { Stall } from "./stalls.ts";
import type { FromUpstreams, InFlight, ToUpstreams } from "./upstream-server.ts";

/** The soak's entry: run with `--upstreams`, it is the upstream process. */
const SOAK_ENTRY = join(import.meta.dirname, "..", "soak.ts");

export interface Upstreams {
  pid: number;
  healthyBase: string;
  chaosBase: string;
  setFaults: (faults: Record<string, Fault> | null) => Promise<void>;
  /** Requests each upstream has received and not finished answering right now. */
  inFlight: () => Promise<InFlight>;
  stalls: () => Promise<Stall[]>;
  /** POST to a control endpoint of a replay server (`/__down/chaos`, `/__reset`, …). */
  control: (base: string, path: string) => Promise<void>;
  stats: (base: string, route: string) => Promise<RouteStats>;
  output: () => string;
  stop: () => Promise<void>;
}

type Ack = FromUpstreams & { type: "ack" };
type Ask = (message: ToUpstreams) => Promise<Ack>;

/** The last 20,000 characters the child printed (stdout and stderr), for error messages. */
function keepOutput(child: ChildProcess): () => string {
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return () => output;
}

/** Questions to the child over IPC, each answered by an `ack` with its sequence number within 5 s. */
function asker(child: ChildProcess): { ask: Ask; answered: (ack: Ack) => void } {
  const acks = new Map<number, (answer: Ack) => void>();
  const ask: Ask = (message) =>
    new Promise<Ack>((done, fail) => {
      const t = setTimeout(() => fail(new Error("the upstream process did not answer")), 5_000);
      acks.set(message.seq, (answer) => (clearTimeout(t), done(answer)));
      child.send(message);
    });
  const answered = (ack: Ack) => {
    acks.get(ack.seq)?.(ack);
    acks.delete(ack.seq);
  };
  return { ask, answered };
}

/** Starts the upstream process and resolves once both servers listen. */
export function startUpstreams(): Promise<Upstreams> {
  const child: ChildProcess = spawn(process.execPath, [SOAK_ENTRY, "--upstreams"], {
    env: scrubbedEnv({}),
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const output = keepOutput(child);
  const { ask, answered } = asker(child);
  const stop = () => stopChild(child, 3_000);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the upstream process did not start:\n${output()}`));
    }, 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the upstream process exited with ${code}:\n${output()}`));
    });
    child.on("message", (raw) => {
      const message = raw as FromUpstreams;
      if (message.type === "ack") return answered(message);
      clearTimeout(timer);
      resolve(handle(child, message, ask, output, stop));
    });
  });
}

/** The running upstream process, once it said where its servers listen. */
function handle(child: ChildProcess, ready: FromUpstreams & { type: "ready" }, ask: Ask, output: () => string, stop: () => Promise<void>): Upstreams {
  let seq = 0;
  return {
    pid: child.pid ?? 0,
    healthyBase: `http://127.0.0.1:${ready.healthy}`,
    chaosBase: `http://127.0.0.1:${ready.chaos}`,
    setFaults: async (faults) => {
      await ask({ seq: ++seq, faults });
    },
    inFlight: async () => (await ask({ seq: ++seq, query: "inflight" })).inflight ?? { healthy: 0, chaos: 0 },
    stalls: async () => (await ask({ seq: ++seq, query: "stalls" })).stalls ?? [],
    control: async (base, path) => {
      const response = await fetch(`${base}${path}`, { method: "POST", signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status}`);
    },
    stats: async (base, route) => {
      const response = await fetch(`${base}/__stats/${route}`, { signal: AbortSignal.timeout(5_000) });
      return (await response.json()) as RouteStats;
    },
    output,
    stop,
  };
}

/** Upstream sessions opened by the proxy (initialize) and closed (DELETE), as the upstream counted them. */
export interface UpstreamServerFigures {
  initializes: number;
  deletes: number;
}

export type UpstreamServers = { healthy: UpstreamServerFigures; chaos: UpstreamServerFigures };

export const noUpstreamSessions = (): UpstreamServers => ({ healthy: { initializes: 0, deletes: 0 }, chaos: { initializes: 0, deletes: 0 } });

function addStats(into: UpstreamServerFigures, s: RouteStats): void {
  into.initializes += s.methods.initialize ?? 0;
  into.deletes += s.deletes;
}

/** Adds what each upstream counted since the last reset into `into`, then resets the counters (and the faults' `times`). */
export async function collectStats(ups: Upstreams, into: UpstreamServers): Promise<void> {
  addStats(into.healthy, await ups.stats(ups.healthyBase, "healthy"));
  addStats(into.chaos, await ups.stats(ups.chaosBase, "chaos"));
  await ups.control(ups.healthyBase, "/__reset");
  await ups.control(ups.chaosBase, "/__reset");
}
