// What the views' unit tests share: a real registry and real upstream clients over an in-test 2025 upstream (its
// fetch answers here), whose tool `ask` asks the host for input in the middle of its call, as a 2025 upstream does
// (an elicitation request on the call's SSE answer stream, the answer POSTed back); the two eras' bridges and input
// ports; and host requests. The host request contexts are fakes of the SDK's (`ServerContext`): they record what is
// sent on their streams and carry what a 2026 retry carries; the SDK's own are used in test/workers.
import { CLIENT_CAPABILITIES_META_KEY, type RequestStateCodec, type Result } from "@modelcontextprotocol/server";
import type { ResolvedConfig, UpstreamSpec } from "../../src/config/validate.ts";
import { HostBridge, modernHost, type BridgeHost, type HostExtra } from "../../src/relay/bridge.ts";
import type { ViewSession } from "../../src/views/tool-view.ts";
import { roundsInput } from "../../src/modern/host-rounds.ts";
import { ParkedCalls } from "../../src/modern/parked-calls.ts";
import { requestStateCodec, type ParkState } from "../../src/modern/request-state.ts";
import { elicitationInput } from "../../src/session/elicitation-input.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import type { RegistryStore, UpstreamRecord } from "../../src/upstream/records.ts";
import { UpstreamRegistry } from "../../src/upstream/registry.ts";

type Message = { jsonrpc: "2.0"; id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown };

/** What an in-test upstream was sent: every tools/call's params, and the answers its questions got. */
export interface UpstreamLog {
  calls: Array<Record<string, unknown>>;
  answers: unknown[];
}

const TOOLS = [
  { name: "echo", description: "Answers its arguments.", inputSchema: { type: "object" } },
  { name: "ask", description: "Asks the user, then answers what they said.", inputSchema: { type: "object" } },
];

/** An SSE answer stream carrying `messages`. */
const sse = (messages: unknown[]) =>
  new Response(messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });

const json = (body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...headers } });

/** A 2025 upstream: `echo` answers its arguments as JSON; `ask` sends an elicitation on its answer stream first. */
export function inTestUpstream(): { fetch: FetchLike; log: UpstreamLog } {
  const log: UpstreamLog = { calls: [], answers: [] };
  const waiting = new Map<string, (result: unknown) => void>();
  let asked = 0;
  const fetch: FetchLike = async (_input, init) => {
    const verb = (init?.method ?? "GET").toUpperCase();
    if (verb !== "POST") return new Response(null, { status: verb === "GET" ? 405 : 200 });
    const message = JSON.parse(String(init?.body)) as Message;
    if (message.method === undefined && message.id !== undefined) {
      waiting.get(String(message.id))?.(message.result);
      return new Response(null, { status: 202 });
    }
    if (message.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown, headers: Record<string, string> = {}) => json({ jsonrpc: "2.0", id: message.id, result }, headers);
    if (message.method === "initialize") {
      return reply({ protocolVersion: message.params?.["protocolVersion"], capabilities: { tools: {} }, serverInfo: { name: "in-test", version: "1" } }, { "mcp-session-id": "s1" });
    }
    if (message.method === "tools/list") return reply({ tools: TOOLS });
    if (message.method !== "tools/call") return json({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } });
    log.calls.push(message.params ?? {});
    const name = message.params?.["name"];
    const echoed = { content: [{ type: "text", text: JSON.stringify(message.params?.["arguments"] ?? {}) }] };
    const progressToken = (message.params?.["_meta"] as { progressToken?: unknown } | undefined)?.progressToken;
    if (name !== "ask" && progressToken === undefined) return reply(echoed);
    if (name !== "ask") {
      const progress = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: 1, total: 2 } };
      return sse([progress, { jsonrpc: "2.0", id: message.id, result: echoed }]);
    }
    const questionId = `q${++asked}`;
    const answered = new Promise<unknown>((resolve) => waiting.set(questionId, resolve));
    const question = { jsonrpc: "2.0", id: questionId, method: "elicitation/create", params: { mode: "form", message: "Go on?", requestedSchema: { type: "object", properties: {} } } };
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(question)}\n\n`));
        const answer = await answered;
        log.answers.push(answer);
        const result = { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: `answered ${JSON.stringify(answer)}` }] } };
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(result)}\n\n`));
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
  return { fetch, log };
}

const spec = (name: string, over: Partial<UpstreamSpec> = {}): UpstreamSpec =>
  ({ name, transport: "http", url: `https://${name}.example/mcp`, headers: {}, timeout: 5_000, ...over }) as UpstreamSpec;

function memoryStore(): RegistryStore {
  const records = new Map<string, UpstreamRecord>();
  return { all: async () => new Map(records), put: async (name, record) => void records.set(name, record) };
}

/**
 * A session's view parts over one eager upstream `notes` (and a lazy `later`, with the same tools), on `bridge`.
 * `config`: more of the team's config (its policies, its approval keys); the session acts for the token `tok`.
 */
export async function viewSession(
  bridge: HostBridge,
  options: { promote?: string[]; lazy?: boolean; config?: Partial<ResolvedConfig> } = {},
): Promise<ViewSession & { log: UpstreamLog }> {
  const { fetch, log } = inTestUpstream();
  const upstreams = [spec("notes"), ...(options.lazy ? [spec("later", { description: "Loaded when asked." })] : [])];
  const config = { mode: "multi", upstreams, ...(options.promote ? { promote: options.promote } : {}), ...options.config } as ResolvedConfig;
  const registry = new UpstreamRegistry(config, memoryStore(), {
    connect: (s, signal) => UpstreamClient.connect(s, {}, { fetch, clientInfo: { name: "test", version: "1" }, hooks: bridge }, signal),
  });
  await registry.restore();
  const who = { team: "t", session: "s", principal: "t:tok" };
  const counter = async () => {
    throw new Error("no token counter in these tests");
  };
  return { registry, bridge, who, subject: { kind: "token", id: "tok" }, counter, log };
}

/** A host request: what its stream was sent, and how it answers an elicitation (2025). */
export interface HostRequest {
  extra: HostExtra;
  sent: Array<{ method: string; params?: Record<string, unknown> }>;
}

/** A 2025 host request whose elicitations are answered `answer`. */
export function sessionRequest(answer: Result = { action: "accept", content: { allow: true } }): HostRequest {
  const sent: HostRequest["sent"] = [];
  const extra = {
    mcpReq: {
      method: "tools/call",
      signal: new AbortController().signal,
      send: async (message: { method: string; params?: Record<string, unknown> }) => {
        sent.push(message);
        return answer;
      },
      notify: async (message: { method: string; params?: Record<string, unknown> }) => void sent.push(message),
      requestState: () => undefined,
    },
  } as unknown as HostExtra;
  return { extra, sent };
}

/** The 2025 era: a host that declared elicitation at initialize (or the `capabilities` given), and the session's input port. */
export function sessionEra(capabilities: Record<string, unknown> = { elicitation: {} }) {
  const host: BridgeHost = {
    capabilities: () => capabilities,
    request: async () => ({}),
    notification: async () => {},
    perRequestLogs: false,
  };
  const bridge = new HostBridge(host, "multi");
  return { bridge, input: elicitationInput(bridge) };
}

/** The 2026 era: parked calls, the object's codecs, a bridge that parks, and the era's input port. */
export async function roundsEra() {
  const parks = new ParkedCalls();
  const owner = { team: "t", tokenId: "tok" };
  const codec = await requestStateCodec("unit-test-session-key-not-secret", owner);
  const viewCodec = await requestStateCodec("unit-test-session-key-not-secret", owner, 3600);
  const bridge = new HostBridge(modernHost((extra, message) => parks.park(extra, message)), "multi");
  return { bridge, parks, codec, input: roundsInput({ parks, codec, viewCodec: async () => viewCodec }) };
}

/**
 * A 2026 host request declaring form elicitation (or the `capabilities` given): a first one, or a retry carrying
 * `state` (verified with `codec`, as the SDK does before any handler runs) and the host's `answers`.
 */
export async function roundRequest(
  retry?: { state: string; answers: Record<string, unknown>; codec: RequestStateCodec<ParkState> },
  capabilities: Record<string, unknown> = { elicitation: { form: {} } },
): Promise<HostRequest> {
  const sent: HostRequest["sent"] = [];
  const base = {
    method: "tools/call",
    signal: new AbortController().signal,
    envelope: { [CLIENT_CAPABILITIES_META_KEY]: capabilities },
    send: async () => {
      throw new Error("a 2026 request has no stream to ask on");
    },
    notify: async (message: { method: string; params?: Record<string, unknown> }) => void sent.push(message),
  };
  const verified = retry ? await retry.codec.verify(retry.state, { mcpReq: base } as unknown as HostExtra) : undefined;
  const extra = { mcpReq: { ...base, requestState: () => verified, inputResponses: retry?.answers } } as unknown as HostExtra;
  return { extra, sent };
}
