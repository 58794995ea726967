// What a request to an upstream repeats, and when: a connect that found no upstream, a forgotten session, a 429
// that fits the timeout, a broken connection when the request is safe to repeat; never a protocol error.
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../lib/errors.ts";
import { describeFault } from "../lib/upstream-fault.ts";
import { backoffDelay, sleep } from "./backoff.ts";
import type { UpstreamClient } from "./client.ts";
import type { ClientPool } from "./pool.ts";

export interface WithClientOptions {
  /**
   * The request may run twice without harm. True by default: reads (catalogs, resources, prompts, completion)
   * are; only a tool call says otherwise, unless the tool is annotated read-only or idempotent.
   */
  safeToRepeat?: boolean;
  signal?: AbortSignal;
}

/** How long a 429's Retry-After may be waited out: within the entry's timeout (a minute when it has none). */
export const retryWindow = (spec: UpstreamSpec): number => (spec.timeout === 0 ? 60_000 : spec.timeout);

/**
 * Runs `use` with the live client of an upstream, connecting it when the session has none, and recovers from
 * what can be recovered without doing anything twice:
 * - connect or initialize failed (nothing reached the upstream): one more try after a jittered backoff;
 * - the upstream forgot our session (404/400 to its id): a new session, and the request once more;
 * - 429 with a Retry-After that fits in the timeout: wait, then once more;
 * - the connection broke mid-request: once more on a new connection if `safeToRepeat`, else an unknown outcome;
 * - an answer that breaks the protocol: reported as it is, the connection not used again.
 * Reconnects per upstream are budgeted (the pool's ReconnectBudget), so a flapping upstream is not stormed.
 */
export async function withClient<T>(
  pool: ClientPool,
  spec: UpstreamSpec,
  use: (client: UpstreamClient) => Promise<T>,
  options: WithClientOptions = {},
): Promise<T> {
  const name = spec.name;
  let repeated = false;
  for (;;) {
    const client = await connectForCall(pool, spec, options.signal);
    try {
      return await use(client);
    } catch (err) {
      if (!(err instanceof UpstreamError) || repeated) throw err;
      const fault = err.fault;
      if (fault.kind === "expired") {
        await pool.dropClient(name, client);
      } else if (fault.kind === "http" && fault.status === 429 && fault.retryAfterMs !== undefined && fault.retryAfterMs <= retryWindow(spec)) {
        await sleep(fault.retryAfterMs, options.signal);
      } else if (fault.kind === "protocol") {
        // The upstream answered, but not in MCP: nothing was lost in transit, so nothing is repeated. The
        // connection may be out of step, so it is not used again.
        await pool.dropClient(name, client);
        throw err;
      } else if (fault.kind === "closed" || fault.kind === "unreachable") {
        await pool.dropClient(name, client);
        if (options.safeToRepeat === false) throw new UpstreamError(name, { kind: "unknown_outcome", detail: describeFault(name, fault) });
      } else {
        throw err;
      }
      repeated = true;
    } finally {
      if (client.closed) pool.forget(name, client);
    }
  }
}

/** The live client, or a new connection: one retry after a backoff when connecting fails for want of the upstream. */
async function connectForCall(pool: ClientPool, spec: UpstreamSpec, signal?: AbortSignal): Promise<UpstreamClient> {
  const live = pool.live(spec.name);
  if (live) return live;
  for (let attempt = 0; ; attempt++) {
    if (!pool.connecting(spec.name) && !pool.budget(spec.name).take()) throw pool.throttled(spec.name);
    try {
      return await pool.client(spec);
    } catch (err) {
      const retryable =
        err instanceof UpstreamError &&
        (err.fault.kind === "unreachable" || err.fault.kind === "closed" || (err.fault.kind === "http" && err.fault.status >= 500));
      if (!retryable || attempt >= 1) throw err;
      await sleep(backoffDelay(attempt), signal);
    }
  }
}
