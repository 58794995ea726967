// A runtime's count of the requests it is answering: a streamed answer holds it until its body ends, a complete one
// (JSON, or no body) not beyond the moment it was made.
import { describe, expect, it } from "vitest";
import { ServedRuntime } from "../../src/session/served-runtime.ts";

const served = () => new ServedRuntime(new Promise<never>(() => {}), { afterReload: false, onRetiredClosed: () => {} });

describe("ServedRuntime leases", () => {
  it("a complete JSON answer lets go of the runtime as it is handed back, untouched", async () => {
    const runtime = served();
    const lease = runtime.take();
    const json = Response.json({ jsonrpc: "2.0", id: 1, result: {} });
    const answer = lease.answer(json);
    lease.done();
    expect(answer).toBe(json);
    expect(runtime.answering).toBe(0);
  });

  it("a streamed answer holds the runtime until its body has been read to the end", async () => {
    const runtime = served();
    const lease = runtime.take();
    const stream = new Response("event: message\ndata: {}\n\n", { headers: { "content-type": "text/event-stream" } });
    const answer = lease.answer(stream);
    lease.done();
    expect(runtime.answering).toBe(1);
    await answer.text();
    expect(runtime.answering).toBe(0);
  });
});
