// The registry's parts in Node, over real upstream clients whose fetch is an in-test JSON-RPC server, with fake
// timers: record transitions, coalescing, the reconnect budget, what withClient repeats, the connect deadline.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ResolvedConfig, UpstreamSpec } from "../../src/config/validate.ts";
import { UpstreamError, type UpstreamFault } from "../../src/lib/errors.ts";
import { withClient } from "../../src/upstream/call-policy.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import { ClientPool, RECONNECTS_PER_MINUTE } from "../../src/upstream/pool.ts";
import { MAX_LOAD_FAILURES, UpstreamStatus, loadFailed, type RegistryStore, type UpstreamRecord } from "../../src/upstream/records.ts";
import { UpstreamRegistry } from "../../src/upstream/registry.ts";
import { EAGER_WAIT_MS, RETRY_FAILED_MS } from "../../src/upstream/startup.ts";

type Message = { id?: number | string; method: string; params?: Record<string, unknown> };
type Answer = (message: Message, session: string | null) => Response | Promise<Response> | undefined;
const json = (body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...headers } });

/** One fake upstream: counts what it is sent; `answer` may take over any message (a fault, a hang). */
function upstream() {
  const up = { initialize: 0, calls: 0, sessions: 0, answer: undefined as Answer | undefined };
  const fetch: FetchLike = async (_input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "POST") return new Response(null, { status: method === "GET" ? 405 : 200 });
    const message = JSON.parse(String(init?.body)) as Message;
    if (message.method === "initialize") up.initialize++;
    if (message.method === "tools/call") up.calls++;
    const own = up.answer?.(message, new Headers(init?.headers).get("mcp-session-id"));
    if (own) return own;
    if (message.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown, headers: Record<string, string> = {}) => json({ jsonrpc: "2.0", id: message.id, result }, headers);
    if (message.method === "initialize") {
      const result = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fake", version: "1" } };
      return reply(result, { "mcp-session-id": `s${++up.sessions}` });
    }
    if (message.method === "tools/list") return reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
    return reply({ content: [{ type: "text", text: "ok" }] });
  };
  return Object.assign(up, { fetch });
}
type Fake = ReturnType<typeof upstream>;

const down = (): Response => new Response("down", { status: 503 });
const unreachable = (): never => {
  throw new TypeError("fetch failed");
};

const spec = (name: string, over: Partial<UpstreamSpec> = {}): UpstreamSpec =>
  ({ name, transport: "http", url: `https://${name}.example/mcp`, headers: {}, timeout: 5_000, ...over }) as UpstreamSpec;

function connector(fakes: Record<string, Fake>) {
  return (s: UpstreamSpec, signal?: AbortSignal) =>
    UpstreamClient.connect(s, {}, { fetch: fakes[s.name]!.fetch, clientInfo: { name: "test", version: "1" } }, signal);
}

const config = (upstreams: UpstreamSpec[]): ResolvedConfig => ({ mode: "multi", upstreams }) as ResolvedConfig;

function memoryStore(): RegistryStore & { records: Map<string, UpstreamRecord> } {
  const records = new Map<string, UpstreamRecord>();
  return { records, all: async () => new Map(records), put: async (name, record) => void records.set(name, record) };
}

/** Runs the fake clock until `work` settles (or `limitMs` passed); returns its outcome. */
async function settle<T>(work: Promise<T>, limitMs = 60_000): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  work.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  for (let waited = 0; !outcome && waited <= limitMs; waited += 100) await vi.advanceTimersByTimeAsync(100);
  if (!outcome) throw new Error("did not settle");
  return outcome;
}
const faultIn = (outcome: { error?: unknown }): UpstreamFault => {
  expect(outcome.error).toBeInstanceOf(UpstreamError);
  return (outcome.error as UpstreamError).fault;
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("records", () => {
  it("a failed load counts on top of the previous ones, and the third in a row evicts", () => {
    const first = loadFailed(undefined, "down");
    expect(first).toEqual({ status: UpstreamStatus.lazy, failures: 1, reason: "down" });
    const second = loadFailed(first, "down");
    expect(second).toMatchObject({ failures: 2 });
    expect(loadFailed(second, "still down")).toEqual({ status: UpstreamStatus.evicted, reason: "still down" });
    expect(MAX_LOAD_FAILURES).toBe(3);
  });
});

describe("registry: state transitions", () => {

  it("lazy → ready on load: its tools join, it leaves the loadable list, and a second load opens nothing", async () => {
    const fakes = { lazy: upstream() };
    const store = memoryStore();
    const registry = new UpstreamRegistry(config([spec("lazy", { description: "a lazy one" })]), store, { connect: connector(fakes) });
    await registry.restore();
    expect(registry.loadable().map((s) => s.name)).toEqual(["lazy"]);
    expect(registry.dynamic).toBe(true);
    const loaded = await settle(registry.load("lazy"));
    expect(loaded.value).toMatchObject({ changed: true });
    expect(store.records.get("lazy")?.status).toBe(UpstreamStatus.ready);
    expect([...registry.tools().keys()]).toEqual(["lazy/echo"]);
    expect(registry.loadable()).toEqual([]);
    expect((await registry.load("lazy")).changed).toBe(false);
    expect(fakes.lazy.initialize).toBe(1);
  });

  it("failed loads are counted, the third evicts, and an evicted server is unknown from then on", async () => {
    const fakes = { lazy: upstream() };
    fakes.lazy.answer = () => down();
    const store = memoryStore();
    const registry = new UpstreamRegistry(config([spec("lazy", { description: "x" })]), store, { connect: connector(fakes) });
    for (let attempt = 1; attempt < MAX_LOAD_FAILURES; attempt++) {
      const failed = await settle(registry.load("lazy"));
      expect(failed.error).toMatchObject({ name: "LoadError", message: expect.stringContaining(`attempt ${attempt} of 3`) });
      expect(store.records.get("lazy")).toMatchObject({ status: UpstreamStatus.lazy, failures: attempt });
    }
    const third = await settle(registry.load("lazy"));
    expect(third.error).toMatchObject({ catalogChanged: true, message: expect.stringContaining("no longer be offered") });
    expect(store.records.get("lazy")?.status).toBe(UpstreamStatus.evicted);
    expect(registry.loadable()).toEqual([]);
    const unknown = await settle(registry.load("lazy"));
    expect(unknown.error).toMatchObject({ attempted: false });
  });

  it("concurrent loads of one server share one attempt", async () => {
    const fakes = { lazy: upstream() };
    const registry = new UpstreamRegistry(config([spec("lazy", { description: "x" })]), memoryStore(), { connect: connector(fakes) });
    const [a, b] = await Promise.all([settle(registry.load("lazy")), settle(registry.load("lazy"))]);
    expect(a.error).toBeUndefined();
    expect(a.value).toMatchObject({ changed: true });
    expect(a.value).toBe(b.value);
    expect(fakes.lazy.initialize).toBe(1);
  });

  it("an eager upstream that failed at start is shown unavailable, retried after RETRY_FAILED_MS, and announced when back", async () => {
    const fakes = { eager: upstream() };
    fakes.eager.answer = () => down();
    const changes: unknown[] = [];
    const registry = new UpstreamRegistry(config([spec("eager")]), memoryStore(), {
      connect: connector(fakes),
      onChange: (change) => changes.push(change),
    });
    await settle(registry.ensureEager());
    expect(registry.unavailable("eager")).toContain("503");
    expect(registry.view().groups).toMatchObject([{ server: "eager", state: "unavailable" }]);
    fakes.eager.answer = undefined;
    const tries = fakes.eager.initialize;
    registry.retryFailed(Date.now());
    // Give an early retry every chance to reach the upstream before counting.
    await vi.advanceTimersByTimeAsync(100);
    expect(fakes.eager.initialize).toBe(tries);
    await vi.advanceTimersByTimeAsync(RETRY_FAILED_MS);
    registry.retryFailed();
    await vi.advanceTimersByTimeAsync(100);
    expect(registry.unavailable("eager")).toBeUndefined();
    expect([...registry.tools().keys()]).toEqual(["eager/echo"]);
    expect(changes).toEqual([{ tools: true, resources: false, prompts: false }]);
  });

  it("the lists wait for eager upstreams at most EAGER_WAIT_MS; one still connecting is shown so, and announced when in", async () => {
    const fakes = { slow: upstream() };
    let answer: (() => void) | undefined;
    fakes.slow.answer = (m) => (m.method === "tools/list" ? new Promise<Response>((resolve) => (answer = () => resolve(down()))) : undefined);
    const changes: unknown[] = [];
    const registry = new UpstreamRegistry(config([spec("slow", { timeout: 30_000 })]), memoryStore(), {
      connect: connector(fakes),
      onChange: (change) => changes.push(change),
    });
    const start = Date.now();
    await settle(registry.ensureEager());
    expect(Date.now() - start).toBe(EAGER_WAIT_MS);
    expect(registry.view().groups).toEqual([{ server: "slow", state: "connecting" }]);
    expect(registry.connecting("slow")).toBe(true);
    fakes.slow.answer = undefined;
    expect(answer).toBeDefined();
    answer!();
    await settle(registry.settled("slow"));
    // The answer was a failure: the session shows it, and the host is told since the lists showed it connecting.
    expect(registry.unavailable("slow")).toContain("503");
    expect(changes).toEqual([{ tools: true, resources: false, prompts: false }]);
  });

  it("fast start: a cached catalog is shown at once, and the real one replaces it (the host told if they differ)", async () => {
    const fakes = { cached: upstream() };
    let answer: ((tools: unknown[]) => void) | undefined;
    fakes.cached.answer = (m) =>
      m.method === "tools/list" ? new Promise<Response>((resolve) => (answer = (tools) => resolve(json({ jsonrpc: "2.0", id: m.id, result: { tools } })))) : undefined;
    const stale = { capabilities: { tools: {} }, tools: [{ name: "old", inputSchema: { type: "object" as const } }], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    const put: string[] = [];
    const changes: unknown[] = [];
    const store = memoryStore();
    const registry = new UpstreamRegistry(config([spec("cached")]), store, {
      connect: connector(fakes),
      cache: { get: async () => stale, put: async (_s, catalog) => void put.push(catalog.tools.map((t) => t.name).join()), latest: async () => ({}) },
      onChange: (change) => changes.push(change),
    });
    // The lists do not wait: the upstream has not answered tools/list, and will not until told to. (Fake time: the
    // first step of settle() is enough, no timer had to run out.)
    const t0 = Date.now();
    await settle(registry.ensureEager());
    expect(Date.now() - t0).toBeLessThanOrEqual(100);
    expect(answer).toBeTypeOf("function");
    expect([...registry.tools().keys()]).toEqual(["cached/old"]);
    // Shown, not stored: an evicted object starts over.
    expect(store.records.has("cached")).toBe(false);
    answer?.([{ name: "new", inputSchema: { type: "object" } }]);
    await settle(registry.settled("cached"));
    expect([...registry.tools().keys()]).toEqual(["cached/new"]);
    expect(store.records.get("cached")?.status).toBe(UpstreamStatus.ready);
    expect(put).toEqual(["new"]);
    expect(changes).toEqual([{ tools: true, resources: false, prompts: false }]);
  });

  it("fast start: a real catalog equal to the cached one replaces it silently", async () => {
    const fakes = { same: upstream() };
    const cached = { capabilities: { tools: {} }, tools: [{ name: "echo", inputSchema: { type: "object" as const } }], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    fakes.same.answer = (m) => (m.method === "tools/list" ? json({ jsonrpc: "2.0", id: m.id, result: { tools: cached.tools } }) : undefined);
    const changes: unknown[] = [];
    const store = memoryStore();
    const registry = new UpstreamRegistry(config([spec("same")]), store, {
      connect: connector(fakes),
      cache: { get: async () => cached, put: async () => undefined, latest: async () => ({}) },
      onChange: (change) => changes.push(change),
    });
    await settle(registry.ensureEager());
    expect([...registry.tools().keys()]).toEqual(["same/echo"]);
    await settle(registry.settled("same"));
    expect(store.records.get("same")?.status).toBe(UpstreamStatus.ready);
    expect(changes).toEqual([]);
  });

  it("takes its event handlers at construction: onConnect runs on every new client before it is used", async () => {
    const fakes = { eager: upstream() };
    const connected: string[] = [];
    const registry = new UpstreamRegistry(config([spec("eager")]), memoryStore(), {
      connect: connector(fakes),
      onConnect: async (name, client) => void connected.push(`${name}:${client.closed}`),
    });
    await settle(registry.ensureEager());
    await settle(registry.reconnect("eager"));
    expect(connected).toEqual(["eager:false", "eager:false"]);
  });
});

describe("client pool", () => {
  it("concurrent connects share one attempt", async () => {
    const fakes = { up: upstream() };
    const pool = new ClientPool(connector(fakes));
    const [a, b] = await Promise.all([settle(pool.client(spec("up"))), settle(pool.client(spec("up")))]);
    expect(a.error).toBeUndefined();
    expect(a.value).toBeDefined();
    expect(a.value).toBe(b.value);
    expect(fakes.up.initialize).toBe(1);
    expect(pool.live("up")).toBe(a.value);
  });

  it("a connect still under way when the pool is closed is closed once it is up (its session ended), never kept", async () => {
    const fakes = { up: upstream() };
    let release: (() => void) | undefined;
    fakes.up.answer = (m) =>
      m.method === "notifications/initialized" ? new Promise<Response>((resolve) => (release = () => resolve(new Response(null, { status: 202 })))) : undefined;
    const fetch = fakes.up.fetch;
    let deletes = 0;
    fakes.up.fetch = async (input, init) => ((init?.method ?? "GET").toUpperCase() === "DELETE" && deletes++, fetch(input, init));
    const pool = new ClientPool(connector(fakes));
    const pending = settle(pool.client(spec("up")));
    await vi.advanceTimersByTimeAsync(10);
    expect(release).toBeDefined();
    await pool.closeAll();
    release!();
    const outcome = await pending;
    expect(outcome.error).toBeInstanceOf(UpstreamError);
    expect(pool.live("up")).toBeUndefined();
    expect(deletes).toBe(1);
  });

  it("records that settle after the session let its upstreams go are not stored", async () => {
    const fakes = { eager: upstream() };
    let release: (() => void) | undefined;
    fakes.eager.answer = (m) => (m.method === "tools/list" ? new Promise<Response>((resolve) => (release = () => resolve(down()))) : undefined);
    const store = memoryStore();
    const registry = new UpstreamRegistry(config([spec("eager")]), store, { connect: connector(fakes) });
    void registry.ensureEager();
    await vi.advanceTimersByTimeAsync(10);
    expect(release).toBeDefined();
    await registry.closeAll();
    release!();
    await settle(registry.settled("eager"));
    expect(store.records.has("eager")).toBe(false);
  });

  it("a connect that never answers is abandoned at the entry's deadline and forgotten, so the next one starts anew", async () => {
    const fakes = { up: upstream() };
    let aborted: AbortSignal | undefined;
    fakes.up.answer = (m) => (m.method === "initialize" ? new Promise<Response>(() => {}) : undefined);
    const hanging: FetchLike = (input, init) => {
      aborted = init?.signal ?? undefined;
      return fakes.up.fetch(input, init);
    };
    const pool = new ClientPool((s, signal) => UpstreamClient.connect(s, {}, { fetch: hanging, clientInfo: { name: "t", version: "1" } }, signal));
    const first = await settle(pool.client(spec("up", { timeout: 1_000 })));
    expect(faultIn(first)).toEqual({ kind: "timeout", ms: 1_000 });
    expect(aborted?.aborted).toBe(true);
    expect(pool.connecting("up")).toBe(false);
    fakes.up.answer = undefined;
    const second = await settle(pool.client(spec("up", { timeout: 1_000 })));
    expect(second.value?.closed).toBe(false);
    expect(fakes.up.initialize).toBe(2);
  });

  it("the reconnect budget: spent at once if need be, then one back every 6 s; a call that finds it spent fails fast", async () => {
    const fakes = { up: upstream() };
    fakes.up.answer = unreachable;
    const pool = new ClientPool(connector(fakes));
    const s = spec("up");
    // Each call tries twice (a failed connect is retried once after a backoff): five calls spend the budget.
    for (let call = 0; call < RECONNECTS_PER_MINUTE / 2; call++) {
      expect(faultIn(await settle(withClient(pool, s, async () => "never"))).kind).toBe("unreachable");
    }
    const tries = fakes.up.initialize;
    expect(tries).toBe(RECONNECTS_PER_MINUTE);
    const spent = faultIn(await settle(withClient(pool, s, async () => "never")));
    expect(spent).toMatchObject({ kind: "throttled", detail: expect.stringMatching(/next reconnect in \d+ s/) });
    expect(fakes.up.initialize).toBe(tries);
    await vi.advanceTimersByTimeAsync(6_000);
    fakes.up.answer = undefined;
    expect((await settle(withClient(pool, s, async () => "done"))).value).toBe("done");
  });
});

describe("withClient: what is repeated and when", () => {
  const call = (pool: ClientPool, s: UpstreamSpec, safeToRepeat?: boolean) =>
    settle(withClient(pool, s, (client) => client.callTool("echo", {}), safeToRepeat === undefined ? {} : { safeToRepeat }));

  it("a forgotten session: a new session and the request once more; forgotten again, it is reported", async () => {
    const fakes = { up: upstream() };
    fakes.up.answer = (m, session) => (m.method === "tools/call" && session === "s1" ? new Response("", { status: 404 }) : undefined);
    const pool = new ClientPool(connector(fakes));
    expect((await call(pool, spec("up"), false)).value?.content).toEqual([{ type: "text", text: "ok" }]);
    expect(fakes.up.sessions).toBe(2);
    fakes.up.answer = (m) => (m.method === "tools/call" ? new Response("", { status: 404 }) : undefined);
    expect(faultIn(await call(pool, spec("up")))).toEqual({ kind: "expired" });
    expect(fakes.up.sessions).toBe(3);
  });

  it("a 429 whose Retry-After fits in the timeout is waited out and repeated; a longer one is reported at once", async () => {
    const fakes = { up: upstream() };
    let retryAfter = "2";
    let limited = 1;
    fakes.up.answer = (m) =>
      m.method === "tools/call" && limited-- > 0 ? new Response("", { status: 429, headers: { "retry-after": retryAfter } }) : undefined;
    const pool = new ClientPool(connector(fakes));
    const start = Date.now();
    expect((await call(pool, spec("up"), false)).value).toBeDefined();
    expect(Date.now() - start).toBeGreaterThanOrEqual(2_000);
    expect(fakes.up.calls).toBe(2);
    retryAfter = "10";
    limited = 1;
    expect(faultIn(await call(pool, spec("up", { timeout: 5_000 }), true))).toMatchObject({ kind: "http", status: 429, retryAfterMs: 10_000 });
    expect(fakes.up.calls).toBe(3);
  });

  it("a broken connection is repeated on a new one only when safe to repeat, else an unknown outcome", async () => {
    const fakes = { up: upstream() };
    let breaks = 1;
    fakes.up.answer = (m) => (m.method === "tools/call" && breaks-- > 0 ? unreachable() : undefined);
    const pool = new ClientPool(connector(fakes));
    expect((await call(pool, spec("up"), true)).value).toBeDefined();
    expect([fakes.up.calls, fakes.up.initialize]).toEqual([2, 2]);
    breaks = 1;
    const unsafe = faultIn(await call(pool, spec("up"), false));
    expect(unsafe).toMatchObject({ kind: "unknown_outcome" });
    expect(fakes.up.calls).toBe(3);
  });

  it("an answer that breaks the protocol is not repeated, and its connection is not used again", async () => {
    const fakes = { up: upstream() };
    let broken = 1;
    fakes.up.answer = (m) =>
      m.method === "tools/call" && broken-- > 0 ? new Response("<html>", { headers: { "content-type": "text/html" } }) : undefined;
    const pool = new ClientPool(connector(fakes));
    expect(faultIn(await call(pool, spec("up"), true)).kind).toBe("protocol");
    expect(fakes.up.calls).toBe(1);
    expect(pool.live("up")).toBeUndefined();
    expect((await call(pool, spec("up"), true)).value).toBeDefined();
    expect(fakes.up.initialize).toBe(2);
  });

  it("a JSON-RPC error is the upstream's answer: reported, not repeated", async () => {
    const fakes = { up: upstream() };
    fakes.up.answer = (m) => (m.method === "tools/call" ? json({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "nope" } }) : undefined);
    const pool = new ClientPool(connector(fakes));
    expect(faultIn(await call(pool, spec("up"), true))).toMatchObject({ kind: "rpc", code: -32603 });
    expect(fakes.up.calls).toBe(1);
    expect(pool.live("up")).toBeDefined();
  });
});
