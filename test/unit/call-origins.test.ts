// Which host call an upstream's request belongs to, as the upstream client learns it: the fetch chain takes the
// origin header off a request's fetch, notes the server requests on that request's SSE answer stream, and forgets each
// once the client answered it (src/upstream/fetch-chain.ts); a 2026 upstream's input_required rounds run for the call
// that got them (src/upstream/input-rounds.ts). The upstream is a fake fetch here (real ones: unit/upstream-era,
// workers/relay).
import { describe, expect, it } from "vitest";
import type { Result } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { FetchChain, ORIGIN_HEADER } from "../../src/upstream/fetch-chain.ts";
import { MAX_INPUT_ROUNDS, answerInputRounds, type NextRound } from "../../src/upstream/input-rounds.ts";

const spec = { name: "up", transport: "streamable-http", url: "https://up.example/mcp", headers: {}, timeout: 5_000 } as UpstreamSpec;

describe("the fetch chain's origins", () => {
  it("takes the header off, notes the requests on that request's answer stream, and forgets each once answered", async () => {
    const seen: Headers[] = [];
    const sse = `data: ${JSON.stringify({ jsonrpc: "2.0", id: 41, method: "elicitation/create", params: { message: "?" } })}\n\n`;
    const fetch = async (_input: string | URL | Request, init?: RequestInit) => {
      seen.push(new Headers(init?.headers));
      const body = JSON.parse(String(init?.body)) as { method?: string };
      if (body.method === "tools/call") return new Response(sse, { headers: { "content-type": "text/event-stream" } });
      return new Response(null, { status: 202 });
    };
    const chain = new FetchChain(spec, { fetch }, { overflowed: () => {}, streamWanted: () => false, closed: () => false });
    const call = (id: number, origin?: string) =>
      chain.streamableFetch(spec.url, {
        method: "POST",
        headers: new Headers({ "content-type": "application/json", ...(origin ? { [ORIGIN_HEADER]: origin } : {}) }),
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t" } }),
      });
    await (await call(1, "7")).text();
    expect(seen[0]!.has(ORIGIN_HEADER)).toBe(false);
    expect(chain.originOf(41)).toBe("7");
    // The client's answer to it goes through the chain: the note is gone.
    await chain.streamableFetch(spec.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 41, result: { action: "decline" } }) });
    expect(chain.originOf(41)).toBeUndefined();
    // A request made for no call: what comes on its stream has no origin.
    await (await call(2)).text();
    expect(chain.originOf(41)).toBeUndefined();
  });
});

describe("a 2026 upstream's input rounds", () => {
  const elicit = (message: string) => ({ method: "elicitation/create", params: { mode: "form", message, requestedSchema: { type: "object", properties: {} } } });
  const rounds = (results: Result[]) => {
    const asked: string[] = [];
    const retried: NextRound[] = [];
    const next = [...results];
    return {
      asked,
      retried,
      run: (first: Result) =>
        answerInputRounds(first, {
          relayable: new Set(["elicitation/create"]),
          ask: async (request) => {
            asked.push(String(request.params?.["message"]));
            return { action: "accept", content: { said: request.params?.["message"] } };
          },
          retry: async (round) => {
            retried.push(round);
            return next.shift() ?? { content: [] };
          },
          fail: (detail) => new Error(detail),
        }),
    };
  };

  it("answers every request of a round, then makes the call again with the answers and the upstream's state as it came", async () => {
    const r = rounds([{ resultType: "input_required", requestState: "s2" }, { content: [{ type: "text", text: "done" }] }]);
    const result = await r.run({ resultType: "input_required", inputRequests: { a: elicit("one"), b: elicit("two") }, requestState: "s1" });
    expect(result).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(r.asked.sort()).toEqual(["one", "two"]);
    expect(r.retried).toEqual([
      { inputResponses: { a: { action: "accept", content: { said: "one" } }, b: { action: "accept", content: { said: "two" } } }, requestState: "s1" },
      // A round with state only is answered with the state alone (after the SDK driver's pause).
      { requestState: "s2" },
    ]);
  });

  it("fails the call, asking nothing, for a request it cannot relay, and after the last round", async () => {
    const odd = rounds([]);
    await expect(odd.run({ resultType: "input_required", inputRequests: { x: { method: "tasks/get" } } })).rejects.toThrow("cannot relay here (x: tasks/get)");
    expect(odd.asked).toEqual([]);
    const endless = rounds(Array.from({ length: MAX_INPUT_ROUNDS + 1 }, () => ({ resultType: "input_required", inputRequests: { a: elicit("again") } })));
    await expect(endless.run({ resultType: "input_required", inputRequests: { a: elicit("again") } })).rejects.toThrow(`after ${MAX_INPUT_ROUNDS} rounds`);
    expect(endless.retried).toHaveLength(MAX_INPUT_ROUNDS);
  });
});
