// Lazy servers loaded for a session without load_mcp, as the direct and code views do: every one still loadable
// when a list is served, or one at the first call of its tools. The loads are the registry's (coalesced, atomic,
// three failures evict), logged as load_mcp's are; a server that arrives after the host was given a list is announced.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { LoadError, toToolResult } from "../lib/errors.ts";
import { log } from "../lib/log.ts";
import type { HostBridge, HostExtra } from "../relay/bridge.ts";
import { arrival, type UpstreamCatalog } from "../catalog/catalog.ts";
import { EAGER_WAIT_MS } from "../upstream/startup.ts";
import { waitAtMost } from "../upstream/backoff.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { beginAudit, thrownOutcome, type SessionAudit } from "./call-audit.ts";
import type { SessionIdentity } from "./tool-view.ts";

/**
 * A load of a lazy server for the session, logged as load_mcp's are: a load that changed something, or a failed
 * attempt. A load_mcp call (`audit` given) is also one entry of the audit trail, whatever its outcome.
 */
export async function loggedLoad(
  registry: UpstreamRegistry,
  who: SessionIdentity,
  name: string,
  audit?: { session: SessionAudit | undefined; host: HostExtra },
): Promise<{ catalog: UpstreamCatalog; changed: boolean }> {
  const started = Date.now();
  const audited = audit && beginAudit(who, audit.session, "load", audit.host, { mcp_name: name });
  try {
    const outcome = await registry.load(name);
    if (outcome.changed) log({ event: "load_mcp", ...who, upstream: name, ms: Date.now() - started, outcome: "ok" });
    await audited?.end(name, "ok", undefined);
    return outcome;
  } catch (err) {
    // A name that is no server to load (a typo, or one already evicted) is answered but not logged.
    if (err instanceof LoadError && err.attempted) {
      log({ event: "load_mcp", ...who, upstream: name, ms: Date.now() - started, outcome: err.catalogChanged ? "evicted" : "failed" });
    }
    // A configured server the caller's policies hide is answered as an unknown one, and recorded as a denial.
    const denied = err instanceof LoadError && err.kind === "unknown_server" && registry.servers.includes(name) && registry.hidden(name);
    await audited?.end(name, denied ? "denied" : thrownOutcome(err, false), undefined);
    throw err;
  }
}

/**
 * Loads lazy servers for the session: every one still loadable at a tools/list, one at the call of its tool.
 * Loads are the registry's (coalesced, atomic, three failures evict). A server that arrives after the host has been
 * given a list is announced, on the stream of the request that loaded it when there is one.
 */
export class LazyLoads {
  readonly #registry: UpstreamRegistry;
  readonly #bridge: HostBridge;
  readonly #who: SessionIdentity;
  /** Set when a tools/list answer is computed: from then on an arrival changes what the host has. */
  listed = false;

  constructor(registry: UpstreamRegistry, bridge: HostBridge, who: SessionIdentity) {
    this.#registry = registry;
    this.#bridge = bridge;
    this.#who = who;
  }

  /** Loads every lazy server not loaded yet, waiting at most EAGER_WAIT_MS (the rest arrive later, announced). */
  all(): Promise<void> {
    const loads = this.#registry.loadable().map((spec) => this.load(spec.name).catch(() => undefined));
    return loads.length === 0 ? Promise.resolve() : waitAtMost(Promise.all(loads), EAGER_WAIT_MS);
  }

  async load(name: string, extra?: HostExtra): Promise<void> {
    const outcome = await loggedLoad(this.#registry, this.#who, name);
    if (outcome.changed && this.listed) await this.#bridge.announce(arrival(outcome.catalog), extra);
  }

  /**
   * Loads `name` if it is a lazy server still loadable (nothing for any other): undefined once it is in, else the
   * failed load as the tool result to answer with (what a call of one of its tools gets).
   */
  async ensure(name: string, extra?: HostExtra): Promise<CallToolResult | undefined> {
    if (!this.#registry.loadable().some((spec) => spec.name === name)) return undefined;
    try {
      await this.load(name, extra);
      return undefined;
    } catch (err) {
      if (err instanceof LoadError) return toToolResult(err);
      throw err;
    }
  }
}
