// The 2026 era's handler inside a session object (a principal's, a toolset's, or a principal's code object): per
// request, a fresh server over the object's long-lived upstream registry, with the meta-tools and their tools/list
// (or the code view's tools), resources, prompts and completion. The request's toolset, as the router checked it,
// comes in route headers.
import type { McpHttpHandler, Server } from "@modelcontextprotocol/server";
import { ROUTE_HEADERS } from "../env.ts";
import { registerCompletion } from "../forward/completion.ts";
import { registerPrompts } from "../forward/prompts.ts";
import type { ResourceLinks } from "../forward/resource-links.ts";
import { registerResources } from "../forward/resources.ts";
import { modernHandler, modernServer } from "./server.ts";
import { ModernToolList } from "./tool-list.ts";
import { registerToolsetTools, type ToolsetParts, type ToolsetRoute } from "./tools.ts";

/** The toolset the router found for this request (its headers are the router's alone: client copies are dropped). */
export function toolsetRoute(request: Request | undefined): ToolsetRoute {
  const headers = request?.headers;
  const value = headers?.get(ROUTE_HEADERS.toolset);
  const expiresAt = headers?.get(ROUTE_HEADERS.toolsetExpires);
  const problem = headers?.get(ROUTE_HEADERS.toolsetProblem);
  return {
    ...(value && expiresAt ? { handle: { value, expiresAt } } : {}),
    ...(problem ? { problem } : {}),
  };
}

/**
 * `tools`: the code view's tools (src/code/tools.ts) in place of the meta-tools, for a principal's code object; its
 * tools/list replaces the meta-tools' one.
 */
export function objectHandler(
  parts: ToolsetParts & { links?: ResourceLinks | undefined },
  handleLifetimeSeconds: number,
  tools?: (server: Server) => void,
): McpHttpHandler {
  // 2026-era clients have no resources/subscribe: nothing is ever added to this set.
  const noSubscriptions = new Set<string>();
  // The meta-tools' list lives as long as the object (remembered while what it shows is unchanged).
  const list = tools ? undefined : new ModernToolList(parts.registry, parts.counter, handleLifetimeSeconds, parts.meter);
  return modernHandler((request) => {
    const server = modernServer((state, ctx) => parts.inputs.codec.verify(state, ctx));
    if (list) {
      server.setRequestHandler("tools/list", () => list.list());
      registerToolsetTools(server, parts, toolsetRoute(request));
    } else tools?.(server);
    registerResources(server, parts.registry, parts.bridge, noSubscriptions, parts.links, false);
    registerPrompts(server, parts.registry, parts.bridge);
    registerCompletion(server, parts.registry, parts.bridge, parts.links);
    return server;
  }, "sse");
}
