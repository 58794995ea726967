// The upstream client's era negotiation against real servers on loopback (harness/modern-upstream.ts, the replay
// server for a hand-written 2025 one): which era each kind of server gets, what each connect costs in probes, the
// verdicts kept in the era cache and when they are not trusted, faults of the probe, the 2026 input requests
// answered through the relay, and the fetch chain's guarantees on the 2026 wire.
import { afterEach, describe, expect, it } from "vitest";
import type { DiscoverResult } from "@modelcontextprotocol/client";
import { startModernUpstream, type ModernUpstream, type UpstreamEra } from "../../harness/modern-upstream.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../../src/lib/errors.ts";
import { REPROBE_AFTER_MS, kvEraCache, type EraMemo } from "../../src/store/era-cache.ts";
import { kvKeys } from "../../src/config/keys.ts";
import type { KvEntry, KvLike } from "../../src/store/kv.ts";
import { UpstreamClient, type ClientDeps, type EraCache, type UpstreamHooks } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import { FetchGate } from "../../src/upstream/fetch-gate.ts";
import { waitFor } from "../shared/wait.ts";

const TEAM = "acme";
const SECRET = "sekret-token-4711";

/** A KV in memory that counts what it is asked. */
function memoryKv() {
  const data = new Map<string, string>();
  const counts = { gets: 0, puts: 0, deletes: 0 };
  const kv: KvLike = {
    get: async (key) => {
      counts.gets++;
      return data.get(key) ?? null;
    },
    put: async (key, value) => {
      counts.puts++;
      data.set(key, value);
    },
    delete: async (key) => {
      counts.deletes++;
      data.delete(key);
    },
    list: async (prefix): Promise<KvEntry[]> => [...data.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })),
  };
  return { kv, data, counts };
}
type MemoryKv = ReturnType<typeof memoryKv>;

/** What the KV holds for the upstream "up" (parsed), or undefined. */
const stored = (store: MemoryKv): { config: string; era: { kind: string; discover?: DiscoverResult }; checkedAt: string } | undefined => {
  const text = store.data.get(kvKeys.era(TEAM, "up"));
  return text === undefined ? undefined : JSON.parse(text);
};

/** An era cache over the KV, with a memo of its own (as a fresh isolate would have) unless one is given. */
const eraCache = (store: MemoryKv, options: { memo?: EraMemo; now?: () => number } = {}): EraCache =>
  kvEraCache(store.kv, TEAM, { memo: options.memo ?? new Map(), ...(options.now ? { now: options.now } : {}) });

const spec = (url: string, over: Partial<UpstreamSpec> = {}): UpstreamSpec =>
  ({ name: "up", transport: "streamable-http", url, headers: {}, timeout: 5_000, ...over }) as UpstreamSpec;

/** Every fetch the client made, by HTTP method and JSON-RPC method. */
function recording(): { fetch: FetchLike; sent: string[] } {
  const sent: string[] = [];
  const fetch: FetchLike = (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    let rpc = "";
    if (typeof init?.body === "string") {
      try {
        rpc = String((JSON.parse(init.body) as { method?: unknown }).method ?? "(response)");
      } catch {
        rpc = "(not json)";
      }
    }
    sent.push(rpc ? `${method} ${rpc}` : method);
    return globalThis.fetch(input, init);
  };
  return { fetch, sent };
}

const running: Array<{ close: () => Promise<void> }> = [];
const clients: UpstreamClient[] = [];

async function upstream(era: UpstreamEra): Promise<ModernUpstream> {
  const up = await startModernUpstream(era);
  running.push(up);
  return up;
}

async function replay(): Promise<ReplayServer> {
  const server = await startReplayServer({ old: { catalog: loadCorpus("modelcontextprotocol__server-everything") } });
  running.push(server);
  return server;
}

async function connect(s: UpstreamSpec, deps: Partial<ClientDeps> = {}, headers: Record<string, string> = {}): Promise<UpstreamClient> {
  const client = await UpstreamClient.connect(s, headers, { fetch: (input, init) => fetch(input, init), clientInfo: { name: "test", version: "1" }, ...deps });
  clients.push(client);
  return client;
}

/** The fault a failed promise carries. */
async function faultOf(work: Promise<unknown>): Promise<{ fault: UpstreamFault; message: string }> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return { fault: (err as UpstreamError).fault, message: (err as UpstreamError).message };
}

const text = (result: { content?: unknown }): string => ((result.content as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("");

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((r) => r.close()));
});

describe("which era each upstream gets", () => {
  it("a 2026-only upstream: one server/discover, no initialize, no session; the catalog says 2026-07-28", async () => {
    const up = await upstream("modern");
    const client = await connect(spec(up.url));
    expect(client.era).toBe("modern");
    expect(up.methods()).toEqual({ "server/discover": 1 });

    const catalog = await client.readCatalog();
    expect(catalog.protocolVersion).toBe("2026-07-28");
    expect(catalog.serverInfo?.name).toBe("era-fixture");
    expect(catalog.instructions).toBe("An era fixture.");
    expect(catalog.capabilities.tools).toBeDefined();
    expect(catalog.tools.map((t) => t.name).sort()).toEqual(["ask_aside", "big", "confirm", "confirm_together", "echo", "noisy", "slow"]);

    expect(text(await client.callTool("echo", { text: "hi" }))).toBe("echo: hi");
    expect(up.methods()).toEqual({ "server/discover": 1, "tools/list": 1, "tools/call": 1 });
    expect(up.methods().initialize).toBeUndefined();
  });

  it("a dual-era upstream is spoken to in 2026: no initialize, and no 2025 session opened", async () => {
    const up = await upstream("dual");
    const client = await connect(spec(up.url));
    expect(client.era).toBe("modern");
    expect(text(await client.callTool("echo", { text: "dual" }))).toBe("echo: dual");
    expect(up.methods()).toEqual({ "server/discover": 1, "tools/call": 1 });
    expect(up.sessions()).toBe(0);
  });

  it("a 2025-only upstream (hand-written): one probe, then initialize; the catalog keeps the 2025 version", async () => {
    const server = await replay();
    const client = await connect(spec(server.url("old")));
    expect(client.era).toBe("legacy");
    const catalog = await client.readCatalog();
    expect(catalog.protocolVersion).toBe("2025-11-25");
    expect(catalog.tools.length).toBeGreaterThan(0);
    const tool = catalog.tools[0]!.name;
    expect(text(await client.callTool(tool, { a: 1 }))).toContain(tool);
    const methods = server.stats("old").methods;
    expect(methods["server/discover"]).toBe(1);
    expect(methods.initialize).toBe(1);
    expect(methods["tools/call"]).toBe(1);
  });

  it("a 2025-only upstream on the v2 server SDK: one probe, then a session", async () => {
    const up = await upstream("legacy");
    const client = await connect(spec(up.url));
    expect(client.era).toBe("legacy");
    expect(text(await client.callTool("echo", { text: "old" }))).toBe("echo: old");
    expect(up.methods()["server/discover"]).toBe(1);
    expect(up.methods().initialize).toBe(1);
    expect(up.sessions()).toBe(1);
  });

  it("the HTTP+SSE transport keeps the 2025 handshake: no probe is ever sent", async () => {
    const { fetch, sent } = recording();
    // Nothing listens there: the SSE GET fails, and what matters is what was tried.
    const failing: FetchLike = async (input, init) => {
      await fetch(input, init).catch(() => undefined);
      return new Response("gone", { status: 503 });
    };
    await faultOf(connect(spec("http://127.0.0.1:9/sse", { transport: "sse" }), { fetch: failing }));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.some((s) => s.includes("server/discover"))).toBe(false);
  });
});

describe("verdicts kept and reused", () => {
  it("a modern verdict is stored after the first connect, and the next connect sends no probe at all", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    const entry = stored(store);
    expect(entry?.era.kind).toBe("modern");
    expect(entry?.era.discover?.supportedVersions).toContain("2026-07-28");
    expect(Date.now() - Date.parse(entry!.checkedAt)).toBeLessThan(60_000);

    // Another isolate (a memo of its own): read from KV, then not a single round trip to connect.
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("modern");
    expect(up.methods()).toEqual({});
    expect(text(await client.callTool("echo", { text: "again" }))).toBe("echo: again");
    expect(up.methods()).toEqual({ "tools/call": 1 });
    const catalog = await client.readCatalog();
    expect(catalog.protocolVersion).toBe("2026-07-28");
    expect(catalog.serverInfo?.name).toBe("era-fixture");
  });

  it("the isolate's memo spares the KV read, and an unchanged verdict is not written again", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    const memo: EraMemo = new Map();
    await connect(spec(up.url), { eras: eraCache(store, { memo }) });
    expect(store.counts.puts).toBe(1);
    const reads = store.counts.gets;
    await connect(spec(up.url), { eras: eraCache(store, { memo }) });
    expect(store.counts.gets).toBe(reads);
    expect(store.counts.puts).toBe(1);
    expect(up.methods()["server/discover"]).toBe(1);
  });

  it("a legacy verdict is stored, and a fresh one skips the probe (straight to initialize)", async () => {
    const up = await upstream("legacy");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    expect(stored(store)?.era).toEqual({ kind: "legacy" });
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("legacy");
    expect(up.methods()["server/discover"]).toBeUndefined();
    expect(up.methods().initialize).toBe(1);
  });

  it("a legacy verdict older than the re-probe horizon is not trusted: probed again, and dated again", async () => {
    const up = await upstream("legacy");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    const first = stored(store)!.checkedAt;
    up.reset();
    const later = Date.now() + REPROBE_AFTER_MS + 60_000;
    await connect(spec(up.url), { eras: eraCache(store, { now: () => later }) });
    expect(up.methods()["server/discover"]).toBe(1);
    expect(up.methods().initialize).toBe(1);
    const second = stored(store)!;
    expect(second.era).toEqual({ kind: "legacy" });
    expect(Date.parse(second.checkedAt)).toBeGreaterThan(Date.parse(first));
    // Just inside the horizon it is still trusted.
    up.reset();
    await connect(spec(up.url), { eras: eraCache(store, { now: () => Date.parse(second.checkedAt) + REPROBE_AFTER_MS - 60_000 }) });
    expect(up.methods()["server/discover"]).toBeUndefined();
  });

  it("a changed entry (another URL or header reference) is probed afresh", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    up.reset();
    await connect(spec(up.url, { headers: { authorization: "Bearer ${OTHER_TOKEN}" } }), { eras: eraCache(store) }, { authorization: "Bearer x-other" });
    expect(up.methods()["server/discover"]).toBe(1);
  });

  it("a stored verdict that does not parse is a miss: the upstream is probed", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    store.data.set(kvKeys.era(TEAM, "up"), JSON.stringify({ config: "x", era: { kind: "legacy", supportedVersions: [] }, checkedAt: "yesterday" }));
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("modern");
    expect(up.methods()["server/discover"]).toBe(1);
    expect(stored(store)?.era.kind).toBe("modern");
  });
});

describe("probe faults are errors, never a legacy verdict", () => {
  for (const status of [401, 403, 500, 503]) {
    it(`a ${status} to server/discover fails the connect, falls back to nothing and caches nothing`, async () => {
      const up = await upstream("dual");
      up.failDiscover({ status, body: `no entry for ${SECRET} at ${up.url}` });
      const store = memoryKv();
      const { fault, message } = await faultOf(
        connect(spec(up.url, { headers: { authorization: "Bearer ${TOKEN}" } }), { eras: eraCache(store) }, { authorization: `Bearer ${SECRET}` }),
      );
      expect(fault).toMatchObject({ kind: "http", status });
      expect(message).not.toContain(SECRET);
      expect(message).not.toContain("127.0.0.1");
      expect(JSON.stringify(fault)).not.toContain(SECRET);
      expect(up.methods()["server/discover"]).toBe(1);
      expect(up.methods().initialize).toBeUndefined();
      expect(store.counts.puts).toBe(0);
      expect(stored(store)).toBeUndefined();
    });
  }

  it("after a failed probe the next connect probes again and caches what it finds", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    up.failDiscover({ status: 500 });
    await faultOf(connect(spec(up.url), { eras: eraCache(store) }));
    up.failDiscover(undefined);
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("modern");
    expect(up.methods()["server/discover"]).toBe(2);
    expect(stored(store)?.era.kind).toBe("modern");
  });

  it("an upstream nobody answers at is unreachable, as it was before negotiation", async () => {
    const { fault } = await faultOf(connect(spec("http://127.0.0.1:9/mcp")));
    expect(fault.kind).toBe("unreachable");
  });
});

describe("stale verdicts are dropped and corrected", () => {
  /** A modern verdict stored for a fixture that then turns 2025-only; the client connected with that verdict. */
  async function staleModern(era: "modern" | "dual" = "modern") {
    const up = await upstream(era);
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    up.setEra("legacy");
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    return { up, store, client };
  }

  it("a modern verdict for an upstream that now speaks only 2025: the first call falls back once and succeeds", async () => {
    const { up, store, client } = await staleModern("modern");
    expect(up.methods()).toEqual({});
    expect(text(await client.callTool("echo", { text: "after" }))).toBe("echo: after");
    expect(client.era).toBe("legacy");
    // The 2026 call turned away, one probe, the 2025 handshake, the call again.
    expect(up.methods()).toMatchObject({ "server/discover": 1, initialize: 1, "tools/call": 2 });
    expect(stored(store)?.era).toEqual({ kind: "legacy" });
    const catalog = await client.readCatalog();
    expect(catalog.protocolVersion).toBe("2025-11-25");
  });

  it("concurrent first calls on a stale verdict share one renegotiation", async () => {
    const { up, client } = await staleModern("modern");
    const results = await Promise.all(["a", "b", "c"].map((t) => client.callTool("echo", { text: t })));
    expect(results.map(text)).toEqual(["echo: a", "echo: b", "echo: c"]);
    expect(up.methods()["server/discover"]).toBe(1);
    expect(up.methods().initialize).toBe(1);
    expect(up.sessions()).toBe(1);
  });

  it("a stream the host wanted while the verdict said modern is opened once the upstream turns out 2025", async () => {
    const { up, client } = await staleModern("modern");
    await client.openStream();
    expect(up.http().GET).toBeUndefined();
    await client.callTool("echo", { text: "x" });
    expect(await waitFor(() => up.http().GET !== undefined, { tries: 50, ms: 10 })).toBe(true);
    expect(up.http().GET).toBe(1);
  });

  it("the same when the first request is the catalog read", async () => {
    const { store, client } = await staleModern("dual");
    const catalog = await client.readCatalog();
    expect(catalog.protocolVersion).toBe("2025-11-25");
    expect(catalog.tools.map((t) => t.name)).toContain("echo");
    expect(stored(store)?.era).toEqual({ kind: "legacy" });
  });

  it("a modern verdict for a 2025 server that answers 404 -32001 (the replay server) is corrected too", async () => {
    const modern = await upstream("modern");
    const store = memoryKv();
    await connect(spec(modern.url), { eras: eraCache(store) });
    // The same verdict, moved to the old server's URL: what a downgrade behind the same URL looks like.
    const server = await replay();
    const discover = stored(store)!.era.discover!;
    await eraCache(store).put(spec(server.url("old")), { kind: "modern", discover });
    const client = await connect(spec(server.url("old")), { eras: eraCache(store) });
    const catalog = await client.readCatalog();
    expect(client.era).toBe("legacy");
    expect(catalog.tools.length).toBeGreaterThan(0);
    expect(server.stats("old").methods.initialize).toBe(1);
    expect(stored(store)?.era).toEqual({ kind: "legacy" });
  });

  it("a modern verdict the SDK cannot adopt (no 2026-07-28 in it) is dropped at connect and negotiated afresh", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    const discover = stored(store)!.era.discover!;
    await eraCache(store).put(spec(up.url), { kind: "modern", discover: { ...discover, supportedVersions: ["2099-01-01"] } });
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("modern");
    expect(up.methods()["server/discover"]).toBe(1);
    expect(stored(store)?.era.discover?.supportedVersions).toEqual(["2026-07-28"]);
  });

  it("a fresh legacy verdict for an upstream that now speaks only 2026 is dropped when initialize gets -32022", async () => {
    const up = await upstream("legacy");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    up.setEra("modern");
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    expect(client.era).toBe("modern");
    expect(up.methods()).toMatchObject({ initialize: 1, "server/discover": 1 });
    expect(stored(store)?.era.kind).toBe("modern");
  });

  it("a 2026 refusal of the first request (404 -32601) is the upstream's answer, not a stale verdict", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    up.reset();
    const client = await connect(spec(up.url), { eras: eraCache(store) });
    const { fault } = await faultOf(client.request({ method: "prompts/get", params: { name: "nope" } }));
    expect(fault).toMatchObject({ kind: "rpc", code: -32601 });
    expect(up.methods()).toEqual({ "prompts/get": 1 });
    expect(store.counts.deletes).toBe(0);
  });

  it("an auth failure on the first call is not taken for a stale verdict", async () => {
    const up = await upstream("modern");
    const store = memoryKv();
    await connect(spec(up.url), { eras: eraCache(store) });
    up.reset();
    let deny = true;
    const denying: FetchLike = async (input, init) => (deny ? new Response("no", { status: 401 }) : fetch(input, init));
    const client = await connect(spec(up.url), { eras: eraCache(store), fetch: denying });
    const { fault } = await faultOf(client.callTool("echo", { text: "x" }));
    expect(fault).toMatchObject({ kind: "http", status: 401 });
    deny = false;
    expect(stored(store)?.era.kind).toBe("modern");
    expect(up.methods()).toEqual({});
  });
});

describe("input requests of a 2026 upstream reach the host through the relay", () => {
  const hooks = (answer: { action: "accept"; content: { ok: boolean } }) => {
    const relayed: Array<{ upstream: string; method: string; params: unknown }> = [];
    const value: UpstreamHooks = {
      capabilities: () => ({ elicitation: {} }),
      relay: async (upstream, request) => {
        relayed.push({ upstream, method: request.method, params: request.params });
        return answer;
      },
      notify: () => {},
    };
    return { hooks: value, relayed };
  };

  for (const era of ["modern", "legacy"] as const) {
    it(`${era}: the tool's elicitation goes to hooks.relay, and the call's final result comes back`, async () => {
      const up = await upstream(era);
      const { hooks: h, relayed } = hooks({ action: "accept", content: { ok: true } });
      const client = await connect(spec(up.url), { hooks: h });
      expect(client.era).toBe(era);
      const result = await client.callTool("confirm", { action: "deploy" });
      expect(text(result)).toBe("deploy: confirmed");
      expect(relayed).toHaveLength(1);
      expect(relayed[0]).toMatchObject({ upstream: "up", method: "elicitation/create", params: { message: "Run deploy?" } });
      // 2026: input_required, then the retry carrying the answer; 2025: one call, the elicitation on its stream.
      expect(up.methods()["tools/call"]).toBe(era === "modern" ? 2 : 1);
    });
  }

  for (const era of ["modern", "legacy"] as const) {
    it(`${era}: two calls asking at once each relay their own question with their own call's origin`, async () => {
      const up = await upstream(era);
      const relayed: Array<{ origin: string | undefined; message: string }> = [];
      const h: UpstreamHooks = {
        capabilities: () => ({ elicitation: {} }),
        relay: async (_upstream, request, origin) => {
          const message = String((request.params as { message?: unknown }).message);
          relayed.push({ origin, message });
          // Answered by the call it was relayed for: a question relayed for the wrong call gets the other's answer.
          return { action: "accept", content: { ok: origin === "call-a" } };
        },
        notify: () => {},
      };
      const client = await connect(spec(up.url), { hooks: h });
      const group = `pair-${era}`;
      const [a, b] = await Promise.all([
        client.callTool("confirm_together", { action: "alpha", group, together: 2 }, { origin: "call-a" }),
        client.callTool("confirm_together", { action: "beta", group, together: 2 }, { origin: "call-b" }),
      ]);
      expect(relayed.sort((x, y) => x.message.localeCompare(y.message))).toEqual([
        { origin: "call-a", message: "Run alpha?" },
        { origin: "call-b", message: "Run beta?" },
      ]);
      expect([text(a), text(b)]).toEqual(["alpha: confirmed", "beta: refused"]);
    });
  }

  it("a 2025 upstream's request on its GET stream is relayed without an origin, and the origin header never reaches it", async () => {
    const up = await upstream("legacy");
    const relayed: Array<{ origin: string | undefined; message: string }> = [];
    const h: UpstreamHooks = {
      capabilities: () => ({ elicitation: {} }),
      relay: async (_upstream, request, origin) => {
        relayed.push({ origin, message: String((request.params as { message?: unknown }).message) });
        return { action: "accept", content: { ok: true } };
      },
      notify: () => {},
    };
    const client = await connect(spec(up.url), { hooks: h });
    await client.openStream();
    const result = await client.callTool("ask_aside", { action: "gamma", group: "aside-unit", together: 1 }, { origin: "call-c" });
    expect(text(result)).toBe("gamma: confirmed");
    expect(relayed).toEqual([{ origin: undefined, message: "Run gamma?" }]);
    expect(up.headers("tools/call")?.["x-dynmcp-origin"]).toBeUndefined();
  });

  it("a refusal relayed back is what the tool reports", async () => {
    const up = await upstream("modern");
    const { hooks: h } = hooks({ action: "accept", content: { ok: false } });
    const client = await connect(spec(up.url), { hooks: h });
    expect(text(await client.callTool("confirm", { action: "drop" }))).toBe("drop: refused");
  });
});

describe("a 2026 upstream holds no session", () => {
  it("no GET stream and no DELETE: openStream and close send nothing", async () => {
    const up = await upstream("modern");
    const client = await connect(spec(up.url));
    await client.openStream();
    expect(client.streaming).toBe(true);
    await client.callTool("echo", { text: "x" });
    await client.close();
    expect(client.closed).toBe(true);
    expect(up.http()).toEqual({ POST: 2 });
  });

  it("a 2025 session on the same fixture does get its GET stream and its DELETE", async () => {
    const up = await upstream("legacy");
    const client = await connect(spec(up.url));
    await client.openStream();
    await client.close();
    expect(up.http().DELETE).toBe(1);
    expect(up.http().GET).toBeGreaterThanOrEqual(1);
  });
});

describe("the fetch chain on the 2026 wire", () => {
  it("the per-request headers the SDK sets reach the upstream through the chain and the gate", async () => {
    const up = await upstream("modern");
    const gate = new FetchGate({ maxConnections: 6, maxResponseBytes: 1_000_000 });
    const client = await connect(spec(up.url), { gate }, { "x-api-key": SECRET });
    await client.callTool("echo", { text: "h" });
    const headers = up.headers("tools/call")!;
    expect(headers["mcp-protocol-version"]).toBe("2026-07-28");
    expect(headers["mcp-method"]).toBe("tools/call");
    expect(headers["mcp-name"]).toBe("echo");
    expect(headers["x-api-key"]).toBe(SECRET);
    expect(headers["mcp-session-id"]).toBeUndefined();
    expect(up.headers("server/discover")?.["mcp-method"]).toBe("server/discover");
    expect(gate.stats.requests).toBe(2);
    expect(gate.inFlight).toBe(0);
  });

  it("an answer over the response size limit is too_large", async () => {
    const up = await upstream("modern");
    const gate = new FetchGate({ maxConnections: 6, maxResponseBytes: 4_000 });
    const client = await connect(spec(up.url), { gate });
    const { fault } = await faultOf(client.callTool("big", { bytes: 20_000 }));
    expect(fault).toEqual({ kind: "too_large", limit: 4_000 });
    expect(client.closed).toBe(true);
  });

  it("a call with no answer within the entry's timeout is a timeout", async () => {
    const up = await upstream("modern");
    const client = await connect(spec(up.url, { timeout: 300 }));
    const started = Date.now();
    const { fault } = await faultOf(client.callTool("slow", { ms: 2_000 }));
    expect(fault).toEqual({ kind: "timeout", ms: 300 });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("a probe with no answer within the timeout is a timeout, not a legacy verdict", async () => {
    const store = memoryKv();
    const hanging: FetchLike = (_input, init) =>
      new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true }));
    const { fault } = await faultOf(connect(spec("http://127.0.0.1:9/mcp", { timeout: 200 }), { fetch: hanging, eras: eraCache(store) }));
    expect(fault.kind).toBe("timeout");
    expect(store.counts.puts).toBe(0);
  });

  it("an HTTP error of a 2026 call keeps its status and body, scrubbed of the URL and header values", async () => {
    const up = await upstream("modern");
    const { fetch: recorded, sent } = recording();
    const failing: FetchLike = (input, init) =>
      sent.length > 0 && typeof init?.body === "string" && init.body.includes('"tools/call"')
        ? Promise.resolve(new Response(`bad gateway at ${up.url} for ${SECRET}`, { status: 502 }))
        : recorded(input, init);
    const client = await connect(spec(up.url), { fetch: failing }, { authorization: `Bearer ${SECRET}` });
    const { fault, message } = await faultOf(client.callTool("echo", { text: "x" }));
    expect(fault).toMatchObject({ kind: "http", status: 502 });
    expect((fault as { detail: string }).detail).toContain("bad gateway");
    for (const leaked of [SECRET, up.url, "127.0.0.1"]) {
      expect(message).not.toContain(leaked);
      expect(JSON.stringify(fault)).not.toContain(leaked);
    }
    // A 5xx is an outage, not a stale era: nothing was renegotiated.
    expect(sent.filter((s) => s.includes("server/discover"))).toHaveLength(1);
  });

  it("the 2026 upstream's own JSON-RPC error keeps its code, even when an HTTP status frames it (404 -32601)", async () => {
    const up = await upstream("modern");
    const client = await connect(spec(up.url));
    const { fault } = await faultOf(client.request({ method: "prompts/get", params: { name: "nope" } }));
    expect(fault).toMatchObject({ kind: "rpc", code: -32601 });
    // An unknown tool is answered in-band.
    const unknown = await faultOf(client.callTool("nope", {}));
    expect(unknown.fault).toMatchObject({ kind: "rpc", code: -32602 });
  });
});
