// The era step's shortcut for the commonest request of all: a 2025 session's. The SDK's classifier tries every body
// as a JSON-RPC response first (two failed schema parses, each building its error) before it finds a request; a
// request it would call legacy anyway is recognised here. Its shape is checked by hand (the router has already
// parsed the body and knows it is a JSON-RPC object); a request whose params carry `_meta` takes the SDK's own
// schema check, since `_meta`'s keys (a progress token, an envelope claim) are the SDK's to judge.
import { PROTOCOL_VERSION_META_KEY, isJSONRPCRequest } from "@modelcontextprotocol/server";

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * True only for what `classifyInboundRequest` classifies as legacy: a JSON-RPC request whose params carry no envelope
 * claim (no protocol version in `_meta`), sent with no MCP-Protocol-Version header or a 2025 version's
 * (`sessionHeader`, the caller's to say). Anything else (a response, a notification, a batch, a claim, a 2026 header)
 * is the classifier's to read.
 */
export function isPlainSessionRequest(message: unknown, sessionHeader: boolean): boolean {
  if (!sessionHeader || !isPlainObject(message) || message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  const { id, params } = message;
  // The SDK's request id: a string or an integer.
  if (typeof id !== "string" && !Number.isInteger(id)) return false;
  if (params === undefined) return true;
  if (!isPlainObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  return isJSONRPCRequest(message) && isPlainObject(meta) && !(PROTOCOL_VERSION_META_KEY in meta);
}
