// Hosts that speak MCP over plain fetch, for tests that must know which of a host's requests a message arrived on
// (an SDK client hands every server request to one handler, whatever stream carried it). A 2025 session reads each
// call's SSE answer stream itself and answers the requests it finds there; a 2026 host makes raw use_tool rounds.
// Shared by the workerd and the Node test projects (plain TypeScript, no runtime imports).

export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

/** A JSON-RPC message as the tests read it. */
export interface Message {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The `data` of each event of an SSE body, parsed, as the events arrive; `stop` (or `signal`) ends the reading early. */
async function readEvents(body: ReadableStream<Uint8Array>, each: (message: Message) => Promise<"stop" | void>, signal?: AbortSignal): Promise<void> {
  const reader = body.getReader();
  signal?.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      pending += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      for (let end = pending.indexOf("\n\n"); end >= 0; end = pending.indexOf("\n\n")) {
        const data = pending.slice(0, end).split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
        pending = pending.slice(end + 2);
        if (data !== "" && (await each(JSON.parse(data) as Message)) === "stop") return;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** What one call of a raw session got: its answer, and the server requests that came on its own stream. */
export interface RawCall {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  asked: Message[];
}

export interface RawSession {
  sessionId: string;
  /**
   * tools/call `name` with `args`; each server request on this call's answer stream is answered with `answer`'s
   * result (posted back at once), and recorded in `asked`.
   */
  call(name: string, args: Record<string, unknown>, answer: (request: Message) => Record<string, unknown>): Promise<RawCall>;
  /** Opens the session's GET stream; the server requests it carries are recorded in `asked`. Returns its closer. */
  openStream(asked: Message[]): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const VERSION_2025 = "2025-11-25";

/** A 2025-11-25 session at `url`, initialized with `capabilities`. */
export async function rawSession(fetchFn: FetchFn, url: string, token: string, capabilities: Record<string, unknown>): Promise<RawSession> {
  const base = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await fetchFn(url, {
    method: "POST",
    headers: base,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: VERSION_2025, capabilities, clientInfo: { name: "raw-host", version: "1" } } }),
  });
  const sessionId = init.headers.get("mcp-session-id");
  await init.text();
  if (!init.ok || !sessionId) throw new Error(`initialize: HTTP ${init.status}`);
  const headers = { ...base, "mcp-session-id": sessionId, "mcp-protocol-version": VERSION_2025 };
  const post = async (message: unknown) => {
    const res = await fetchFn(url, { method: "POST", headers, body: JSON.stringify(message) });
    await res.text();
    if (!res.ok) throw new Error(`POST: HTTP ${res.status}`);
  };
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  let next = 1;

  return {
    sessionId,
    async call(name, args, answer) {
      const id = next++;
      const res = await fetchFn(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }) });
      const outcome: RawCall = { asked: [] };
      if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
        Object.assign(outcome, (await res.json()) as Message);
        return outcome;
      }
      await readEvents(res.body!, async (message) => {
        if (message.method !== undefined && message.id !== undefined) {
          outcome.asked.push(message);
          await post({ jsonrpc: "2.0", id: message.id, result: answer(message) });
          return;
        }
        if (message.id !== id) return;
        if (message.result) outcome.result = message.result;
        if (message.error) outcome.error = message.error;
        return "stop";
      });
      return outcome;
    },
    async openStream(asked) {
      const res = await fetchFn(url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
      if (!res.ok || !res.body) throw new Error(`GET: HTTP ${res.status}`);
      const stop = new AbortController();
      const reading = readEvents(
        res.body,
        async (message) => {
          if (message.method !== undefined && message.id !== undefined) asked.push(message);
        },
        stop.signal,
      ).catch(() => {});
      return async () => {
        stop.abort();
        await reading;
      };
    },
    async close() {
      await fetchFn(url, { method: "DELETE", headers }).then((r) => r.text()).catch(() => {});
    },
  };
}

const VERSION_2026 = "2026-07-28";

/** One raw 2026-07-28 tools/call of use_tool (a round: `extra` carries inputResponses and requestState). */
export async function modernUseTool(
  fetchFn: FetchFn,
  url: string,
  token: string,
  input: { tool_name: string; tool_input: Record<string, unknown> },
  extra: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = { elicitation: {} },
): Promise<Message> {
  const res = await fetchFn(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION_2026,
      "mcp-method": "tools/call",
      "mcp-name": "use_tool",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "use_tool",
        arguments: input,
        ...extra,
        _meta: { "io.modelcontextprotocol/protocolVersion": VERSION_2026, "io.modelcontextprotocol/clientCapabilities": capabilities },
      },
    }),
  });
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return (await res.json()) as Message;
  let last: Message = {};
  await readEvents(res.body!, async (message) => {
    if (message.id !== undefined && message.method === undefined) {
      last = message;
      return "stop";
    }
  });
  return last;
}

/** The text of a tool result. */
export const resultText = (result: Record<string, unknown> | undefined): string =>
  ((result?.["content"] as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("");
