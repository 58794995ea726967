// The era step's shortcut for the commonest request of all: a 2025 session's. The SDK's classifier tries every body
// as a JSON-RPC response first (two failed schema parses, each building its error) before it finds a request; a
// request it would call legacy anyway is recognised here with the one check that passes for it.
import { PROTOCOL_VERSION_META_KEY, isJSONRPCRequest } from "@modelcontextprotocol/server";

/**
 * True only for what `classifyInboundRequest` classifies as legacy: a JSON-RPC request (the SDK's own check) whose
 * params carry no envelope claim (no protocol version in `_meta`), sent with no MCP-Protocol-Version header or a 2025
 * version's (`sessionHeader`, the caller's to say). Anything else (a response, a notification, a batch, a claim, a
 * 2026 header) is the classifier's to read.
 */
export function isPlainSessionRequest(message: unknown, sessionHeader: boolean): boolean {
  if (!sessionHeader || !isJSONRPCRequest(message)) return false;
  const meta = (message.params as { _meta?: unknown } | undefined)?._meta;
  if (meta === undefined) return true;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) && !(PROTOCOL_VERSION_META_KEY in meta);
}
