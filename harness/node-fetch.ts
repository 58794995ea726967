// node:http ↔ fetch for the MCP fixtures built on the SDK's web-standard handlers (harness/modern-upstream.ts,
// harness/oauth-upstream.ts): a Node request as a `Request`, a `Response` written back as it streams, and the
// JSON-RPC methods a POST body names. Node only.
import type { IncomingMessage, ServerResponse } from "node:http";

/** The Node request as a fetch `Request` (at `url`, or its own Host and path). */
export function toRequest(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal, url?: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const init: RequestInit = { method: req.method ?? "GET", headers, signal };
  if (body !== undefined) init.body = new Uint8Array(body);
  return new Request(url ?? new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`), init);
}

/** Writes the status and headers, then the body chunk by chunk as it comes (SSE answers stream). */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const seen = headers[name];
    headers[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  // An SSE stream may stay quiet for long: its status and headers go out now, not with its first event.
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
    }
  } catch {
    // The client went away, or the handler's stream broke: end what was sent.
  }
  res.end();
}

/** The JSON-RPC methods a POST body names (a batch names several; a response or garbage none). */
export function rpcMethods(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const method = typeof m === "object" && m !== null ? (m as { method?: unknown }).method : undefined;
    return typeof method === "string" ? [method] : [];
  });
}
