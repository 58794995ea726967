// A host that records every notification it receives with the stream that carried it, shared by the workerd and the
// `wrangler dev` tests that count list_changed notifications (each must arrive once per host).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";
import { waitFor } from "./wait.ts";

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

const LIST_CHANGED = /^(get|post) notifications\/(tools|resources|prompts)\/list_changed$/;

/** The same response, with each notification of its SSE body noted as `<stream> <method>`. */
function noting(response: Response, stream: "get" | "post", heard: string[]): Response {
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const decoder = new TextDecoder();
  let pending = "";
  const reader = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      for (let end = pending.indexOf("\n\n"); end >= 0; end = pending.indexOf("\n\n")) {
        const data = pending.slice(0, end).split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("");
        pending = pending.slice(end + 2);
        const message = (data ? JSON.parse(data) : {}) as { id?: unknown; method?: string };
        if (message.method !== undefined && message.id === undefined) heard.push(`${stream} ${message.method}`);
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(reader), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * An SDK client on `url` over `fetch`. With `get` it opens its GET stream by itself after initialize, and this waits
 * until the proxy answered it; without, the GET is refused with 405 ("no stream") before it leaves.
 */
export async function listeningClient(url: string, token: string, get: boolean, fetch: Fetch) {
  const heard: string[] = [];
  let held = false;
  const watched: Fetch = async (input, init) => {
    const method = init?.method ?? "GET";
    if (method === "GET" && !get) return new Response(null, { status: 405 });
    const response = await fetch(input, init);
    if (method === "GET" && response.ok) held = true;
    return noting(response, method === "GET" ? "get" : "post", heard);
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: watched, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "listening-host", version: "1.0.0" });
  await client.connect(transport);
  if (get) expect(await waitFor(() => held, { tries: 250 })).toBe(true);
  /**
   * The list_changed notifications heard since the last call, as `<stream> <method>`, once `expected` of them arrived
   * and a duplicate (which would follow at once, on the other stream) had a bounded chance to arrive too.
   */
  const listChanges = async (expected: number): Promise<string[]> => {
    const changes = () => heard.filter((h) => LIST_CHANGED.test(h));
    expect(await waitFor(() => changes().length >= expected, { tries: 250 })).toBe(true);
    await waitFor(() => changes().length > expected, { tries: 50 });
    const out = changes();
    heard.length = 0;
    return out;
  };
  return { client, heard, listChanges };
}
