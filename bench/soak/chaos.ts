// The chaos upstream's schedule: the kinds of misbehaviour (what each does and what the proxy promises the host
// sees), their order, and the loop that switches each on for its window and off for the calm after it.
import type { Fault } from "../../harness/replay-server.ts";
import { ms } from "../lib/results.ts";
import { now, sleep } from "./clock.ts";
import type { SoakOptions } from "./options.ts";
import type { Upstreams } from "./upstreams.ts";

export interface PhaseSpec {
  name: string;
  /** What the chaos upstream does during the phase, for the report. */
  what: string;
  faults?: Record<string, Fault>;
  control?: "down" | "forget";
  /** What the proxy promises the host sees (issue 7, docs). */
  expect: string;
}

/** One phase as it ran: ms since the run started. */
export interface ChaosWindow {
  spec: PhaseSpec;
  start: number;
  end: number;
}

/** The forget phase: the chaos upstream forgets its sessions every `everyMs`. */
const forgetPhase = (everyMs: number): PhaseSpec => ({
  name: "forget",
  what: `forgets all its sessions every ${everyMs / 1000} s (404 to known session ids)`,
  control: "forget",
  expect: "a new upstream session and the call once more, invisible to the host; a call whose new session is forgotten too before the retry lands is reported as expired",
});

/** The other kinds of misbehaviour, in the order they follow the forget phase. */
const OTHER_PHASES: readonly PhaseSpec[] = [
  {
    name: "rpc-error",
    what: "answers every tools/call with JSON-RPC error -32603",
    faults: { "tools/call": { kind: "rpc-error", code: -32603, message: "chaos: internal error" } },
    expect: "the upstream's error as an isError result naming the server, at once",
  },
  {
    name: "http-503",
    what: "answers every request with HTTP 503",
    faults: { "*": { kind: "http", status: 503, body: "Service Unavailable" } },
    expect: "HTTP 503 as an isError result, at once; sessions that start now list chaos as unavailable, and their calls to its tools try it again at once (within the reconnect budget)",
  },
  {
    name: "429",
    what: "answers tools/call with HTTP 429 and Retry-After: 1",
    faults: { "tools/call": { kind: "raw", status: 429, contentType: "application/json", body: '{"error":"rate limited"}', headers: { "retry-after": "1" } } },
    expect: "one wait of the Retry-After (1 s), one more try, then HTTP 429",
  },
  {
    name: "slow",
    what: "answers tools/call after 1.5 s",
    faults: { "tools/call": { kind: "delay", ms: 1_500 } },
    expect: "every call succeeds, 1.5 s slower; healthy calls unaffected",
  },
  {
    name: "down",
    what: "is down: every connection is dropped",
    control: "down",
    expect: "unreachable (read-only tool, after one reconnect with backoff) or unknown outcome (create_entities); throttled once a session's reconnect budget (10, given back one every 6 s) is spent; sessions that start now list chaos as unavailable, and their calls to its tools try it again at once (within the reconnect budget)",
  },
  {
    name: "sse-cut",
    what: "cuts every tools/call answer stream in the middle",
    faults: { "tools/call": { kind: "sse-cut" } },
    expect: "read_graph tried once more on a new connection (cut again: an error), create_entities reported as unknown outcome, never repeated",
  },
  {
    name: "hang",
    what: "accepts tools/call and never answers",
    faults: { "tools/call": { kind: "hang" } },
    expect: "a timeout after the entry's 4 s, the upstream request cancelled; healthy calls of the same session unaffected",
  },
  {
    name: "wrong-id",
    what: "answers tools/call with the wrong JSON-RPC id",
    faults: { "tools/call": { kind: "wrong-id" } },
    expect: "the stray answer ignored, the call times out after 4 s",
  },
  {
    name: "huge",
    what: "answers the phase's first 20 tools/call with 9 MiB (the proxy's limit is 8 MiB)",
    faults: { "tools/call": { kind: "huge", bytes: 9 * 2 ** 20, times: 20 } },
    expect: "those 20 refused as too large, the session goes on; the other calls succeed",
  },
];

const SMOKE_PHASES = ["down", "rpc-error", "forget"];

/** The phases of a run, in order: as many chaos-and-calm cycles as fit after the warm-up, the kinds taking turns. */
export function schedule(o: SoakOptions): PhaseSpec[] {
  const all = [forgetPhase(o.forgetEveryMs), ...OTHER_PHASES];
  const count = Math.max(1, Math.floor((o.runMs - o.warmMs) / (o.chaosMs + o.calmMs)));
  const pool = o.smoke ? SMOKE_PHASES.map((n) => all.find((p) => p.name === n)!) : all;
  return Array.from({ length: count }, (_, i) => pool[i % pool.length]!);
}

/**
 * Runs the schedule: each phase starts at its time, the chaos upstream misbehaves for `chaosMs`, then behaves until
 * the next. `beforePhase` runs first (collecting the upstreams' counts also resets the replay's per-fault `times`).
 */
export async function runChaos(o: SoakOptions, ups: Upstreams, phases: PhaseSpec[], beforePhase: () => Promise<void>): Promise<ChaosWindow[]> {
  const windows: ChaosWindow[] = [];
  for (let i = 0; i < phases.length; i++) {
    const spec = phases[i]!;
    const at = o.warmMs + i * (o.chaosMs + o.calmMs);
    await sleep(Math.max(0, at - now()));
    await beforePhase();
    const start = now();
    await misbehave(o, ups, spec, at + o.chaosMs);
    await behave(ups, spec);
    const end = now();
    windows.push({ spec, start, end });
    console.log(`soak: ${ms(end / 1000, 0).padStart(4)} s  phase ${spec.name} over (${ms((end - start) / 1000, 1)} s)`);
  }
  return windows;
}

/** Switches the phase's misbehaviour on and keeps it up until `until` (ms since the run started). */
async function misbehave(o: SoakOptions, ups: Upstreams, spec: PhaseSpec, until: number): Promise<void> {
  if (spec.faults) await ups.setFaults(spec.faults);
  if (spec.control === "down") await ups.control(ups.chaosBase, "/__down/chaos");
  if (spec.control === "forget") {
    for (let k = 0; now() < until && k < 1_000; k++) {
      await ups.control(ups.chaosBase, "/__forget/chaos");
      await sleep(Math.min(o.forgetEveryMs, Math.max(0, until - now())));
    }
  }
  await sleep(Math.max(0, until - now()));
}

/** Switches the phase's misbehaviour off. */
async function behave(ups: Upstreams, spec: PhaseSpec): Promise<void> {
  if (spec.faults) await ups.setFaults(null);
  if (spec.control === "down") await ups.control(ups.chaosBase, "/__up/chaos");
}
