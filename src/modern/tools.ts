// The 2026 era's meta-tools at work in a session object: discover_tool answers the live catalog (with a toolset's
// servers: the era's tools/list shows the team's alone, src/modern/tool-list.ts), use_tool calls, and load_mcp loads a
// lazy server into a toolset, whose handle the client passes back (src/http/toolset-handle.ts mints and checks it;
// the router sends each request to the toolset's own object).
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  isInputRequiredResult,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type Server,
} from "@modelcontextprotocol/server";
import { LoadError, errorKindOf, toToolResult } from "../errors.ts";
import { log } from "../log.ts";
import { fitCatalog } from "../catalog/budget.ts";
import type { CatalogView } from "../catalog/catalog.ts";
import { buildListing } from "../catalog/listing.ts";
import { TOOLSET_WORDING, oneLine, type CatalogShape } from "../catalog/render.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import { hostSignal, type HostBridge, type HostExtra } from "../forward/bridge.ts";
import { markedAsFrom } from "../forward/provenance.ts";
import { callUpstreamTool, isResult, registryNames, toolError, type SessionIdentity, type ToolNames, type ToolResultLinks } from "../meta/call.ts";
import { DISCOVER_TOOL, LOAD_MCP, USE_TOOL } from "../meta/definitions.ts";
import { ToolsetDiscoverInput, ToolsetLoadInput, ToolsetUseInput } from "../meta/schemas.ts";
import { detailsAnswer, metered, parseArgs, searchAnswer, type UsageRecorder } from "../meta/tools.ts";
import type { RequestOptions } from "../upstream/client.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import { PARK_TTL_SECONDS, capabilityFor, type ParkedCalls } from "./parked-calls.ts";
import { argumentsDigest, declaredCapabilities as declared, type ParkState } from "./request-state.ts";

/** What the router learned of the request's toolset handle (ROUTE_HEADERS.toolset*). */
export interface ToolsetRoute {
  /** The handle of the toolset this object holds, checked by the router, and when it expires. */
  handle?: { value: string; expiresAt: string };
  /** Why the handle the request carried was refused: the sentence the caller gets. */
  problem?: string;
}

/** Calls waiting for the host's input, and the codec of the state that names them. */
export interface CallInputs {
  parks: ParkedCalls;
  codec: RequestStateCodec<ParkState>;
}

export interface ToolsetParts {
  inputs: CallInputs;
  registry: UpstreamRegistry;
  bridge: HostBridge;
  who: SessionIdentity;
  counter: () => Promise<TokenCounter>;
  links?: ToolResultLinks | undefined;
  meter?: UsageRecorder | undefined;
}

/** The registry's names, with the era's answer for a tool of a server that is not loaded: which load_mcp to make. */
function toolsetNames(registry: UpstreamRegistry, route: ToolsetRoute): ToolNames {
  const names = registryNames(registry, LOAD_MCP);
  return {
    ...names,
    notLoaded: (name, server) => {
      const call = JSON.stringify(route.handle ? { mcp_name: server, toolset: route.handle.value } : { mcp_name: server });
      const then = route.handle ? "then call this again with the same toolset" : "then pass the toolset it returns to use_tool";
      return `Unknown tool: "${name}". Its server "${server}" is not loaded${route.handle ? " in this toolset" : ""}: call ${LOAD_MCP} ${call}, ${then}.`;
    },
  };
}

/** The catalog's structured form: what the text shows, by server (tool names only where the text lists them). */
function structuredCatalog(view: CatalogView, shape: CatalogShape) {
  const servers = view.groups
    .filter((g) => !shape.hidden.has(g.server))
    .map((g) => {
      if (g.state === "unavailable") return { name: g.server, state: g.state, reason: oneLine(g.reason) };
      if (g.state === "connecting") return { name: g.server, state: g.state };
      return shape.detail.get(g.server) === "summary"
        ? { name: g.server, state: g.state, toolCount: g.tools.length }
        : { name: g.server, state: g.state, tools: g.tools.map((t) => t.name) };
    });
  const loadable = view.lazy.filter((s) => !shape.lazyHidden.has(s.name)).map((s) => ({ name: s.name, description: oneLine(s.description) }));
  const hidden = view.groups.length - servers.length + view.lazy.length - loadable.length;
  return { servers, loadable, ...(hidden > 0 ? { more: hidden } : {}) };
}

/** The toolset a request works in, as structured content (absent without a handle). */
const toolsetOf = (route: ToolsetRoute) => (route.handle ? { toolset: route.handle.value, toolsetExpiresAt: route.handle.expiresAt } : {});

/** tools/call of a 2026-era request, on the per-request server. */
export function registerToolsetTools(server: Server, parts: ToolsetParts, route: ToolsetRoute): void {
  const { registry, bridge, who, links, meter } = parts;
  const names = toolsetNames(registry, route);
  server.setRequestHandler("tools/call", metered(registry, meter, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: raw } = request.params;
    registry.retryFailed();
    // A handle the router refused: said before anything else, whatever the tool.
    if (route.problem && typeof raw?.["toolset"] === "string") return toolError("invalid_toolset", route.problem);
    switch (name) {
      case DISCOVER_TOOL: {
        const args = parseArgs(ToolsetDiscoverInput, raw, name);
        if (isResult(args)) return args;
        if (args.query !== undefined) return searchAnswer(registry, { ...args, query: args.query });
        if (args.tool_name !== undefined) return detailsAnswer(registry, names, args.tool_name);
        await registry.ensureEager();
        const view = registry.view();
        const listed = (description: string) => [{ name: DISCOVER_TOOL, description, inputSchema: { type: "object" as const } }];
        const fitted = fitCatalog(view, registry.catalogBudget, listed, await parts.counter(), TOOLSET_WORDING);
        return {
          content: [{ type: "text", text: fitted.description }],
          structuredContent: { ...structuredCatalog(view, fitted.shape), ...toolsetOf(route) },
        };
      }
      case USE_TOOL: {
        const args = parseArgs(ToolsetUseInput, raw, name);
        if (isResult(args)) return args;
        const call: Round = (signal, rounds) =>
          callUpstreamTool({ registry, bridge, who, links }, names, args.tool_name, args.tool_input, request.params._meta?.progressToken, extra, signal, rounds);
        return (await roundOf(parts.inputs, args, extra, call, (tool) => registry.serverOf(tool))) as CallToolResult;
      }
      case LOAD_MCP: {
        const args = parseArgs(ToolsetLoadInput, raw, name);
        if (isResult(args)) return args;
        if (!registry.dynamic) return toolError("unknown_server", `This team has no lazy servers: every tool discover_tool lists is callable with ${USE_TOOL} as it is.`);
        // The router gives every load a toolset: the one passed, or a new one.
        if (!route.handle) return toolError("invalid_toolset", "This request reached no toolset; call load_mcp again.");
        const started = Date.now();
        try {
          const outcome = await registry.load(args.mcp_name);
          if (outcome.changed) log({ event: "load_mcp", ...who, upstream: args.mcp_name, ms: Date.now() - started, outcome: "ok" });
          const listing = buildListing(registry.mode, args.mcp_name, outcome.catalog);
          const answer = { ...listing, ...toolsetOf(route) };
          return { content: [{ type: "text", text: JSON.stringify(answer) }], structuredContent: answer };
        } catch (err) {
          if (!(err instanceof LoadError)) throw err;
          if (err.attempted) {
            log({ event: "load_mcp", ...who, upstream: args.mcp_name, ms: Date.now() - started, outcome: err.catalogChanged ? "evicted" : "failed" });
          }
          // Failures count per toolset (three strikes evict): a retry must name the same one.
          const retry = err.kind === "load_failed" ? ` To try again, call ${LOAD_MCP} with toolset "${route.handle.value}".` : "";
          const result = toToolResult(err, err.message + retry);
          return err.kind === "load_failed" ? { ...result, structuredContent: toolsetOf(route) } : result;
        }
      }
      default: {
        return toolError("unknown_tool", `Unknown tool: "${name}". This server offers ${DISCOVER_TOOL}, ${USE_TOOL} and ${LOAD_MCP}; upstream tools are called through ${USE_TOOL}.`);
      }
    }
  }));
}

/** What a round of a 2026 host's use_tool asks of the upstream call (src/meta/call.ts). */
type Round = (signal: AbortSignal | undefined, rounds: Pick<RequestOptions, "inputRequired" | "retry">) => Promise<CallToolResult>;

/** -32021 when an input request needs a capability this host request did not declare. */
function requireCapabilities(extra: HostExtra, requests: Record<string, { method: string }>, abandon: (why: string) => void): void {
  const caps = declared(extra) ?? {};
  for (const request of Object.values(requests)) {
    const need = capabilityFor(request.method);
    if (need && caps[need] === undefined) {
      abandon(`the host did not declare the ${need} capability`);
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { [need]: {} } },
        `The tool asks for ${request.method}, which needs the ${need} client capability this request did not declare.`,
      );
    }
  }
}

/**
 * One round of a use_tool that may need the host's input. A first call starts the upstream call. A 2026 upstream's
 * `input_required` comes back as the result and is passed on, its state carried inside ours (`u`, `s`): the next
 * round calls the upstream again with the host's answers. A 2025 upstream's request for input parks the call here
 * (`c`): the next round hands it the answers and waits for what comes next. Each round ends with the result, or
 * with `input_required` naming what the upstream asks.
 */
async function roundOf(
  inputs: CallInputs,
  args: { tool_name: string; tool_input: Record<string, unknown> },
  extra: HostExtra,
  call: Round,
  upstreamOf: (tool: string) => string | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  const { parks, codec } = inputs;
  const digest = await argumentsDigest(args.tool_input);
  const state = extra.mcpReq.requestState<ParkState>();
  if (state !== undefined && (typeof state !== "object" || state.t !== args.tool_name || state.d !== digest)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState belongs to another call: retry with the same tool_name and tool_input.");
  }
  let callId: string;
  if (state?.c !== undefined) {
    if (!parks.resume(state.c, extra.mcpReq.inputResponses ?? {})) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `The call this requestState names is over (answered, timed out after ${PARK_MINUTES} minutes, or the proxy restarted); the upstream had begun it, so it may have run in part: check before you call the tool again.`,
      );
    }
    callId = state.c;
  } else {
    if (state !== undefined && (state.n === undefined || !parks.spend(state.n))) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState was already used: each round's state is good for one retry.");
    }
    // The member was asked to connect an account: a decline ends the call here; otherwise it is made afresh.
    if (state?.k === 1 && (extra.mcpReq.inputResponses?.[CONNECT_INPUT] as { action?: string } | undefined)?.action !== "accept") {
      return toolError("unavailable", `The user did not connect an account, so ${args.tool_name} was not called.`, upstreamOf(args.tool_name));
    }
    // A first call, or the next round of a 2026 upstream's own: its answers and its state go with the call.
    const retry =
      state === undefined || state.k === 1 ? undefined : { inputResponses: extra.mcpReq.inputResponses ?? {}, ...(state.s === undefined ? {} : { requestState: state.s }) };
    callId = parks.start(extra, (signal) => call(signal, { inputRequired: "return", ...(retry ? { retry } : {}) }));
  }
  const turn = await parks.next(callId, hostSignal(extra));
  if (!turn) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "The call this requestState names is already being resumed by another request.");
  if (turn.kind === "result") {
    if (!isInputRequiredResult(turn.result)) {
      // An OAuth upstream without the member's account: a host that takes URL-mode input is asked to open the link.
      const url = errorKindOf(turn.result)?.connectUrl;
      if (url === undefined || declared(extra)?.elicitation?.url === undefined) return turn.result;
      const message = `Connect your account to ${upstreamOf(args.tool_name) ?? "this server"} to call ${args.tool_name}: open the link, sign in, then continue.`;
      return {
        resultType: "input_required",
        inputRequests: { [CONNECT_INPUT]: inputRequired.elicitUrl({ message, url }) },
        requestState: await codec.mint({ t: args.tool_name, d: digest, n: crypto.randomUUID(), k: 1 }, extra),
      } as InputRequiredResult;
    }
    // A 2026 upstream asks: its requests go to the host marked as its own (forward/provenance.ts), its state inside ours.
    const asked = turn.result as InputRequiredResult;
    const upstream = upstreamOf(args.tool_name) ?? "";
    const requests = Object.fromEntries(
      Object.entries((asked.inputRequests ?? {}) as Record<string, { method: string; params?: Record<string, unknown> }>).map(([key, request]) => [key, markedAsFrom(upstream, request)]),
    );
    requireCapabilities(extra, requests, () => {});
    const payload: ParkState = { u: upstream, t: args.tool_name, d: digest, n: crypto.randomUUID(), ...(asked.requestState === undefined ? {} : { s: asked.requestState }) };
    return { resultType: "input_required", ...(asked.inputRequests ? { inputRequests: requests } : {}), requestState: await codec.mint(payload, extra) } as InputRequiredResult;
  }
  requireCapabilities(extra, turn.requests, (why) => parks.abandon(callId, why));
  const requestState = await codec.mint({ c: callId, t: args.tool_name, d: digest }, extra);
  return { resultType: "input_required", inputRequests: turn.requests, requestState } as InputRequiredResult;
}

const PARK_MINUTES = PARK_TTL_SECONDS / 60;
/** The key of the URL-mode input request that asks a member to connect an OAuth upstream account. */
const CONNECT_INPUT = "connect_account";
