// Where the bridge relays an upstream's request for the host (src/relay/bridge.ts) and how it marks it
// (src/relay/provenance.ts): the call it belongs to when the upstream said which, the only call in progress when it
// did not, the host's own stream with none, and a refusal rather than a guess. The host and its requests are fakes
// that record what they are sent (the real ones are in test/workers/relay.test.ts).
import { describe, expect, it } from "vitest";
import type { Result } from "@modelcontextprotocol/server";
import { HostBridge, type BridgeHost, type HostExtra } from "../../src/relay/bridge.ts";
import { SERVER_META_KEY } from "../../src/relay/provenance.ts";
import { RpcError } from "../../src/lib/errors.ts";

type Sent = { on: string; method: string; params?: Record<string, unknown> };

/** A host that can be asked everything, and host requests that record what is sent on their streams. */
function setup(park?: BridgeHost["park"]) {
  const sent: Sent[] = [];
  const host: BridgeHost = {
    capabilities: () => ({ elicitation: {}, sampling: {}, roots: {} }),
    request: async (message) => {
      sent.push({ on: "host", ...message });
      return {};
    },
    notification: async () => {},
    perRequestLogs: false,
    ...(park ? { park } : {}),
  };
  const request = (name: string) =>
    ({
      mcpReq: {
        signal: new AbortController().signal,
        send: async (message: { method: string; params?: Record<string, unknown> }) => {
          sent.push({ on: name, ...message });
          return {} as Result;
        },
        notify: async () => {},
      },
    }) as unknown as HostExtra;
  return { bridge: new HostBridge(host, "multi"), sent, request };
}

const ask = (message: string) => ({ method: "elicitation/create" as const, params: { mode: "form", message, requestedSchema: { type: "object", properties: {} } } });

/** Runs `body` while the host requests `names` are calls in progress to `upstream`, each given its origin. */
async function during(bridge: HostBridge, upstream: string, calls: Array<[string, HostExtra]>, body: (origins: Record<string, string>) => Promise<void>): Promise<void> {
  const origins: Record<string, string> = {};
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = calls.map(([name, extra]) => bridge.during(upstream, extra, async (origin) => {
    origins[name] = origin;
    await held;
  }));
  try {
    await body(origins);
  } finally {
    release();
    await Promise.all(running);
  }
}

describe("which host request an upstream's request is relayed on", () => {
  it("the call its origin names, even when another call to the same upstream is newer", async () => {
    const { bridge, sent, request } = setup();
    await during(bridge, "up", [["a", request("a")], ["b", request("b")]], async (origins) => {
      await bridge.relay("up", ask("for a"), origins["a"]);
      await bridge.relay("up", ask("for b"), origins["b"]);
    });
    expect(sent.map((s) => [s.on, s.params?.["message"]])).toEqual([["a", "[up] for a"], ["b", "[up] for b"]]);
  });

  it("refuses a request whose call is over, and one naming another upstream's call", async () => {
    const { bridge, sent, request } = setup();
    let ended = "";
    await bridge.during("up", request("a"), async (origin) => void (ended = origin));
    await during(bridge, "up", [["b", request("b")]], async () => {
      await expect(bridge.relay("up", ask("late"), ended)).rejects.toMatchObject({ kind: "unrelated_request", code: -32600 });
    });
    await during(bridge, "other", [["c", request("c")]], async (origins) => {
      await expect(bridge.relay("up", ask("foreign"), origins["c"])).rejects.toBeInstanceOf(RpcError);
    });
    expect(sent).toEqual([]);
  });

  it("without an origin: the only call in progress; with none, the host; with several, a refusal that says why", async () => {
    const { bridge, sent, request } = setup();
    await during(bridge, "up", [["a", request("a")]], async () => {
      await bridge.relay("up", ask("one open"), undefined);
    });
    await bridge.relay("up", ask("none open"), undefined);
    await during(bridge, "up", [["a", request("a")], ["b", request("b")]], async () => {
      const refused = await bridge.relay("up", ask("two open"), undefined).then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(RpcError);
      expect((refused as RpcError).code).toBe(-32600);
      expect((refused as RpcError).message).toContain('2 requests to "up" are in progress');
      // roots/list is answered the same on any stream: it goes to the host as with no call.
      await bridge.relay("up", { method: "roots/list" }, undefined);
    });
    expect(sent.map((s) => [s.on, s.method])).toEqual([["a", "elicitation/create"], ["host", "elicitation/create"], ["host", "roots/list"]]);
  });

  it("a 2026 host's parked request is the call's own and marked", async () => {
    const parked: Array<{ extra: HostExtra; params?: Record<string, unknown> }> = [];
    const { bridge, request } = setup((extra, message) => {
      parked.push({ extra, ...(message.params ? { params: message.params } : {}) });
      return Promise.resolve({ action: "decline" });
    });
    const a = request("a");
    const b = request("b");
    await during(bridge, "up", [["a", a], ["b", b]], async (origins) => {
      await bridge.relay("up", ask("for a"), origins["a"]);
    });
    expect(parked).toHaveLength(1);
    expect(parked[0]!.extra).toBe(a);
    expect(parked[0]!.params?.["message"]).toBe("[up] for a");
  });
});

describe("how a relayed request is marked as the upstream's", () => {
  it("elicitation: message prefixed, the server named in _meta over whatever the upstream put there", async () => {
    const { bridge, sent } = setup();
    await bridge.relay("github", { method: "elicitation/create", params: { ...ask("A program wants to call x. Allow this call?").params, _meta: { [SERVER_META_KEY]: "dynmcp", keep: 1 } } }, undefined);
    expect(sent[0]!.params?.["message"]).toBe("[github] A program wants to call x. Allow this call?");
    expect(sent[0]!.params?.["_meta"]).toEqual({ [SERVER_META_KEY]: "github", keep: 1 });
  });

  it("sampling: the system prompt prefixed, or set to the name alone; roots: named in _meta", async () => {
    const { bridge, sent } = setup();
    const messages = [{ role: "user", content: { type: "text", text: "hi" } }];
    await bridge.relay("up", { method: "sampling/createMessage", params: { messages, maxTokens: 5, systemPrompt: "You summarize." } }, undefined);
    await bridge.relay("up", { method: "sampling/createMessage", params: { messages, maxTokens: 5 } }, undefined);
    await bridge.relay("up", { method: "roots/list" }, undefined);
    expect(sent.map((s) => s.params?.["systemPrompt"])).toEqual(["[up] You summarize.", "[up]", undefined]);
    expect(sent.map((s) => (s.params?.["_meta"] as Record<string, unknown>)[SERVER_META_KEY])).toEqual(["up", "up", "up"]);
    // The upstream's messages themselves are left as they are.
    expect(sent[0]!.params?.["messages"]).toEqual(messages);
  });
});
