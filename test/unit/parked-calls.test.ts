// The parked calls of 2026-era hosts and the request state naming them: rounds, expiry, cancellation, binding.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import { PARK_TTL_SECONDS, ParkedCalls } from "../../src/modern/parked-calls.ts";
import { argumentsDigest, requestStateCodec } from "../../src/modern/request-state.ts";

const done = (text: string): CallToolResult => ({ content: [{ type: "text", text }] });
const ctx = (method = "tools/call") => ({ mcpReq: { method } }) as unknown as ServerContext;

afterEach(() => vi.useRealTimers());

describe("ParkedCalls", () => {
  it("shows a parked request, resumes with the answer, and ends with the call's result", async () => {
    const parks = new ParkedCalls();
    const request = {};
    let answer: unknown;
    const id = parks.start(request, async () => {
      answer = await parks.park(request, { method: "elicitation/create", params: { message: "ok?" } });
      return done("finished");
    });
    const turn = await parks.next(id, new AbortController().signal);
    expect(turn).toEqual({ kind: "input", callId: id, requests: { in1: { method: "elicitation/create", params: { message: "ok?" } } }, beforeCall: false });
    expect(parks.resume(id, { in1: { action: "accept" } })).toBe(true);
    expect(await parks.next(id, new AbortController().signal)).toEqual({ kind: "result", result: done("finished") });
    expect(answer).toEqual({ action: "accept" });
    expect(parks.size).toBe(0);
    expect(parks.resume(id, { in1: {} })).toBe(false);
  });

  it("cancels the call when the waiting host request is cancelled, and when nobody comes back in time", async () => {
    vi.useFakeTimers();
    const parks = new ParkedCalls();
    const request = {};
    let signal: AbortSignal | undefined;
    const id = parks.start(request, async (s) => {
      signal = s;
      await parks.park(request, { method: "elicitation/create" });
      return done("never");
    });
    const turn = parks.next(id, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(1);
    expect((await turn)?.kind).toBe("input");
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(PARK_TTL_SECONDS * 1000);
    expect(signal?.aborted).toBe(true);
    expect(parks.size).toBe(0);

    const second = {};
    let secondSignal: AbortSignal | undefined;
    const other = parks.start(second, (s) => {
      secondSignal = s;
      return new Promise<CallToolResult>(() => {});
    });
    const host = new AbortController();
    const waiting = parks.next(other, host.signal);
    host.abort();
    expect(secondSignal?.aborted).toBe(true);
    parks.abandon(other, "test over");
    void waiting.catch(() => {});
  });

  it("takes each passed-through round's nonce once, and forgets it once its state has expired", () => {
    const parks = new ParkedCalls();
    expect(parks.spend("n1", 0)).toBe(true);
    expect(parks.spend("n1", 1_000)).toBe(false);
    expect(parks.spend("n2", PARK_TTL_SECONDS * 1000 + 1)).toBe(true);
    // n1's state could no longer verify: forgotten when the next nonce came.
    expect(parks.spend("n1", PARK_TTL_SECONDS * 1000 + 2)).toBe(true);
  });

  it("lets one request wait on a call at a time", async () => {
    const parks = new ParkedCalls();
    const id = parks.start({}, () => new Promise<CallToolResult>(() => {}));
    const first = parks.next(id, new AbortController().signal);
    expect(await parks.next(id, new AbortController().signal)).toBeUndefined();
    parks.abandon(id, "test over");
    void first.catch(() => {});
  });
});

describe("the request state", () => {
  const owner = { team: "t", tokenId: "tok" };

  it("verifies for the same team, token and method (even with a one-byte SESSION_KEY), and not for another, nor tampered, nor after its lifetime", async () => {
    vi.useFakeTimers();
    const codec = await requestStateCodec("k", owner);
    const state = await codec.mint({ c: "call", t: "up/tool", d: await argumentsDigest({ b: 1, a: 2 }) }, ctx());
    expect(await codec.verify(state, ctx())).toEqual({ c: "call", t: "up/tool", d: await argumentsDigest({ a: 2, b: 1 }) });
    await expect((await requestStateCodec("k", { ...owner, tokenId: "other" })).verify(state, ctx())).rejects.toThrow();
    await expect(codec.verify(state, ctx("prompts/get"))).rejects.toThrow();
    await expect((await requestStateCodec("another key", owner)).verify(state, ctx())).rejects.toThrow();
    // Tampered: one character well inside the MAC changed (the last ones may carry unused bits, and "xx" may be
    // what they were: a random state ended so once in a few thousand runs).
    const at = state.length - 10;
    await expect(codec.verify(`${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`, ctx())).rejects.toThrow();
    vi.advanceTimersByTime((PARK_TTL_SECONDS + 1) * 1000);
    await expect(codec.verify(state, ctx())).rejects.toThrow(/expired/);
  });
});
