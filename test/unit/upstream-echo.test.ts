// An upstream that tells back the headers it was sent (harness/echo-upstream.ts), met by the upstream client itself:
// in both eras over streamable HTTP (a 2026 upstream answers mostly JSON, a 2025 session SSE), and over the older
// HTTP+SSE transport. Whatever the client hands on (catalog, results, errors, relayed requests, notifications, the
// era verdict it stores) holds the team's secrets, and an OAuth upstream's access token, only as `[withheld]`, in
// none of the forms the fixture uses.
import { afterEach, describe, expect, it } from "vitest";
import type { JSONRPCMessage, Notification, Request as McpRequest } from "@modelcontextprotocol/client";
import { echoServer, startEchoUpstream } from "../../harness/echo-upstream.ts";
import type { ModernUpstream } from "../../harness/modern-upstream.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { UpstreamError } from "../../src/lib/errors.ts";
import { kvEraCache } from "../../src/store/era-cache.ts";
import type { KvEntry, KvLike } from "../../src/store/kv.ts";
import { UpstreamClient, type UpstreamHooks } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import { WITHHELD } from "../../src/upstream/withheld.ts";
import { leaksIn } from "../shared/echo-tour.ts";

/** The team's secrets as the config names them: an API key, and a bearer token (its scheme is not secret). */
const API_KEY = "sk-echo+key/0123456789abcdef";
const BEARER = "tok-echo-fedcba9876543210";
const HEADERS = { "X-Api-Key": API_KEY, Authorization: `Bearer ${BEARER}`, "X-Region": "eu-west-1" };

function memoryKv(): KvLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: async (key) => data.get(key) ?? null,
    put: async (key, value) => void data.set(key, value),
    delete: async (key) => void data.delete(key),
    list: async (prefix): Promise<KvEntry[]> => [...data.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })),
  };
}

const spec = (url: string, over: Partial<UpstreamSpec> = {}): UpstreamSpec =>
  ({ name: "up", transport: "streamable-http", url, headers: {}, timeout: 5_000, ...over }) as UpstreamSpec;

/** A host that answers every question and keeps everything it is sent. */
function recordingHooks(seen: string[]): UpstreamHooks {
  return {
    capabilities: () => ({ elicitation: {}, sampling: {} }),
    relay: async (_upstream, request: McpRequest) => {
      seen.push(JSON.stringify(request));
      if (request.method === "sampling/createMessage") return { role: "assistant", content: { type: "text", text: "fine" }, model: "m" };
      return { action: "accept", content: { ok: true } };
    },
    notify: (_upstream, notification: Notification) => void seen.push(JSON.stringify(notification)),
  };
}

/** Everything a client says of the fixture, through every method it has: answers, and failures as their message. */
async function tour(client: UpstreamClient, seen: string[]): Promise<void> {
  const keep = async (work: Promise<unknown>) => {
    try {
      seen.push(JSON.stringify(await work));
    } catch (err) {
      seen.push(err instanceof UpstreamError ? `${err.message} ${JSON.stringify(err.fault)}` : String(err));
    }
  };
  await keep(client.readCatalog());
  for (const tool of ["echo_headers", "echo_refusal", "echo_failure", "echo_ask"]) await keep(client.callTool(tool, {}));
  await keep(client.callTool("echo_log", {}, { onprogress: (p) => void seen.push(JSON.stringify(p)) }));
  await keep(client.request({ method: "logging/setLevel", params: { level: "debug" } }));
  await keep(client.callTool("echo_log", {}));
  await keep(client.request({ method: "resources/read", params: { uri: "echo://sent" } }));
  await keep(client.request({ method: "resources/read", params: { uri: "echo://broken/x" } }));
  await keep(client.request({ method: "prompts/get", params: { name: "echo_prompt", arguments: { topic: "t" } } }));
  await keep(client.request({ method: "prompts/get", params: { name: "echo_broken" } }));
  await keep(client.request({ method: "completion/complete", params: { ref: { type: "ref/prompt", name: "echo_prompt" }, argument: { name: "topic", value: "" } } }));
}

/** The answers name what the fixture echoed, in its place, and keep what is no credential. */
function expectScrubbed(seen: string[]): void {
  const all = seen.join("\n");
  expect(leaksIn(all, [API_KEY, BEARER])).toEqual([]);
  expect(all).toContain(`x-api-key: ${WITHHELD}`);
  expect(all).toContain(`authorization: Bearer ${WITHHELD}`);
  expect(all).toContain("x-region: eu-west-1");
}

const running: ModernUpstream[] = [];
const clients: UpstreamClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((r) => r.close()));
});

describe("an upstream that echoes the headers it was sent", () => {
  for (const era of ["modern", "legacy"] as const) {
    it(`${era}: nothing the client hands on holds the secrets, nor does the era verdict it stores`, async () => {
      const up = await startEchoUpstream(era);
      running.push(up);
      const kv = memoryKv();
      const seen: string[] = [];
      const client = await UpstreamClient.connect(spec(up.url), HEADERS, {
        fetch: (input, init) => fetch(input, init),
        clientInfo: { name: "test", version: "1" },
        hooks: recordingHooks(seen),
        eras: kvEraCache(kv, "acme", { memo: new Map() }),
        withheld: [API_KEY, BEARER],
      });
      clients.push(client);
      expect(client.era).toBe(era);
      await tour(client, seen);
      // The fixture got the secrets: what came back is the client's doing.
      expect(up.headers("tools/call")?.["x-api-key"]).toBe(API_KEY);
      expectScrubbed(seen);
      const verdict = kv.data.get(kvKeys.era("acme", "up"));
      expect(verdict).toBeDefined();
      expect(leaksIn(verdict!, [API_KEY, BEARER])).toEqual([]);
    });
  }

  it("an OAuth upstream: the access token the auth provider hands out is withheld as well", async () => {
    const up = await startEchoUpstream("modern");
    running.push(up);
    const token = "oauth-access-token-0123456789";
    const seen: string[] = [];
    const client = await UpstreamClient.connect(spec(up.url), {}, {
      fetch: (input, init) => fetch(input, init),
      clientInfo: { name: "test", version: "1" },
      hooks: recordingHooks(seen),
      auth: { token: async () => token },
    });
    clients.push(client);
    await tour(client, seen);
    expect(up.headers("tools/call")?.authorization).toBe(`Bearer ${token}`);
    const all = seen.join("\n");
    expect(all).toContain(`authorization: Bearer ${WITHHELD}`);
    expect(leaksIn(all, [token])).toEqual([]);
  });

  it("HTTP+SSE: every message on the one stream is scrubbed too", async () => {
    const seen: string[] = [];
    const client = await UpstreamClient.connect(spec("http://echo.test/sse", { transport: "sse" }), HEADERS, {
      fetch: httpSseEcho(),
      clientInfo: { name: "test", version: "1" },
      hooks: recordingHooks(seen),
      withheld: [API_KEY, BEARER],
    });
    clients.push(client);
    await tour(client, seen);
    expectScrubbed(seen);
  });
});

/**
 * The echo fixture behind the older HTTP+SSE transport, as a fetch: the GET opens the stream (its first event names
 * where to POST), each POST is accepted (202) and answered on the stream.
 */
function httpSseEcho(): FetchLike {
  const encoder = new TextEncoder();
  let inbound: ((message: JSONRPCMessage) => void) | undefined;
  return async (input, init) => {
    const request = new Request(input, init);
    if (request.method === "GET") {
      let push!: (message: JSONRPCMessage) => void;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode("event: endpoint\ndata: /messages\n\n"));
          push = (message) => controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
        },
      });
      await echoServer(request).connect({
        start: async () => {},
        send: async (message: JSONRPCMessage) => push(message),
        close: async () => {},
        set onmessage(handler: ((message: JSONRPCMessage) => void) | undefined) {
          inbound = handler;
        },
      } as never);
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    const message = (await request.json()) as JSONRPCMessage;
    queueMicrotask(() => inbound?.(message));
    return new Response(null, { status: 202 });
  };
}
