// The 2026 era's adapter inside a session object (a principal's, a toolset's, or a principal's code object): per
// request, a fresh server over the object's long-lived upstream registry, serving a view (the meta view with the
// request's toolset as its scope, or the code view) with the era's input port (`input_required` rounds:
// src/modern/host-rounds.ts), and resources, prompts and completion. The request's toolset, as the router checked it,
// comes in route headers.
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import { ROUTE_HEADERS } from "../lib/env.ts";
import { registerCompletion } from "../relay/completion.ts";
import { registerPrompts } from "../relay/prompts.ts";
import type { ResourceLinks } from "../relay/resource-links.ts";
import { registerResources } from "../relay/resources.ts";
import type { InputPort } from "../views/input-port.ts";
import { metaView } from "../views/meta-view.ts";
import { serveView, type ToolView, type ViewSession } from "../views/tool-view.ts";
import { roundsInput, type RoundParts } from "./host-rounds.ts";
import { modernHandler, modernServer } from "./server.ts";
import { ModernToolList } from "./tool-list.ts";
import { toolsetScope, type ToolsetRoute } from "./toolset-scope.ts";

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

/** What an object's handler serves over: the session's parts and where its rounds are kept. */
export interface ModernObjectParts extends ViewSession {
  links?: ResourceLinks | undefined;
  rounds: RoundParts;
  /** How long a toolset handle lives (load_mcp's description says so). */
  handleLifetimeSeconds: number;
}

/** The meta view of each request: its toolset as the scope, over one list the object keeps (remembered while unchanged). */
function metaViews(parts: ModernObjectParts, rounds: InputPort): (request: Request | undefined) => ToolView {
  const list = new ModernToolList(parts.registry, parts.counter, parts.handleLifetimeSeconds, parts.meter);
  return (request) => metaView(parts, toolsetScope(parts, () => list.list(), toolsetRoute(request)), rounds);
}

/** `code`: the code view over this object's registry (a principal's code object), served in place of the meta view. */
export function objectHandler(parts: ModernObjectParts, code?: (rounds: InputPort) => ToolView): McpHttpHandler {
  // 2026-era clients have no resources/subscribe: nothing is ever added to this set.
  const noSubscriptions = new Set<string>();
  const rounds = roundsInput(parts.rounds);
  const codeView = code?.(rounds);
  const viewOf = codeView ? () => codeView : metaViews(parts, rounds);
  return modernHandler((request) => {
    const server = modernServer((state, ctx) => parts.rounds.codec.verify(state, ctx));
    serveView(server, viewOf(request));
    registerResources(server, parts.registry, parts.bridge, noSubscriptions, parts.links, false);
    registerPrompts(server, parts.registry, parts.bridge);
    registerCompletion(server, parts.registry, parts.bridge, parts.links);
    return server;
  }, "sse");
}
