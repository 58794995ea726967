// The readings taken while the soak runs: every few seconds a sample (the Worker's RSS, the CPU of wrangler's
// processes, the persistence folder's bytes, the upstreams' open requests), the V8 heap of the Worker's isolate,
// and the census of what the proxy keeps.
import type { Running } from "../../harness/processes.ts";
import { CLK_TCK, rssKiB, wranglerProcesses } from "../lib/proc.ts";
import { now, short, sleep } from "./clock.ts";
import { folderSize, keptData, type KeptSample } from "./census.ts";
import type { SoakOptions } from "./options.ts";
import type { Upstreams } from "./upstreams.ts";
import { cpuTicks, workerHeap, workerPid, type HeapReading } from "./worker.ts";

export interface Sample {
  /** s since the run started. */
  t: number;
  rssMiB: number;
  storageBytes: number;
  proxyBytes: number;
  /** SQLite files of session objects under --persist-to. */
  objectFiles: number;
  /** Requests each upstream had received and not finished answering. */
  chaosInFlight: number;
  healthyInFlight: number;
  /** Cores the Worker's workerd used since the previous sample; and wrangler's Node process and its proxy workerd. */
  workerdCores: number;
  wranglerCores: number;
  proxyWorkerdCores: number;
}

interface CpuReading {
  t: number;
  ticks: number;
  wrangler: number;
  proxy: number;
}

export class Monitor {
  readonly samples: Sample[] = [];
  readonly heap: HeapReading[] = [];
  readonly kept: KeptSample[] = [];
  private readonly options: SoakOptions;
  private readonly proxy: Running;
  private readonly upstreams: Upstreams;
  private readonly state: string;
  /** The Worker's workerd (found again when it is gone), wrangler's own Node process and its proxy workerd. */
  private pid: number | undefined;
  private readonly wranglerPid: number | undefined;
  private readonly proxyWorkerdPid: number | undefined;
  private lastCpu: CpuReading;
  private counting: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];

  constructor(options: SoakOptions, proxy: Running, upstreams: Upstreams, state: string) {
    this.options = options;
    this.proxy = proxy;
    this.upstreams = upstreams;
    this.state = state;
    const wranglers = wranglerProcesses(proxy.child.pid, proxy.port);
    this.pid = wranglers.worker;
    this.wranglerPid = wranglers.wrangler;
    this.proxyWorkerdPid = wranglers.proxyWorkerd;
    this.lastCpu = { t: 0, ...this.cpu() };
  }

  /** CPU ticks of the Worker's workerd so far. */
  workerTicks(): number {
    return cpuTicks(this.pid);
  }

  private cpu(): Omit<CpuReading, "t"> {
    return { ticks: cpuTicks(this.pid), wrangler: cpuTicks(this.wranglerPid), proxy: cpuTicks(this.proxyWorkerdPid) };
  }

  /**
   * The first readings, then the periodic ones: a sample every `sampleMs`, the heap every `heapMs` until the end
   * of the run (`heapLoop`), the census every `censusMs`.
   */
  async start(): Promise<{ heapLoop: Promise<void> }> {
    const o = this.options;
    await this.sample();
    this.timers.push(setInterval(() => void this.sample(), o.sampleMs));
    await this.readHeap();
    const heapLoop = (async () => {
      for (let at = o.heapMs; at < o.runMs - o.heapMs / 2; at += o.heapMs) {
        await sleep(Math.max(0, at - now()));
        await this.readHeap();
      }
    })();
    await this.census();
    this.timers.push(setInterval(() => void this.census(), o.censusMs));
    return { heapLoop };
  }

  /** Stops the periodic samples and census. */
  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /** Takes a sample, keeps it in `samples` and returns it. */
  async sample(): Promise<Sample> {
    const t = now() / 1000;
    if (this.pid === undefined || rssKiB(this.pid) === 0) this.pid = workerPid(this.proxy);
    const cpu = { t, ...this.cpu() };
    const span = t - this.lastCpu.t;
    const cores = (current: number, before: number) => (span > 0.5 ? (current - before) / CLK_TCK / span : 0);
    const workerdCores = cores(cpu.ticks, this.lastCpu.ticks);
    const wranglerCores = cores(cpu.wrangler, this.lastCpu.wrangler);
    const proxyWorkerdCores = cores(cpu.proxy, this.lastCpu.proxy);
    this.lastCpu = cpu;
    const size = folderSize(this.state);
    const inflight = await this.upstreams.inFlight().catch(() => ({ healthy: Number.NaN, chaos: Number.NaN }));
    const taken: Sample = {
      t,
      workerdCores,
      wranglerCores,
      proxyWorkerdCores,
      chaosInFlight: inflight.chaos,
      healthyInFlight: inflight.healthy,
      rssMiB: (this.pid === undefined ? 0 : rssKiB(this.pid)) / 1024,
      storageBytes: size.bytes,
      proxyBytes: size.proxyBytes,
      objectFiles: size.objectFiles,
    };
    this.samples.push(taken);
    return taken;
  }

  /** Reads the Worker's heap (see workerHeap) into `heap`, when it can be read. */
  async readHeap(): Promise<void> {
    const reading = await workerHeap(this.proxy);
    if (reading) this.heap.push({ t: now() / 1000, ...reading });
  }

  /** Counts what the proxy keeps into `kept`; while a count is under way, waits for that one instead. */
  census(): Promise<void> {
    return (this.counting ??= keptData(this.state, now() / 1000)
      .then((k) => void this.kept.push(k))
      .catch((err: unknown) => console.error(`soak: counting what the proxy keeps failed: ${short(err)}`))
      .finally(() => (this.counting = undefined)));
  }

  /** The readings at the end of the run: a sample, the heap, and a census of its own (after any under way). */
  async endOfRun(): Promise<{ endSample: Sample; keptEndOfRun: KeptSample }> {
    const endSample = await this.sample();
    await this.readHeap();
    await this.counting;
    await this.census();
    return { endSample, keptEndOfRun: this.kept.at(-1)! };
  }
}
