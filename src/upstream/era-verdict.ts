// Pure: era verdicts and the signs that one is stale. A verdict (what the SDK's negotiation established: `modern` with
// the upstream's `server/discover` result, or `legacy`) is kept between connections (store/era-cache.ts) so a connect
// skips the probe; these rules tell when an upstream's answer proves a kept verdict wrong rather than refusing for
// another reason (auth, rate limits, a bad request), which must never cost a renegotiation.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, type Client, type PriorDiscovery } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../config/validate.ts";

/**
 * A cached era verdict, exactly what the SDK's `connect({ prior })` takes: `modern` with the upstream's
 * `server/discover` result (connecting then costs no round trip), or `legacy` (no probe, straight to `initialize`).
 */
export type PriorVerdict = PriorDiscovery;

/**
 * Where era verdicts are kept between connections (store/era-cache.ts). The client asks before it connects a
 * streamable-HTTP upstream, writes only what a successful negotiation established (never after an auth failure,
 * a 5xx or a timeout: those fail the connect), and drops a verdict the upstream proved stale.
 */
export interface EraCache {
  /** The verdict to supply for this entry, if one is known and young enough to be trusted. */
  get(spec: UpstreamSpec): Promise<PriorVerdict | undefined>;
  put(spec: UpstreamSpec, verdict: PriorVerdict): Promise<void>;
  drop(spec: UpstreamSpec): Promise<void>;
}

/**
 * HTTP statuses that, answering the first request sent on a cached modern verdict, say the verdict is stale: the
 * upstream turned the 2026 request away before running it (a 2025 server wants its session, a 2026 one no longer
 * serves that revision). Not among them: auth (401, 403), a timeout (408), a body too large (413) and rate limits
 * (429), which say nothing about the era.
 */
export const staleStatus = (status: number): boolean => status >= 400 && status < 500 && ![401, 403, 408, 413, 429].includes(status);

/** The JSON-RPC error in the body of an HTTP error, if its body is one. */
export function rpcError(err: SdkHttpError): { code: number; message: string } | undefined {
  if (typeof err.data.text !== "string") return undefined;
  try {
    const body = JSON.parse(err.data.text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code !== "number") return undefined;
    return { code: body.error.code, message: typeof body.error.message === "string" ? body.error.message : "" };
  } catch {
    return undefined;
  }
}

/** The JSON-RPC error code of a failure: a ProtocolError's own, or the one in the body of an HTTP error. */
function rpcCode(err: unknown): number | undefined {
  if (err instanceof ProtocolError) return err.code;
  return err instanceof SdkHttpError ? rpcError(err)?.code : undefined;
}

/**
 * Whether a connect from a cached verdict failed because the verdict is stale. Modern: the SDK refused the stored
 * discover result (no mutual 2026 revision, or a malformed one). Legacy: the upstream answered `initialize` with
 * -32022, as a server that now speaks only 2026 does.
 */
export function staleAtConnect(prior: PriorVerdict, err: unknown): boolean {
  if (prior.kind === "modern") return err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed;
  return rpcCode(err) === ProtocolErrorCode.UnsupportedProtocolVersion;
}

/**
 * JSON-RPC errors only a 2026 server answers a 2026 request with (it understood the request and refused it for
 * what it asked, not for its era): unknown method (404 -32601), bad params or envelope (-32602), a missing client
 * capability (-32021), a header mismatch (-32020). A fresh probe would change none of them.
 */
const MODERN_REFUSALS: ReadonlySet<number> = new Set([ProtocolErrorCode.MethodNotFound, ProtocolErrorCode.InvalidParams, ProtocolErrorCode.MissingRequiredClientCapability, -32020]);

/**
 * Whether the first request on a cached modern verdict was turned away as that era (see staleStatus). `rejected`:
 * one of the link's POSTs got a stale-looking status, which a ProtocolError no longer shows (Link.rejected).
 */
export function staleOnRequest(err: unknown, rejected: boolean): boolean {
  const code = rpcCode(err);
  if (code !== undefined && MODERN_REFUSALS.has(code)) return false;
  if (err instanceof SdkHttpError) return staleStatus(err.status);
  if (err instanceof SdkError) return err.code === SdkErrorCode.EraNegotiationFailed;
  if (err instanceof ProtocolError) return code === ProtocolErrorCode.UnsupportedProtocolVersion || rejected;
  return false;
}

/** The verdict a connected SDK client's negotiation established, if it is one worth keeping. */
export function verdictOf(client: Client): PriorVerdict | undefined {
  const era = client.getProtocolEra();
  const discover = client.getDiscoverResult();
  return era === "modern" && discover ? { kind: "modern", discover } : era === "legacy" ? { kind: "legacy" } : undefined;
}

