// Event-loop stalls: the moments a process could not run its timers on time (the driver and the upstream process
// each watch their own, to tell a slow answer from a busy or descheduled client).

/** A moment a process's event loop could not run timers on time: when (epoch ms) and for how long. */
export interface Stall {
  at: number;
  ms: number;
}

/** A stall is noted when a 50 ms timer fires more than this late. */
export const STALL_MS = 250;

/** Notes every time a 50 ms timer fires more than STALL_MS late (the process was busy or descheduled). */
export function watchStalls(): { stalls: Stall[]; stop: () => void } {
  const stalls: Stall[] = [];
  let last = Date.now();
  const timer = setInterval(() => {
    const t = Date.now();
    const late = t - last - 50;
    if (late > STALL_MS && stalls.length < 1_000) stalls.push({ at: last + 50, ms: late });
    last = t;
  }, 50);
  timer.unref();
  return { stalls, stop: () => clearInterval(timer) };
}
