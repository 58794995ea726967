// The dashboard's probe of a team's upstreams: each eager server connected and its tools listed, all at once, each
// within PROBE_DEADLINE_MS, through the very connect a session uses (upstream-connect.ts: the address policy, the
// team's secrets, its OAuth accounts), then closed. Lazy servers are not probed: a session connects them only when the
// agent loads one, so the page says "lazy, not loaded" rather than open connections nobody asked for. A probe has no
// member: a per_user OAuth server answers `auth_required`, as it does to a team token's session.
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import type { Env } from "../lib/env.ts";
import { UpstreamError, type UpstreamFault } from "../lib/errors.ts";
import { relayedCapabilities } from "../upstream/client.ts";
import { DEFAULT_GATE_LIMITS, FetchGate } from "../upstream/fetch-gate.ts";
import { isLazy } from "../upstream/records.ts";
import { settings } from "../lib/settings.ts";
import { modernHost } from "../relay/bridge.ts";
import type { SessionRecord } from "./state.ts";
import { connectUpstream } from "./upstream-connect.ts";

/** How long one server's connect and tools/list may take before the probe calls it a timeout. */
export const PROBE_DEADLINE_MS = 5_000;

/** What the probe shows of a fault: its kind, and only the parts that cannot carry a secret (an HTTP status, a deadline). */
export interface ProbeFault {
  kind: UpstreamFault["kind"];
  status?: number;
  ms?: number;
}

export type ProbeResult =
  | { server: string; state: "connected"; tools: number; ms: number }
  | { server: string; state: "failing"; fault: ProbeFault; ms: number }
  | { server: string; state: "lazy" };

/** The parts of a fault a page may show. */
export function probeFault(fault: UpstreamFault): ProbeFault {
  if (fault.kind === "http") return { kind: "http", status: fault.status };
  if (fault.kind === "timeout") return { kind: "timeout", ms: fault.ms };
  return { kind: fault.kind };
}

/** The hooks of a probe's clients: a 2026 host's capabilities (so tools are listed as a 2026 list reads them), nothing relayed. */
const probeHooks = () => {
  const host = modernHost();
  return {
    capabilities: () => relayedCapabilities(host.capabilities()),
    relay: async () => {
      throw new Error("a probe relays nothing");
    },
    notify: () => {},
  };
};

async function probeOne(env: Env, record: SessionRecord, spec: UpstreamSpec, deadlineMs: number): Promise<ProbeResult> {
  if (isLazy(spec)) return { server: spec.name, state: "lazy" };
  // A gate of its own per server, as a session has per upstream: the probes never wait for one another.
  const gate = new FetchGate({ ...DEFAULT_GATE_LIMITS, maxResponseBytes: settings(env).maxUpstreamResponseBytes });
  const started = Date.now();
  const signal = AbortSignal.timeout(deadlineMs);
  try {
    const client = await connectUpstream(env, record, spec, { hooks: probeHooks(), gate }, signal);
    try {
      const catalog = await client.readCatalog(signal);
      return { server: spec.name, state: "connected", tools: catalog.tools.length, ms: Date.now() - started };
    } finally {
      void client.close().catch(() => {});
    }
  } catch (err) {
    const fault: ProbeFault = err instanceof UpstreamError ? probeFault(err.fault) : signal.aborted ? { kind: "timeout", ms: deadlineMs } : { kind: "unreachable" };
    return { server: spec.name, state: "failing", fault, ms: Date.now() - started };
  }
}

/** Every configured server of `team`, in config order, probed concurrently. */
export async function probeUpstreams(env: Env, team: string, config: ResolvedConfig, deadlineMs = PROBE_DEADLINE_MS): Promise<ProbeResult[]> {
  const record: SessionRecord = { team, tokenId: "dashboard-probe", sessionId: "dashboard-probe", createdAt: new Date().toISOString(), config };
  return Promise.all(config.upstreams.map((spec) => probeOne(env, record, spec, deadlineMs)));
}
