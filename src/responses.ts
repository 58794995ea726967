// The router's and session object's own answers (not the MCP server's): JSON bodies with plain messages.

/** A JSON-RPC error outside any request context (id null), with its HTTP status. */
export function jsonRpcError(status: number, code: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status, headers });
}

export const REALM = "dynmcp-edge";

/** The one answer for every authentication failure, so team names and tokens cannot be probed. */
export function unauthorized(): Response {
  return Response.json(
    { error: "unauthorized", message: "A valid bearer token for this team is required." },
    { status: 401, headers: { "WWW-Authenticate": `Bearer realm="${REALM}"` } },
  );
}
