// Run in workerd, where the index holds them (the module reads the Workers binding types, src/lib/env.ts).
// A team index's listen streams (src/team/listen-streams.ts) with the SDK's real handler: the limits read when the
// first stream opens, changes announced on open streams, and a changed tool list announced once per digest however
// many objects report it.
import { describe, expect, it } from "vitest";
import { ListenStreams } from "../../src/team/listen-streams.ts";

const MODERN = "2026-07-28";
const ENVELOPE = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
const PRINCIPAL = "t:0123456789abcdef";

interface Message {
  id?: string | number;
  method?: string;
  error?: { code: number; message: string };
}

const listen = (id: string, filter: Record<string, boolean>) =>
  new Request("https://proxy.example/t/acme/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { notifications: filter, _meta: ENVELOPE } }),
  });

/** The messages of an SSE answer, one at a time (comments skipped). */
function messages(response: Response): { next(): Promise<Message>; close(): Promise<void> } {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          buffer = buffer.slice(end + 2);
          if (data) return JSON.parse(data) as Message;
          continue;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error("the stream ended");
        buffer += value;
      }
    },
    close: () => reader.cancel(),
  };
}

describe("a team index's listen streams", () => {
  it("hold nothing before the first stream, and take the limits as they are when it opens", async () => {
    const streams = new ListenStreams({ perPrincipal: 10, lifetimeMs: 60_000 });
    streams.publish({ tools: true });
    streams.catalogChanged("a", "d1");
    expect(streams.open).toBe(0);
    streams.limits = { ...streams.limits, perPrincipal: 1 };
    const first = messages(await streams.fetch(listen("l1", { toolsListChanged: true }), PRINCIPAL));
    expect((await first.next()).method).toBe("notifications/subscriptions/acknowledged");
    expect(streams.open).toBe(1);
    const second = await (await streams.fetch(listen("l2", { toolsListChanged: true }), PRINCIPAL)).json();
    expect(second).toMatchObject({ id: "l2", error: { code: -32603 } });
    await first.close();
  });

  it("announce a changed tool list once per upstream and digest, and every list change published", async () => {
    const streams = new ListenStreams({ perPrincipal: 10, lifetimeMs: 60_000 });
    const stream = messages(await streams.fetch(listen("l1", { toolsListChanged: true, promptsListChanged: true }), PRINCIPAL));
    expect((await stream.next()).method).toBe("notifications/subscriptions/acknowledged");
    streams.catalogChanged("a", "d1");
    expect((await stream.next()).method).toBe("notifications/tools/list_changed");
    // The same digest again (another object read the same change): nothing; the next message is the prompts change.
    streams.catalogChanged("a", "d1");
    streams.publish({ prompts: true });
    expect((await stream.next()).method).toBe("notifications/prompts/list_changed");
    streams.catalogChanged("a", "d2");
    expect((await stream.next()).method).toBe("notifications/tools/list_changed");
    streams.catalogChanged("b", "d1");
    expect((await stream.next()).method).toBe("notifications/tools/list_changed");
    await stream.close();
  });
});
