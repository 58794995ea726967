// How the objects of a team keep their eager catalogs as current as the team's (src/upstream/freshness.ts over the
// KV catalog cache, src/store/catalog-cache.ts): registries of two objects over one KV (a Map: KV is not reachable in
// Node) and one upstream whose tools change, spoken to by real upstream clients through an in-test fetch.
import { describe, expect, it } from "vitest";
import type { ResolvedConfig, UpstreamSpec } from "../../src/config/validate.ts";
import { CATALOG_FRESH_MS, kvCatalogCache } from "../../src/store/catalog-cache.ts";
import type { KvLike } from "../../src/store/kv.ts";
import type { ClientCapabilities } from "@modelcontextprotocol/client";
import { UpstreamClient, relayedCapabilities, type UpstreamHooks } from "../../src/upstream/client.ts";
import type { FetchLike } from "../../src/upstream/exchange.ts";
import type { RegistryStore, UpstreamRecord } from "../../src/upstream/records.ts";
import { UpstreamRegistry } from "../../src/upstream/registry.ts";
import { waitFor } from "../shared/wait.ts";

type Message = { id?: number; method: string; params?: Record<string, unknown> };

/**
 * One upstream whose tool names the test sets, plus `ask` for a client that declares elicitation (as server-everything
 * lists its elicitation tools); `held` keeps the next tools/list answers (with the names of when it was asked) until released.
 */
function changingUpstream(tools: string[]) {
  const up = { tools, lists: 0, held: undefined as Promise<void> | undefined };
  const eliciting = new Set<string>();
  const fetch: FetchLike = async (_input, init) => {
    if ((init?.method ?? "GET").toUpperCase() !== "POST") return new Response(null, { status: 405 });
    const message = JSON.parse(String(init?.body)) as Message;
    if (message.id === undefined) return new Response(null, { status: 202 });
    const reply = (result: unknown, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }), { headers: { "content-type": "application/json", ...headers } });
    if (message.method === "initialize") {
      const session = `s${eliciting.size}-${up.lists}-${Math.random()}`;
      if ((message.params?.["capabilities"] as { elicitation?: unknown } | undefined)?.elicitation) eliciting.add(session);
      return reply({ protocolVersion: message.params?.["protocolVersion"], capabilities: { tools: {} }, serverInfo: { name: "fake", version: "1" } }, { "mcp-session-id": session });
    }
    if (message.method !== "tools/list") return reply({});
    up.lists++;
    const names = [...up.tools, ...(eliciting.has(new Headers(init?.headers).get("mcp-session-id") ?? "") ? ["ask"] : [])];
    if (up.held) await up.held;
    return reply({ tools: names.map((name) => ({ name, inputSchema: { type: "object" } })) });
  };
  return Object.assign(up, { fetch });
}

const spec = { name: "up", transport: "streamable-http", url: "https://up.example/mcp", headers: {}, timeout: 5_000 } as UpstreamSpec;
const config = { mode: "multi", upstreams: [spec] } as ResolvedConfig;

function memoryKv(): KvLike & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return { values, get: async (k) => values.get(k) ?? null, put: async (k, v) => void values.set(k, v), delete: async (k) => void values.delete(k), list: async () => [] };
}

/** A team: its KV, one upstream, and the tools changes its objects tell it of. */
function team(tools: string[]) {
  const kv = memoryKv();
  const upstream = changingUpstream(tools);
  const told: Array<{ server: string; digest: string }> = [];
  /** One object of the team: a registry over its own storage, sharing the team's KV; `host`: what its host can do. */
  const object = async (host: ClientCapabilities = {}) => {
    const records = new Map<string, UpstreamRecord>();
    const store: RegistryStore = { all: async () => new Map(records), put: async (name, record) => void records.set(name, record) };
    const registry = new UpstreamRegistry(config, store, {
      connect: (s, signal) => UpstreamClient.connect(s, {}, { fetch: upstream.fetch, clientInfo: { name: "test", version: "1" }, hooks: hooksOf(host) }, signal),
      cache: kvCatalogCache(kv, "t", { capabilities: () => relayedCapabilities(host), toolsChanged: (server, digest) => void told.push({ server, digest }) }),
    });
    await registry.restore();
    await registry.ensureEager();
    return registry;
  };
  return { kv, upstream, told, object };
}

/** A host that can do `host` and is never asked anything here. */
const hooksOf = (host: ClientCapabilities): UpstreamHooks => ({
  capabilities: () => host,
  relay: async () => {
    throw new Error("not asked in these tests");
  },
  notify: () => {},
});

const names = (registry: UpstreamRegistry) => [...registry.tools().keys()];
const checkedAt = (kv: KvLike & { values: Map<string, string> }) => Date.parse((JSON.parse(kv.values.get("team/t/catalog/up")!) as { checkedAt: string }).checkedAt);

describe("catalog freshness across a team's objects", () => {
  it("keeps each read anew for the team: another object shows it at its next freshen, and a change of tools is told once", async () => {
    const t = team(["echo"]);
    const a = await t.object();
    const b = await t.object();
    // b was shown the cached catalog at once; its own reading follows.
    expect(await waitFor(() => t.upstream.lists === 2)).toBe(true);
    expect(t.told).toEqual([]);

    t.upstream.tools = ["echo", "added"];
    await a.refresh("up");
    expect(names(a)).toEqual(["up/echo", "up/added"]);
    expect(t.told).toHaveLength(1);
    expect(t.told[0]!.server).toBe("up");

    expect(names(b)).toEqual(["up/echo"]);
    await b.freshen(CATALOG_FRESH_MS);
    expect(names(b)).toEqual(["up/echo", "up/added"]);
    // b reads the same anew: nothing new for the team, nothing told.
    await b.refresh("up");
    expect(t.told).toHaveLength(1);
    expect(t.upstream.lists).toBe(3 + 1);
  });

  it("a read overtaken by another object's later read is not written: the later reading stays, and is shown", async () => {
    const t = team(["echo"]);
    const a = await t.object();
    const b = await t.object();
    expect(await waitFor(() => t.upstream.lists === 2)).toBe(true);
    // b asks first and is answered last, with the tools of when it asked.
    let release = () => {};
    t.upstream.held = new Promise<void>((resolve) => (release = resolve));
    const slow = b.refresh("up");
    expect(await waitFor(() => t.upstream.lists === 3)).toBe(true);
    t.upstream.held = undefined;
    t.upstream.tools = ["echo", "added"];
    await a.refresh("up");
    // Meanwhile b shows the team's newer reading.
    await b.freshen(CATALOG_FRESH_MS);
    expect(names(b)).toEqual(["up/echo", "up/added"]);
    release();
    await slow;
    expect(names(b)).toEqual(["up/echo", "up/added"]);
    expect(JSON.parse(t.kv.values.get("team/t/catalog/up")!).catalog.tools.map((x: { name: string }) => x.name)).toEqual(["echo", "added"]);
    expect(t.told).toHaveLength(1);
  });

  it("reads anew, in the background, a catalog nobody of the team read for the freshness asked; a change is told", async () => {
    const t = team(["echo"]);
    const a = await t.object();
    const stamped = checkedAt(t.kv);
    // Still current: nothing read.
    await a.freshen(CATALOG_FRESH_MS);
    expect(t.upstream.lists).toBe(1);
    t.upstream.tools = ["echo", "added"];
    // As if CATALOG_FRESH_MS had passed: the list is served as it was, and the read anew follows.
    await a.freshen(CATALOG_FRESH_MS, Date.now() + CATALOG_FRESH_MS);
    expect(names(a)).toEqual(["up/echo"]);
    expect(await waitFor(() => names(a).includes("up/added"))).toBe(true);
    expect(t.upstream.lists).toBe(2);
    expect(await waitFor(() => t.told.length === 1)).toBe(true);
    expect(checkedAt(t.kv)).toBeGreaterThanOrEqual(stamped);
  });

  it("keeps readings made with other client capabilities apart: an object takes none of them, and they tell the team nothing", async () => {
    const t = team(["echo"]);
    const plain = await t.object();
    const asking = await t.object({ elicitation: {} });
    expect(await waitFor(() => t.upstream.lists === 2)).toBe(true);
    expect(names(plain)).toEqual(["up/echo"]);
    expect(names(asking)).toEqual(["up/echo", "up/ask"]);
    expect([...t.kv.values.keys()].sort()).toEqual(["team/t/catalog/up", expect.stringMatching(/^team\/t\/catalog\/up\/[0-9a-f]{16}$/)]);
    await plain.freshen(CATALOG_FRESH_MS);
    await asking.freshen(CATALOG_FRESH_MS);
    expect(names(plain)).toEqual(["up/echo"]);
    expect(names(asking)).toEqual(["up/echo", "up/ask"]);
    expect(t.told).toEqual([]);
  });
});
