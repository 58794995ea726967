// The 2025 leg of the MCP fixtures built on the v2 server SDK (harness/modern-upstream.ts, harness/oauth-upstream.ts):
// one sessionful streamable-HTTP transport, with its own server, per session, as a 2025 deployment keeps them.
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport, isInitializeRequest, type AuthInfo, type McpServer } from "@modelcontextprotocol/server";

/** A JSON-RPC error answer with no id, as the SDK's own transport words its refusals. */
export const rpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });

export interface LegacySessions {
  /** Answers a 2025 request: a known session's, or an `initialize` that starts one. */
  handle(request: Request, parsedBody: unknown, authInfo?: AuthInfo): Promise<Response>;
  /** Sessions open right now. */
  readonly size: number;
  /** Ends every open session. */
  closeAll(): Promise<void>;
}

/** `newServer` gets the `initialize` request that starts the session (a fixture may build its server from it). */
export function legacySessions(newServer: (request: Request) => McpServer): LegacySessions {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    async handle(request, parsedBody, authInfo) {
      const extra = { parsedBody, ...(authInfo ? { authInfo } : {}) };
      const sid = request.headers.get("mcp-session-id");
      if (sid) {
        const transport = sessions.get(sid);
        if (!transport) return rpcError(404, -32001, "Session not found");
        return transport.handleRequest(request, extra);
      }
      if (request.method === "POST" && isInitializeRequest(parsedBody)) {
        const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, transport),
          onsessionclosed: (id) => void sessions.delete(id),
        });
        await newServer(request).connect(transport);
        return transport.handleRequest(request, extra);
      }
      return rpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
    },
    get size() {
      return sessions.size;
    },
    async closeAll() {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      sessions.clear();
    },
  };
}
