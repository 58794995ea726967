// Watching a response body pass through: chunks, refusal, the end (once), and taps joined into one.
import { describe, expect, it } from "vitest";
import { tapResponse, type Tap } from "../../src/lib/streams.ts";

const encoder = new TextEncoder();

/** A body that yields the given chunks, noting whether it was cancelled. */
function source(chunks: string[]) {
  const state = { cancelled: undefined as unknown, pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(encoder.encode(next));
    },
    cancel(reason) {
      state.cancelled = reason;
    },
  }, { highWaterMark: 0 });
  return { response: new Response(body, { status: 201, headers: { "x-kept": "1" } }), state };
}

/** A watcher that records what it saw under `name` in `seen`. */
function watcher(name: string, seen: string[], refuse?: string): Tap {
  const decoder = new TextDecoder();
  return {
    chunk: (value) => {
      const text = decoder.decode(value);
      seen.push(`${name}:${text}`);
      return text === refuse ? new Error(`${name} refused ${text}`) : undefined;
    },
    end: (error) => void seen.push(`${name}:end${error ? `(${error instanceof Error ? error.message : String(error)})` : ""}`),
  };
}

describe("tapResponse", () => {
  it("joins a second watcher to a tap nobody read yet: one response, every chunk to each in order, each ended once", async () => {
    const { response } = source(["a", "b"]);
    const seen: string[] = [];
    const first = tapResponse(response, watcher("1", seen));
    const second = tapResponse(first, watcher("2", seen));
    expect(second).toBe(first);
    expect(second.status).toBe(201);
    expect(second.headers.get("x-kept")).toBe("1");
    expect(await second.text()).toBe("ab");
    expect(seen).toEqual(["1:a", "2:a", "1:b", "2:b", "1:end", "2:end"]);
  });

  it("a refused chunk reaches no later watcher, ends every watcher with the refusal, and cancels the source", async () => {
    const { response, state } = source(["a", "b", "c"]);
    const seen: string[] = [];
    const out = tapResponse(tapResponse(tapResponse(response, watcher("1", seen)), watcher("2", seen, "b")), watcher("3", seen));
    await expect(out.text()).rejects.toThrow("2 refused b");
    expect(seen).toEqual(["1:a", "2:a", "3:a", "1:b", "2:b", "1:end(2 refused b)", "2:end(2 refused b)", "3:end(2 refused b)"]);
    expect(state.cancelled).toBeInstanceOf(Error);
  });

  it("a reader's cancel ends every watcher once, outermost first, and reaches the source", async () => {
    const { response, state } = source(["a", "b"]);
    const seen: string[] = [];
    const out = tapResponse(tapResponse(response, watcher("1", seen)), watcher("2", seen));
    const reader = out.body!.getReader();
    await reader.read();
    await reader.cancel("gone");
    expect(seen).toEqual(["1:a", "2:a", "2:end(gone)", "1:end(gone)"]);
    expect(state.cancelled).toBe("gone");
  });

  it("a response made elsewhere is tapped anew; a response without a body ends its watcher at once", async () => {
    const { response } = source(["a"]);
    const seen: string[] = [];
    const out = tapResponse(response, watcher("1", seen));
    expect(out).not.toBe(response);
    const empty = new Response(null, { status: 204 });
    expect(tapResponse(empty, watcher("0", seen))).toBe(empty);
    expect(seen).toEqual(["0:end"]);
    expect(await out.text()).toBe("a");
    expect(seen).toEqual(["0:end", "1:a", "1:end"]);
  });
});
