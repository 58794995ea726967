// A tool by the name the host calls it, as each view names tools (`ToolNames`): its upstream waited for while it
// connects, an unavailable eager upstream tried once more at once, and a name that finds nothing answered with what
// is known (the closest names, a server not loaded yet, why a server is unavailable and where to connect an account).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { oneLine, renderUnknownTool } from "../catalog/render.ts";
import type { Subject } from "../config/subject.ts";
import { toolAccess, type AccessDecision } from "../config/tool-access.ts";
import { reasonLine } from "../lib/upstream-fault.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import { DISCOVER_TOOL } from "./definitions.ts";
import { toolError } from "./tool-errors.ts";

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
  /** The call that finds the tools an unknown name's answer does not suggest (it names the closest few only). */
  findMore?: string;
  /** What a search narrowed to a lazy server that is not loaded yet answers: the call that loads it. */
  lazyServer?(server: string): string;
  /**
   * The `server/tool` of a tool the caller's policies hide that the name would call (src/views/concealed-names.ts),
   * for the audit trail only; absent where the name itself is `server/tool` (the meta view).
   */
  concealed?(name: string): string | undefined;
}

/** The meta view's names, the registry's own: `server/tool` in config-file mode, bare in single-MCP mode. */
export function registryNames(registry: UpstreamRegistry, loadTool: string): ToolNames {
  return {
    serverOf: (name) => registry.serverOf(name),
    find: (name) => registry.tools().get(name),
    names: () => [...registry.tools().keys()],
    findMore: `${DISCOVER_TOOL} with query finds the others`,
    notLoaded: (name, server) => `Unknown tool: "${name}". The server "${server}" is not loaded yet: call ${loadTool} with mcp_name "${server}" first.`,
    lazyServer: (server) => `The server "${server}" is lazy and not loaded yet: call ${loadTool} ${JSON.stringify({ mcp_name: server })}, then search it again.`,
  };
}

/** Whether the caller sees a tool now (its policies decided at each call: the subject may have changed since its catalog was read). */
export type CallerSees = (found: ExposedTool) => boolean;

export const everyTool: CallerSees = () => true;

/** What the caller's policies decide on a tool now: visible, hidden, or each call asking the user (and the rule that decided). */
export type CallerDecides = (found: ExposedTool) => AccessDecision;

const OPEN: AccessDecision = { access: "visible" };

/**
 * The caller's decisions, over the session's config and the object's subject as it is now (its groups may have
 * changed since the catalog was read): the one test of what a caller may do with a tool, at every call of every view.
 */
export function callerDecides(registry: UpstreamRegistry, subject: Subject): CallerDecides {
  return (found) => {
    const access = toolAccess(registry.config, subject);
    return access.open ? OPEN : access.decide({ name: found.exposedName, destructive: found.tool.annotations?.destructiveHint === true });
  };
}

/** Whether the caller sees a tool now (anything but hidden). */
export function callerSees(registry: UpstreamRegistry, subject: Subject): CallerSees {
  const decides = callerDecides(registry, subject);
  return (found) => decides(found).access !== "hidden";
}

/**
 * A tool by the name the host uses, once its upstream is in (an eager upstream still connecting is waited for,
 * within its connect deadline). A tool of an eager upstream that is unavailable in this session sends that upstream
 * one more attempt now (within its reconnect budget) rather than waiting for the background retry; if it still
 * cannot be reached, the answer says so, and why.
 */
export async function findTool(registry: UpstreamRegistry, naming: ToolNames, name: string, sees = everyTool): Promise<ExposedTool | CallToolResult> {
  // A call waits for its own upstream only: another one that is slow or hangs delays nothing here.
  void registry.ensureEager();
  // A server the caller's policies hide whole is no server of this caller's: nothing is waited for or said of it.
  const named = naming.serverOf(name);
  const server = named !== undefined && registry.hidden(named) ? undefined : named;
  if (server !== undefined && registry.connecting(server)) await registry.settled(server);
  else if (server === undefined) await registry.ensureEager();
  const seen = (n: string) => {
    const found = naming.find(n);
    return found && sees(found) ? found : undefined;
  };
  const found = seen(name);
  if (found) return found;
  if (server === undefined || registry.unavailable(server) === undefined) return unknownTool(registry, naming, name, server, seen);
  const { throttled } = await registry.retryNow(server);
  const again = seen(name);
  if (again) return again;
  const failure = registry.failure(server);
  if (failure === undefined) return unknownTool(registry, naming, name, server, seen);
  const tried = throttled ? `it was not tried again: ${throttled.message}` : "it was just tried again";
  const { connectUrl } = failure;
  return toolError(
    "unavailable",
    `"${name}" cannot be called now: the server "${server}" is unavailable (${reasonLine(failure, oneLine)}); ${tried}. ` +
      "Its tools return to the catalog once it answers.",
    server,
    connectUrl ? { connectUrl } : {},
  );
}

/** Unknown names get the closest known ones; a tool of a server not loaded yet says so. */
function unknownTool(registry: UpstreamRegistry, naming: ToolNames, name: string, server: string | undefined, seen: (n: string) => ExposedTool | undefined): CallToolResult {
  if (server && registry.loadable().some((spec) => spec.name === server)) {
    return toolError("unknown_tool", naming.notLoaded(name, server), server);
  }
  return toolError("unknown_tool", renderUnknownTool(name, naming.names().filter((n) => seen(n) !== undefined), naming.findMore));
}

/** A tool found before the call (a program's) that the caller's policies hide now: unknown, named among the tools it sees. */
export function hiddenFound(registry: UpstreamRegistry, name: string, sees: CallerSees): CallToolResult {
  const names = [...registry.tools().values()].filter(sees).map((found) => found.exposedName);
  return toolError("unknown_tool", renderUnknownTool(name, names));
}
