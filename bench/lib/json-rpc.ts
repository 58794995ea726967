// The benchmarks' minimal MCP host: raw JSON-RPC over Node's keep-alive fetch (the SDK Client would cost the driver
// more CPU than it measures). A 2025 session: initialize, tool calls, DELETE; each answer read from a JSON or an
// SSE body.

export interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The JSON-RPC answer in a JSON or an SSE body. */
export function parseAnswer(contentType: string, body: string): RpcAnswer {
  if (contentType.includes("text/event-stream")) {
    for (const line of body.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const message = JSON.parse(line.slice(5)) as RpcAnswer & { id?: unknown };
      if (message.id !== undefined) return message;
    }
    throw new Error(`no answer in the event stream: ${body.slice(0, 200)}`);
  }
  return JSON.parse(body) as RpcAnswer;
}

const PROTOCOL = "2025-06-18";
const REQUEST_TIMEOUT_MS = 30_000;

/** One 2025 session of a host, opened with `open`; every method throws on an HTTP or JSON-RPC error. */
export class RawSession {
  readonly #url: string;
  readonly #token: string;
  #session = "";
  #id = 0;

  private constructor(url: string, token: string) {
    this.#url = url;
    this.#token = token;
  }

  /** initialize + notifications/initialized. */
  static async open(url: string, token: string, client = "bench-host"): Promise<RawSession> {
    const session = new RawSession(url, token);
    await session.#post({ jsonrpc: "2.0", id: ++session.#id, method: "initialize", params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: client, version: "1.0.0" } } });
    if (!session.#session) throw new Error("initialize: no session id");
    await session.#post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return session;
  }

  async #post(message: Record<string, unknown>): Promise<RpcAnswer | undefined> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    };
    if (this.#session) Object.assign(headers, { "mcp-session-id": this.#session, "mcp-protocol-version": PROTOCOL });
    const response = await fetch(this.#url, { method: "POST", headers, body: JSON.stringify(message), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const body = await response.text();
    if (!response.ok) throw new Error(`${String(message.method)}: HTTP ${response.status} ${body.slice(0, 200)}`);
    if (!this.#session) this.#session = response.headers.get("mcp-session-id") ?? "";
    if (message.id === undefined) return undefined;
    const answer = parseAnswer(response.headers.get("content-type") ?? "", body);
    if (answer.error) throw new Error(`${String(message.method)}: JSON-RPC ${answer.error.code} ${answer.error.message}`);
    return answer;
  }

  /** A tools/call (`meta` as the request's `_meta`); answers its text, and throws when it is an error or lacks `expect`. */
  async callTool(name: string, args: Record<string, unknown>, expect: string, meta?: Record<string, unknown>): Promise<string> {
    const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
    const answer = await this.#post({ jsonrpc: "2.0", id: ++this.#id, method: "tools/call", params });
    const result = answer?.result as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
    const text = (result?.content ?? []).map((c) => c.text ?? "").join("");
    if (!result || result.isError || !text.includes(expect)) throw new Error(`${name}: unexpected result ${text.slice(0, 200)}`);
    return text;
  }

  /** Ends the session (HTTP DELETE); a failure is ignored, as a host closing would. */
  async close(): Promise<void> {
    await fetch(this.#url, { method: "DELETE", headers: { authorization: `Bearer ${this.#token}`, "mcp-session-id": this.#session, "mcp-protocol-version": PROTOCOL } })
      .then((r) => r.text())
      .catch(() => {});
  }
}
