// One call of an upstream tool on the host's behalf, the same in every view (use_tool, a promoted tool, a tool of
// the direct view): the name resolved (its upstream waited for or tried again), progress and cancellation passed
// through, what the upstream sends meanwhile kept on the request's stream, resource links remembered, the call
// logged, and every failure the proxy names an isError result.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { ERROR_META_KEY, ProxyError, UpstreamError, connectUrlOf, reasonLine, toToolResult, type ErrorMeta, type ToolErrorKind } from "../errors.ts";
import { log } from "../log.ts";
import type { HostBridge, HostExtra } from "../forward/bridge.ts";
import { forwardedMeta, hostSignal } from "../forward/bridge.ts";

/** The host request's `_meta` that travels upstream, as call options. */
const metaOf = (extra: HostExtra): { meta?: Record<string, unknown> } => {
  const meta = forwardedMeta(extra);
  return meta ? { meta } : {};
};
import { oneLine, renderUnknownTool } from "../catalog/render.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import type { RequestOptions } from "../upstream/client.ts";

/**
 * A tool failure of the proxy's own that the model can read and act on (protocol failures stay JSON-RPC errors):
 * its kind travels in `_meta` (src/errors.ts, `ERROR_META_KEY`).
 */
export function toolError(kind: ToolErrorKind, text: string, upstream?: string, extra: Pick<ErrorMeta, "connectUrl" | "cause" | "line" | "column"> = {}): CallToolResult {
  const result = toToolResult(new ProxyError(kind, text, upstream));
  Object.assign(result._meta[ERROR_META_KEY], extra);
  return result;
}

export const isResult = (v: unknown): v is CallToolResult =>
  typeof v === "object" && v !== null && "isError" in v && "content" in v;

/** Who the session is, for log lines. */
export interface SessionIdentity {
  team: string;
  session: string;
  /** Who the session acts for: `t:<token id>` or `u:<user id>` (src/session/state.ts principalOf). */
  principal: string;
}

/** Remembers which upstream's tool result linked which resources (ResourceLinks in src/forward/resource-links.ts). */
export interface ToolResultLinks {
  remember(upstream: string, result: CallToolResult): Promise<void>;
}

/** What a call needs of the session. */
export interface CallContext {
  registry: UpstreamRegistry;
  bridge: HostBridge;
  who: SessionIdentity;
  links?: ToolResultLinks | undefined;
}

/** How a view names upstream tools: a host's name resolved, and what is known when it resolves to nothing. */
export interface ToolNames {
  /** The configured upstream a name belongs to, if it names one (so that upstream can be waited for or tried again). */
  serverOf(name: string): string | undefined;
  /** The tool the name calls, among those the session serves now. */
  find(name: string): ExposedTool | undefined;
  /** Every name the session serves now (the closest-names answer). */
  names(): string[];
  /** The answer for a name on a lazy server that is not loaded yet. */
  notLoaded(name: string, server: string): string;
}

/** The meta view's names, the registry's own: `server/tool` in config-file mode, bare in single-MCP mode. */
export function registryNames(registry: UpstreamRegistry, loadTool: string): ToolNames {
  return {
    serverOf: (name) => registry.serverOf(name),
    find: (name) => registry.tools().get(name),
    names: () => [...registry.tools().keys()],
    notLoaded: (name, server) => `Unknown tool: "${name}". The server "${server}" is not loaded yet: call ${loadTool} with mcp_name "${server}" first.`,
  };
}

/** A JSON-RPC progress token of the host's request, if it sent one. */
type ProgressToken = string | number | undefined;

/**
 * What a call takes besides its tool: the arguments, the host request's progress token and context, what cancels it
 * instead of the host request's own cancellation (a parked 2026 call outlives its request), and, for a 2026 host, a
 * 2026 upstream's input_required returned rather than relayed, and the next round of one.
 */
type CallInputs = [
  input: Record<string, unknown>,
  progressToken: ProgressToken,
  extra: HostExtra,
  signal?: AbortSignal,
  rounds?: Pick<RequestOptions, "inputRequired" | "retry">,
];

/** Calls the upstream tool the host's name resolves to. */
export async function callUpstreamTool(ctx: CallContext, naming: ToolNames, toolName: string, ...inputs: CallInputs): Promise<CallToolResult> {
  const target = await findTool(ctx.registry, naming, toolName);
  if (isResult(target)) return target;
  return callFoundTool(ctx, target, toolName, ...inputs);
}

/**
 * `callUpstreamTool` once the name has resolved: the call of exactly this tool (code mode decides consent on the tool
 * it found, and calls that one).
 */
export async function callFoundTool(
  ctx: CallContext,
  target: ExposedTool,
  toolName: string,
  ...[input, progressToken, extra, signal, rounds]: CallInputs
): Promise<CallToolResult> {
  const { registry, bridge, who, links } = ctx;
  // A progress token of the host's travels upstream; the upstream's progress comes back under it.
  const onprogress =
    progressToken === undefined
      ? undefined
      : (p: { progress: number; total?: number; message?: string }) =>
          void extra.mcpReq.notify({ method: "notifications/progress", params: { ...p, progressToken } }).catch(() => {});
  const started = Date.now();
  const done = (outcome: "ok" | "tool_error" | "failed") =>
    log({ event: "tool_call", ...who, upstream: target.upstream, tool: target.tool.name, ms: Date.now() - started, outcome });
  try {
    const result = await bridge.during(target.upstream, extra, (origin) =>
      registry.call(target, input, { signal: signal ?? hostSignal(extra), origin, ...(onprogress ? { onprogress } : {}), ...metaOf(extra), ...rounds }),
    );
    done(result.isError ? "tool_error" : "ok");
    // A resource the result links to and no list claims is routed back to this upstream later.
    await links?.remember(target.upstream, result);
    return result;
  } catch (err) {
    done("failed");
    if (err instanceof UpstreamError) return toToolResult(err, `${toolName} failed: ${err.message}`);
    throw err;
  }
}

/**
 * A tool by the name the host uses, once its upstream is in (an eager upstream still connecting is waited for,
 * within its connect deadline). A tool of an eager upstream that is
 * unavailable in this session sends that upstream one more attempt now (within its reconnect budget) rather than
 * waiting for the background retry; if it still cannot be reached, the answer says so, and why.
 */
export async function findTool(registry: UpstreamRegistry, naming: ToolNames, name: string): Promise<ExposedTool | CallToolResult> {
  // A call waits for its own upstream only: another one that is slow or hangs delays nothing here.
  void registry.ensureEager();
  const server = naming.serverOf(name);
  if (server !== undefined && registry.connecting(server)) await registry.settled(server);
  else if (server === undefined) await registry.ensureEager();
  const found = naming.find(name);
  if (found) return found;
  if (server === undefined || registry.unavailable(server) === undefined) return unknownTool(registry, naming, name, server);
  const { throttled } = await registry.retryNow(server);
  const again = naming.find(name);
  if (again) return again;
  const reason = registry.unavailable(server);
  if (reason === undefined) return unknownTool(registry, naming, name, server);
  const tried = throttled ? `it was not tried again: ${throttled.message}` : "it was just tried again";
  const connectUrl = connectUrlOf(reason);
  return toolError(
    "unavailable",
    `"${name}" cannot be called now: the server "${server}" is unavailable (${reasonLine(reason, oneLine)}); ${tried}. ` +
      "Its tools return to the catalog once it answers.",
    server,
    connectUrl ? { connectUrl } : {},
  );
}

/** Unknown names get the closest known ones; a tool of a server not loaded yet says so. */
function unknownTool(registry: UpstreamRegistry, naming: ToolNames, name: string, server: string | undefined): CallToolResult {
  if (server && registry.loadable().some((spec) => spec.name === server)) {
    return toolError("unknown_tool", naming.notLoaded(name, server), server);
  }
  return toolError("unknown_tool", renderUnknownTool(name, naming.names()));
}
