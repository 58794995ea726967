// The Worker's one body reader (src/lib/request-body.ts) in workerd itself: a body framed by its Content-Length is
// read whole, any other is counted as it streams and cut off at the limit with the rest never pulled, and a
// Content-Length that lies about a longer body never makes the reader buffer past the limit.
import { describe, expect, it } from "vitest";
import { readLimited } from "../../src/lib/request-body.ts";

/** A body of `chunks` chunks of `size` bytes, counting how many the reader pulled. */
function countedBody(chunks: number, size: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close();
      pulled++;
      controller.enqueue(new Uint8Array(size).fill(97));
    },
  });
  return { stream, pulled: () => pulled };
}

const post = (body: BodyInit, headers: Record<string, string> = {}) => new Request("https://proxy.test/t/a/mcp", { method: "POST", body, headers });

describe("readLimited", () => {
  it("reads a body framed by its Content-Length whole", async () => {
    const text = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const read = await readLimited(post(text), 1024);
    expect(read.ok && new TextDecoder().decode(read.bytes)).toBe(text);
  });

  it("refuses a declared length over the limit before reading anything", async () => {
    const { stream, pulled } = countedBody(4, 1024);
    const read = await readLimited(post(stream, { "content-length": "4096" }), 1024);
    expect(read.ok).toBe(false);
    expect(pulled()).toBeLessThanOrEqual(1); // a stream pulls its first chunk as it starts
  });

  it("cuts a body of no declared length off at the limit, the rest never pulled", async () => {
    const { stream, pulled } = countedBody(1000, 1024);
    const read = await readLimited(post(stream), 8 * 1024);
    expect(read.ok).toBe(false);
    expect(pulled()).toBeLessThanOrEqual(8 + 2);
  });

  it("never buffers past the limit for a Content-Length that lies about a longer body", async () => {
    const { stream, pulled } = countedBody(1000, 1024);
    let read: Awaited<ReturnType<typeof readLimited>> | "failed";
    try {
      read = await readLimited(post(stream, { "content-length": "100" }), 8 * 1024);
    } catch {
      read = "failed";
    }
    // Either the runtime holds the body to its declared length (the read fails or stops there), or the reader does.
    expect(read === "failed" || !read.ok || read.bytes.byteLength <= 100).toBe(true);
    expect(pulled()).toBeLessThanOrEqual(8 + 2);
  });
});
