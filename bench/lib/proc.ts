// Reading Linux's /proc for the benchmarks: a process's parent and CPU ticks, its RSS, its command line, every
// process below it (to find the workerd processes that `wrangler dev` starts), and the machine's busy time.
import { readFileSync, readdirSync } from "node:fs";
import { cpus } from "node:os";

/** Ticks per second of the CPU times in /proc (USER_HZ, 100 on Linux). */
export const CLK_TCK = 100;

/** Cores of this machine: a figure of "cores busy" is read against it. */
export const CORES = cpus().length;

/** Busy ticks of the whole machine (every process, this run's and anyone else's) from /proc/stat. */
export function machineBusyTicks(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return fields.slice(0, 8).reduce((a, b) => a + b, 0) - (fields[3] ?? 0) - (fields[4] ?? 0); // minus idle and iowait
}

/** Parent pid and user+system CPU ticks of a process, or undefined when it is gone. */
export function readStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** Resident memory in KiB (0 when the process is gone). */
export function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
};

/** Every process below `root`, breadth first (bounded). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  const queue = [root];
  for (let guard = 0; queue.length && guard < 10_000; guard++) {
    const pid = queue.shift()!;
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * The processes `wrangler dev` (pid `root`, public port `port`) runs: wrangler itself (its bin script starts
 * wrangler-dist/cli.js in a Node process of its own), its proxy worker on the public port (the workerd with
 * `entry=127.0.0.1:<port>`), and the workerd that runs the Worker and every Durable Object of it (of the other
 * workerd ` serve ` processes, the largest by RSS). Undefined where one is not (or no longer) there.
 */
export function wranglerProcesses(
  root: number | undefined,
  port: number,
): { wrangler: number | undefined; proxyWorkerd: number | undefined; worker: number | undefined } {
  if (root === undefined) return { wrangler: undefined, proxyWorkerd: undefined, worker: undefined };
  const entry = `entry=127.0.0.1:${port}`;
  const tree = [root, ...descendants(root)].map((pid) => ({ pid, args: cmdline(pid) }));
  const workerds = tree.filter((p) => /workerd/.test(p.args));
  const worker = workerds
    .filter((p) => / serve /.test(p.args) && !p.args.includes(entry))
    .map((p) => p.pid)
    .sort((a, b) => rssKiB(b) - rssKiB(a))[0];
  return {
    wrangler: tree.find((p) => /wrangler-dist\/cli\.js/.test(p.args))?.pid,
    proxyWorkerd: workerds.find((p) => p.args.includes(entry))?.pid,
    worker,
  };
}
