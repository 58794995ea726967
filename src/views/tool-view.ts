// What a view is: the tools a host sees and the handlers of their calls (meta: discover_tool, use_tool, load_mcp;
// direct: every tool first-class; code: search, describe, execute), written once each and knowing no protocol era.
// The era is an adapter at the session edge: a 2025 session's SDK server (src/session/runtime.ts) or a 2026 object's
// per-request server (src/modern/object-handler.ts) answers tools/list and tools/call by calling the view, and gives
// it an input port (src/views/input-port.ts) for whatever the host must be asked on the way.
import type { CallToolResult, InputRequiredResult, Server, Tool } from "@modelcontextprotocol/server";
import type { FittedCatalog } from "../catalog/budget.ts";
import type { Subject } from "../config/subject.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import type { HostBridge, HostExtra } from "../relay/bridge.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { SessionAudit } from "./call-audit.ts";
import type { SearchEmbedder } from "./semantic-stage.ts";

/** What a tools/call gets: a result, or (2026 era) the round that asks the host for input first. */
export type ToolAnswer = CallToolResult | InputRequiredResult;

/** A tools/call request's params as a view reads them. */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  _meta?: { progressToken?: string | number | undefined } | undefined;
}

/** A tools/list answer: a page of tools, and (2026 era) how long a client may keep it. A type: the SDK's result has an index signature. */
export type ToolListAnswer = { tools: Tool[]; nextCursor?: string; ttlMs?: number };

/** One view of the session's tools. `host` is the context of the host request being answered. */
export interface ToolView {
  /** tools/list; `cursor` pages a long list. */
  list(cursor: string | undefined, host: HostExtra): Promise<ToolListAnswer>;
  /** tools/call of one of the view's tools. */
  call(params: ToolCallParams, host: HostExtra): Promise<ToolAnswer>;
}

/** Who the session is, for log lines. */
export interface SessionIdentity {
  team: string;
  session: string;
  /** Who the session acts for: `t:<token id>` or `u:<user id>` (src/session/state.ts principalOf). */
  principal: string;
}

/** Remembers which upstream's tool result linked which resources (ResourceLinks in src/relay/resource-links.ts). */
export interface ToolResultLinks {
  remember(upstream: string, result: CallToolResult): Promise<void>;
}

/**
 * What a call is, for the session's usage accounting: a discover_tool lookup or search (the code view's describe and
 * search), a load, an upstream tool call, a code-view program run.
 */
export type MetaCallKind = "lookup" | "search" | "load" | "tool" | "execute";

/** The session's usage meter (src/session/usage.ts): told sizes and kinds, never argument or result text to keep. */
export interface UsageRecorder {
  /** A tools/list was served: discover_tool's description and the whole list's tokens (the meter counts the same list once). */
  listed(list: Pick<FittedCatalog, "description" | "tokens">): void;
  /** A call was answered; `answer` is the text a meta-tool sent back (counted later, then dropped), absent for upstream tool calls. */
  called(kind: MetaCallKind, answer?: string): void;
}

/** What an upstream tool call needs of the session: the registry, the way back to the host, who it is, where links go. */
export interface CallSession {
  registry: UpstreamRegistry;
  bridge: HostBridge;
  /** For log lines (spread into them): never anything of `subject`. */
  who: SessionIdentity;
  /**
   * Who the team's policies are decided for (src/config/subject.ts): the token's id and label, or the member's user id,
   * verified email and groups. The latest a request to this object brought, in both eras (a member's groups change at
   * a token refresh while a 2025 session lives; every request to one object is one principal's). Not for log lines
   * or answers: it may hold an email.
   */
  subject: Subject;
  links?: ToolResultLinks | undefined;
  /** Where the session's audit entries go, with its view and era (absent: nothing is audited, as in unit tests). */
  audit?: SessionAudit | undefined;
}

/** What every view is built over: the call's parts, the token counter its list is fitted with, the usage meter. */
export interface ViewSession extends CallSession {
  counter: () => Promise<TokenCounter>;
  /** The team's semantic stage for discover_tool's and the code view's search (absent: off, words only). */
  semantic?: SearchEmbedder | undefined;
  meter?: UsageRecorder | undefined;
}

/** The text a meta-tool answered, for the meter (a round that asks the host has none). */
export function answerText(answer: ToolAnswer): string {
  const content = "content" in answer && Array.isArray(answer.content) ? (answer.content as CallToolResult["content"]) : [];
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/**
 * Serves a view on an SDK server, the same for both eras: a 2025 session's one server, or each 2026 request's. The era
 * is the server the view is given (and the input port it was built with), never a question the view asks.
 */
export function serveView(server: Server, view: ToolView): void {
  server.setRequestHandler("tools/list", (request, host) => view.list(request.params?.cursor, host));
  server.setRequestHandler("tools/call", (request, host) => view.call(request.params, host));
}
