// Config validation, the published JSON Schema, and what may be shown of a config.
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { configJsonSchema } from "../../src/config/json-schema.ts";
import { credentialWarnings, maskHeaderValue, redactConfig } from "../../src/config/redact.ts";
import { kvKeys } from "../../src/config/keys.ts";
import { loadTeamConfig, loadTeamView, loadToken, type KvText } from "../../src/config/load.ts";
import { teamDefaultView } from "../../src/edge/common/team-view.ts";
import { parseConfig, parseConfigText, parseStoredConfig } from "../../src/config/validate.ts";
import { resolveView } from "../../src/config/view.ts";
import { decideToolAccess } from "../../src/config/tool-access.ts";
import { SessionStore, sessionView, type SessionRecord, type SessionStorage } from "../../src/session/state.ts";
import { kvCatalogCache } from "../../src/store/catalog-cache.ts";
import type { KvLike } from "../../src/store/kv.ts";
import { checkPins } from "../../src/store/pins.ts";

const errorsOf = (raw: unknown): string[] => {
  const r = parseConfig(raw);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.errors;
};

describe("config-file mode", () => {
  it("normalizes entries: http is streamable-http, defaults filled, disabled entries dropped, order kept", () => {
    const r = parseConfig({
      mcp: {
        b: { transport: "http", url: "https://b.example/mcp" },
        a: { transport: "streamable-http", url: "https://a.example/mcp", headers: { "X-Key": "${secret:K}" }, timeout: 0 },
        off: { url: "https://off.example/mcp", enabled: false },
        lazy: { url: "https://l.example/mcp", description: "  Searches docs.  " },
        legacy: { transport: "sse", url: "https://s.example/sse" },
      },
    });
    expect(r).toEqual({
      ok: true,
      config: {
        mode: "multi",
        catalogBudget: 1500,
        upstreams: [
          { name: "b", transport: "streamable-http", url: "https://b.example/mcp", headers: {}, timeout: 30000 },
          { name: "a", transport: "streamable-http", url: "https://a.example/mcp", headers: { "X-Key": "${secret:K}" }, timeout: 0 },
          { name: "lazy", transport: "streamable-http", url: "https://l.example/mcp", headers: {}, timeout: 30000, description: "Searches docs." },
          { name: "legacy", transport: "sse", url: "https://s.example/sse", headers: {}, timeout: 30000 },
        ],
      },
    });
  });

  it("refuses stdio with the way out, naming the entry", () => {
    const errors = errorsOf({ mcp: { fs: { transport: "stdio", command: "npx", args: ["x"] } } });
    expect(errors[0]).toMatch(/^mcp\.fs\.transport: stdio servers cannot run at the edge: run it behind a stdio-to-HTTP bridge/);
    expect(errors.join("\n")).toContain('mcp.fs: unknown keys "command", "args"');
  });

  it("names unknown transports, bad URLs, unknown keys, bad names and bad values", () => {
    expect(errorsOf({ mcp: { x: { transport: "websocket", url: "https://x.example" } } })).toEqual([
      'mcp.x.transport: unknown transport "websocket": use "streamable-http" (or its other spelling "http"), or "sse" for the older HTTP+SSE transport',
    ]);
    expect(errorsOf({ mcp: { x: { url: "not a url" } } })[0]).toMatch(/^mcp\.x\.url: a valid http\(s\) URL is required/);
    expect(errorsOf({ mcp: { x: { url: "ftp://x.example" } } })[0]).toMatch(/^mcp\.x\.url:/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", tiemout: 5 } } })).toEqual(['mcp.x: unknown key "tiemout"']);
    expect(errorsOf({ mcp: { "bad name": { url: "https://x.example" } } })[0]).toMatch(/^mcp\.bad name: server names are/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", timeout: -1 } } })[0]).toMatch(/^mcp\.x\.timeout:/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", description: "   " } } })[0]).toMatch(/^mcp\.x\.description: a description cannot be empty/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", headers: { "Bad Header": "v" } } } })[0]).toMatch(/not a valid HTTP header name/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", headers: { "X-Dynmcp-Origin": "1" } } } })[0]).toMatch(/headers named x-dynmcp-… are the proxy's own/);
    expect(errorsOf({ mcp: {}, extra: 1 })).toEqual(['(root): unknown key "extra"']);
  });
});

describe("single-MCP mode", () => {
  it("takes one entry at the top level", () => {
    expect(parseConfig({ $schema: "x", transport: "http", url: "https://one.example/mcp" })).toEqual({
      ok: true,
      config: {
        mode: "single",
        catalogBudget: 1500,
        upstreams: [{ name: "mcp", transport: "streamable-http", url: "https://one.example/mcp", headers: {}, timeout: 30000 }],
      },
    });
  });

  it("takes validate_arguments beside url; the spec carries it only when it is false", () => {
    const specOf = (raw: unknown) => {
      const r = parseConfig(raw);
      if (!r.ok) throw new Error(r.errors.join("; "));
      return r.config.upstreams;
    };
    expect(specOf({ url: "https://one.example/mcp", validate_arguments: false })[0]).toMatchObject({ name: "mcp", validate_arguments: false });
    expect(specOf({ url: "https://one.example/mcp", validate_arguments: true })[0]).not.toHaveProperty("validate_arguments");
    expect(specOf({ mcp: { a: { url: "https://a.example/mcp", validate_arguments: false }, b: { url: "https://b.example/mcp" } } }).map((u) => u.validate_arguments)).toEqual([false, undefined]);
    expect(errorsOf({ mcp: { a: { url: "https://a.example/mcp", validate_arguments: "no" } } })[0]).toMatch(/^mcp\.a\.validate_arguments:/);
  });

  it("refuses a description, since it has no load_mcp", () => {
    expect(errorsOf({ url: "https://one.example/mcp", description: "lazy" })).toEqual([
      "description: single-MCP mode has no load_mcp, so its entry cannot be lazy: remove description",
    ]);
  });
});

describe("malformed input", () => {
  it("reports JSON syntax errors and non-objects", () => {
    const r = parseConfigText("{ nope");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]).toMatch(/^\(root\): not valid JSON/);
    expect(errorsOf([])).toEqual(["(root): the config must be a JSON object"]);
    expect(errorsOf(null)).toEqual(["(root): the config must be a JSON object"]);
  });
});

describe("published JSON Schema", () => {
  it("is committed exactly as generated from the zod schema (run npm run schema)", () => {
    expect(JSON.parse(readFileSync("config.schema.json", "utf8"))).toEqual(configJsonSchema());
  });

  it("the example configs validate", () => {
    for (const file of ["examples/config-file.json", "examples/single.json"]) {
      expect(parseConfigText(readFileSync(file, "utf8")).ok, file).toBe(true);
    }
  });
});

describe("reading a config back", () => {
  it("keeps secret references and masks literal values", () => {
    expect(maskHeaderValue("Bearer ${secret:GH}")).toBe("Bearer ${secret:GH}");
    expect(maskHeaderValue("${secret:A}:${secret:B}")).toBe("${secret:A}***${secret:B}");
    expect(maskHeaderValue("Bearer ghp_live_value")).toBe("***");
    expect(maskHeaderValue("token-${secret:A}-suffix")).toBe("***${secret:A}***");
    expect(maskHeaderValue("")).toBe("");
    const raw = { mcp: { a: { url: "https://a.example", headers: { Authorization: "Bearer sk-1234567890", "X-Ref": "${secret:K}" } } } };
    expect(redactConfig(raw)).toEqual({
      mcp: { a: { url: "https://a.example", headers: { Authorization: "***", "X-Ref": "${secret:K}" } } },
    });
    expect(JSON.stringify(redactConfig(raw))).not.toContain("sk-1234567890");
  });

  it("warns about literal credentials but not about references or plain values", () => {
    const warnings = credentialWarnings({
      mcp: {
        a: { headers: { Authorization: "Bearer abcdefgh12345", "X-Region": "eu", "X-Api-Key": "${secret:K}" } },
        b: { headers: { "X-Anything": "ghp_0123456789abcdef" } },
      },
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^mcp\.a\.headers\.Authorization: the value looks like a credential/);
    expect(warnings[1]).toMatch(/^mcp\.b\.headers\.X-Anything:/);
  });
});

describe("the normalized spec comes from the schema", () => {
  it("normalizes an entry in a fixed key order (a reload compares specs as JSON)", () => {
    const r = parseConfig({ mcp: { a: { transport: "http", url: "https://a.example/mcp", description: "Lazy.", tools: { deny: ["x*"] } } } });
    if (!r.ok) throw new Error(r.errors.join("; "));
    const [spec] = r.config.upstreams;
    expect(JSON.stringify(spec)).toBe(
      JSON.stringify({ name: "a", transport: "streamable-http", url: "https://a.example/mcp", headers: {}, timeout: 30000, description: "Lazy.", tools: { deny: ["x*"] } }),
    );
    expect(r.config).not.toHaveProperty("pinTools");
    expect(r.config).not.toHaveProperty("invalid");
  });
});

describe("stored configs are read leniently", () => {
  it("serves the valid entries and lists each broken one with its reason", () => {
    const r = parseStoredConfig({
      pin_tools: true,
      mcp: {
        good: { url: "https://good.example/mcp" },
        off: { url: "https://off.example/mcp", enabled: false },
        bad: { url: "ftp://bad.example" },
        "bad name!": { url: "https://x.example" },
        typo: { url: "https://t.example", tiemout: 5 },
      },
    });
    if (!r.ok) throw new Error(r.errors.join("; "));
    expect(r.config.mode).toBe("multi");
    expect(r.config.pinTools).toBe(true);
    expect(r.config.upstreams.map((u) => u.name)).toEqual(["good"]);
    expect(r.config.invalid?.map((i) => i.name)).toEqual(["bad", "bad?name?", "typo"]);
    expect(r.config.invalid?.[0]?.reason).toMatch(/http\(s\) URL/);
    expect(r.config.invalid?.[2]?.reason).toMatch(/unknown key "tiemout"/);
  });

  it("fails only what has no entries to judge, and is strict about single-MCP mode", () => {
    expect(parseStoredConfig({ mcp: [] }).ok).toBe(false);
    expect(parseStoredConfig({ url: "ftp://x" }).ok).toBe(false);
    expect(parseStoredConfig("nope").ok).toBe(false);
  });
});

describe("the team's default view", () => {
  it("is read from either shape, leniently when stored, and a session's view is asked, else the team's, else meta", () => {
    const multi = parseConfig({ view: "code", mcp: { a: { url: "https://a.example/mcp" } } });
    const single = parseConfig({ view: "direct", url: "https://a.example/mcp" });
    expect(multi.ok && multi.config.view).toBe("code");
    expect(single.ok && single.config.view).toBe("direct");
    expect(errorsOf({ view: "all", mcp: {} }).join()).toMatch(/view: unknown view "all": use "meta".*"direct".*"code"/);
    const stored = parseStoredConfig({ view: "all", mcp: { a: { url: "https://a.example/mcp" }, b: { url: "ftp://b" } } });
    expect(stored.ok && stored.config.view).toBeUndefined();
    expect(stored.ok && stored.config.upstreams.map((u) => u.name)).toEqual(["a"]);

    // Code view consent: globs and destructive tools, both shapes; a broken stored list asks before every call.
    const asking = parseConfig({ approve: ["*delete*"], approve_destructive: true, mcp: { a: { url: "https://a.example/mcp" } } });
    expect(asking.ok && asking.config.approve).toEqual({ globs: ["*delete*"], destructive: true });
    const quiet = parseConfig({ mcp: { a: { url: "https://a.example/mcp" } } });
    expect(quiet.ok && quiet.config.approve).toBeUndefined();
    expect(errorsOf({ approve: "*", mcp: {} }).join()).toMatch(/approve: /);
    const broken = parseStoredConfig({ approve: [""], mcp: { a: { url: "https://a.example/mcp" } } });
    expect(broken.ok && broken.config.approve).toEqual({ globs: ["**"], destructive: false });
    // The top-level keys are a rule for everyone: globs over the bare name or `server/tool`, and destructive tools.
    const asks = (approve: { globs: string[]; destructive: boolean } | undefined, name: string, destructive = false) =>
      decideToolAccess({ mode: "multi", approve }, { kind: "token", id: "t" }, { name: `github/${name}`, destructive }).access === "approve";
    expect(asks({ globs: ["*delete*"], destructive: false }, "delete_issue")).toBe(true);
    expect(asks({ globs: ["github/*"], destructive: false }, "list_issues")).toBe(true);
    expect(asks({ globs: ["*delete*"], destructive: false }, "list_issues", true)).toBe(false);
    expect(asks({ globs: [], destructive: true }, "list_issues", true)).toBe(true);
    expect(asks({ globs: [], destructive: true }, "create_issue")).toBe(false);
    expect(asks(undefined, "delete_issue")).toBe(false);

    expect(resolveView(undefined, undefined, true)).toEqual({ view: "meta" });
    expect(resolveView(undefined, "code", true)).toEqual({ view: "code" });
    expect(resolveView("direct", "code", false)).toEqual({ view: "direct" });
    expect(resolveView(undefined, "code", false)).toEqual({ refused: expect.stringMatching(/^Code mode is off .*so the team config's view, "code", is not served; use "meta" or "direct"\.$/) });
    // The 2026-07-28 era serves no direct view: its refusal points at a 2025 session for that.
    expect(resolveView("code", undefined, false, true)).toEqual({ refused: expect.stringMatching(/so the view asked for, "code", is not served; use "meta" \(a 2025 session, opened with initialize, also serves "direct"\)\.$/) });
    expect(resolveView("code", undefined, false)).toEqual({ refused: expect.stringMatching(/so the view asked for, "code", is not served/) });
  });
});

/** A KV binding holding one text value. */
const kvWith = (values: Record<string, string>) =>
  ({ get: async (key: string) => values[key] ?? null }) satisfies KvText;

describe("the team's default view at the 2026 router", () => {
  it("reads the config's view alone, leniently, and keeps it per team for the token cache's time, no longer", async () => {
    const stored: Record<string, string> = { [kvKeys.config("a")]: JSON.stringify({ view: "code", mcp: { x: { url: "not a url" } } }) };
    let reads = 0;
    const kv = { get: async (key: string) => (reads++, stored[key] ?? null) } satisfies KvText;
    expect(await loadTeamView(kv, "a")).toBe("code");
    expect(await loadTeamView(kvWith({ [kvKeys.config("b")]: "{" }), "b")).toBeUndefined();
    expect(await loadTeamView(kvWith({ [kvKeys.config("b")]: '{"view":"sideways"}' }), "b")).toBeUndefined();
    expect(await loadTeamView(kvWith({}), "b")).toBeUndefined();

    let now = 1_000_000;
    const clock = () => now;
    reads = 0;
    expect(await teamDefaultView(kv, "a", 30, clock)).toBe("code");
    stored[kvKeys.config("a")] = JSON.stringify({ mcp: {} });
    now += 29_999;
    expect(await teamDefaultView(kv, "a", 30, clock)).toBe("code");
    expect(reads).toBe(1);
    now += 1;
    expect(await teamDefaultView(kv, "a", 30, clock)).toBeUndefined();
    expect(reads).toBe(2);
    // 0 keeps nothing; more than 60 s is held to 60.
    expect(await teamDefaultView(kv, "a", 0, clock)).toBeUndefined();
    expect(reads).toBe(3);
    stored[kvKeys.config("c")] = JSON.stringify({ view: "direct", mcp: {} });
    expect(await teamDefaultView(kv, "c", 3600, clock)).toBe("direct");
    stored[kvKeys.config("c")] = JSON.stringify({ mcp: {} });
    now += 60_000;
    expect(await teamDefaultView(kv, "c", 3600, clock)).toBeUndefined();
  });
});

describe("stored KV records are read through schemas", () => {
  it("reads a token record, and takes a malformed one as no token (401), once logged without its contents", async () => {
    const good = { hash: "ab".repeat(32), createdAt: "2026-01-01T00:00:00Z" };
    expect(await loadToken(kvWith({ [kvKeys.token("t", "id")]: JSON.stringify(good) }), "t", "id")).toEqual(good);
    expect(await loadToken(kvWith({}), "t", "id")).toBeNull();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const bad of ["{not json", JSON.stringify({ hash: 5, createdAt: "x" }), "null", JSON.stringify({ hash: "leaked-hash" })]) {
        expect(await loadToken(kvWith({ [kvKeys.token("t", "bad")]: bad }), "t", "bad"), bad).toBeNull();
      }
      expect(errors).toHaveBeenCalledTimes(1);
      expect(String(errors.mock.calls[0]?.[0])).toContain("team/t/token/bad");
      expect(String(errors.mock.calls[0]?.[0])).not.toContain("leaked");
    } finally {
      errors.mockRestore();
    }
  });

  it("reads a config that is not JSON as a failed config, not a crash", async () => {
    const r = await loadTeamConfig(kvWith({ [kvKeys.config("t")]: "{" }), "t");
    expect(r?.ok).toBe(false);
  });

  it("takes a malformed cached catalog as a cache miss", async () => {
    const spec = { name: "a", transport: "streamable-http" as const, url: "https://a.example", headers: {}, timeout: 30000 };
    const store = new Map<string, string>();
    const kv: KvLike = { get: async (k) => store.get(k) ?? null, put: async (k, v) => void store.set(k, v), delete: async () => {}, list: async () => [] };
    const cache = kvCatalogCache(kv, "t");
    const catalog = { capabilities: {}, tools: [{ name: "x", inputSchema: { type: "object" } }], resources: [], resourceTemplates: [], prompts: [], notes: [] };
    await cache.put(spec, catalog as never, Date.now());
    expect(await kvCatalogCache(kv, "t").get(spec)).toEqual(catalog);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const key = kvKeys.catalog("t", "a");
      const saved = JSON.parse(store.get(key)!);
      for (const bad of ["{", "[]", JSON.stringify({ ...saved, catalog: { ...catalog, tools: [{ title: "no name" }] } })]) {
        store.set(key, bad);
        expect(await kvCatalogCache(kv, "t").get(spec)).toBeUndefined();
      }
    } finally {
      errors.mockRestore();
    }
  });

  it("withholds a tool whose pin metadata is malformed (fail closed, not re-pinned)", async () => {
    const puts: string[] = [];
    const kv: KvLike = {
      get: async () => null,
      put: async (k) => void puts.push(k),
      delete: async () => {},
      list: async (prefix) => [{ name: `${prefix}x`, metadata: { hash: 42 } }],
    };
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const outcome = await checkPins(kv, "t", "a", [{ name: "x", inputSchema: { type: "object" } }]);
      expect(outcome.withheld).toEqual(["x"]);
      expect(outcome.allowed).toEqual([]);
    } finally {
      errors.mockRestore();
      logs.mockRestore();
    }
  });
});

/** A Durable Object storage holding plain values (get, list by prefix). */
function storageWith(values: Record<string, unknown>): SessionStorage {
  const map = new Map(Object.entries(values));
  return {
    get: async (key: string) => map.get(key),
    list: async ({ prefix }: { prefix: string }) => new Map([...map].filter(([k]) => k.startsWith(prefix))),
  } as unknown as SessionStorage;
}

describe("session storage is read through schemas", () => {
  const config = {
    mode: "multi",
    upstreams: [{ name: "a", transport: "streamable-http", url: "https://a.example/mcp", headers: {}, timeout: 30000, description: "Lazy." }],
    pinTools: true,
  };
  const session = { team: "t", tokenId: "id", sessionId: "s", createdAt: "2026-01-01T00:00:00Z", config };
  const catalog = { capabilities: {}, tools: [{ name: "x", inputSchema: { type: "object" } }], resources: [], resourceTemplates: [], prompts: [], notes: [] };

  it("reads well-formed records as stored", async () => {
    const store = new SessionStore(
      storageWith({
        session,
        transport: { sessionId: "s", initialized: true, initializeParams: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "h", version: "1" } } },
        logLevel: "warning",
        activity: 1234,
        "upstream:a": { status: "ready", catalog },
        "upstream:b": { status: "lazy", failures: 1, reason: "down" },
        "link:1": { seq: 1, uri: "file:///x", upstream: "a" },
      }),
    );
    expect(await store.session()).toEqual(session);
    expect((await store.transport())?.initialized).toBe(true);
    expect(await store.logLevel()).toBe("warning");
    expect(await store.activity()).toBe(1234);
    expect([...(await store.all()).keys()]).toEqual(["a", "b"]);
    expect(await store.links()).toEqual([{ seq: 1, uri: "file:///x", upstream: "a" }]);
  });

  it("reads malformed records as absent, logged once by key and never by content", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const store = new SessionStore(
        storageWith({
          session: { ...session, config: { ...config, upstreams: [{ name: "a", url: "not a url", secret: "leaked" }] } },
          transport: { initialized: "yes" },
          logLevel: "loud",
          activity: "yesterday",
          "upstream:a": { status: "ready", catalog: { tools: "leaked" } },
          "upstream:b": { status: "gone" },
          "upstream:c": { status: "failed", reason: "down", at: 5 },
          "link:1": { seq: "one", uri: "file:///leaked" },
          "link:2": { seq: 2, uri: "file:///y", upstream: "a" },
        }),
      );
      expect(await store.session()).toBeUndefined();
      expect(await store.session()).toBeUndefined();
      expect(await store.transport()).toBeUndefined();
      expect(await store.logLevel()).toBeUndefined();
      expect(await store.activity()).toBeUndefined();
      expect([...(await store.all()).keys()]).toEqual(["c"]);
      expect(await store.links()).toEqual([{ seq: 2, uri: "file:///y", upstream: "a" }]);
      const lines = errors.mock.calls.map((c) => String(c[0]));
      expect(lines.filter((l) => l.includes("at session "))).toHaveLength(1);
      expect(lines.join("\n")).not.toContain("leaked");
    } finally {
      errors.mockRestore();
    }
  });

  it("reads a session record from before views as a meta-tools session, and keeps a stored view", async () => {
    expect(sessionView((await new SessionStore(storageWith({ session })).session())!)).toBe("meta");
    const direct = await new SessionStore(storageWith({ session: { ...session, view: "direct" } })).session();
    expect(direct && sessionView(direct)).toBe("direct");
    const code = await new SessionStore(storageWith({ session: { ...session, view: "code" } })).session();
    expect(code && sessionView(code)).toBe("code");
    // A view this proxy does not know is an unreadable record (logged by its key): the session answers 404.
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(await new SessionStore(storageWith({ session: { ...session, view: "canvas" } })).session()).toBeUndefined();
    } finally {
      errors.mockRestore();
    }
  });

  /** A storage that counts reads by key, can hold a read back until released, and takes writes. */
  function countingStorage(values: Record<string, unknown>) {
    const map = new Map(Object.entries(values));
    const reads = new Map<string, number>();
    let held: Array<() => void> | undefined;
    const storage = {
      get: async (key: string) => {
        reads.set(key, (reads.get(key) ?? 0) + 1);
        const value = map.get(key);
        if (held) await new Promise<void>((release) => held!.push(release));
        return value;
      },
      put: async (key: string, value: unknown) => void map.set(key, value),
      delete: async (key: string) => map.delete(key),
      deleteAll: async () => map.clear(),
      list: async ({ prefix }: { prefix: string }) => new Map([...map].filter(([k]) => k.startsWith(prefix))),
    } as unknown as SessionStorage;
    return {
      storage,
      reads: (key: string) => reads.get(key) ?? 0,
      hold: () => void (held = []),
      release: () => {
        const waiting = held ?? [];
        held = undefined;
        for (const release of waiting) release();
      },
    };
  }

  it("reads the session record and the reload flag once per store, and keeps what it writes itself", async () => {
    const s = countingStorage({ session, reload: true });
    const store = new SessionStore(s.storage);
    expect(await store.session()).toEqual(session);
    expect(await store.session()).toEqual(session);
    expect(await store.reloadPending()).toBe(true);
    expect(await store.reloadPending()).toBe(true);
    expect([s.reads("session"), s.reads("reload")]).toEqual([1, 1]);

    await store.setReloadPending(false);
    expect(await store.reloadPending()).toBe(false);
    const next = { ...session, config: { ...config, pinTools: undefined } } as SessionRecord;
    await store.putSession(next);
    expect(await store.session()).toBe(next);
    expect([s.reads("session"), s.reads("reload")]).toEqual([1, 1]);

    // A new store on the same storage (a new instance of the object) reads each once, and finds what was written.
    const again = new SessionStore(s.storage);
    expect(await again.session()).toEqual(next);
    expect(await again.reloadPending()).toBe(false);
    expect([s.reads("session"), s.reads("reload")]).toEqual([2, 2]);

    await again.clear();
    expect(await again.session()).toBeUndefined();
    expect(await again.reloadPending()).toBe(false);
    expect([s.reads("session"), s.reads("reload")]).toEqual([2, 2]);
  });

  it("does not keep what a read found when the store wrote the key while that read was under way", async () => {
    const s = countingStorage({ session });
    const store = new SessionStore(s.storage);
    s.hold();
    const early = store.session();
    const earlyReload = store.reloadPending();
    const next = { ...session, createdAt: "2026-02-02T00:00:00Z" } as SessionRecord;
    await store.putSession(next);
    await store.setReloadPending(true);
    s.release();
    expect(await early).toEqual(session);
    expect(await earlyReload).toBe(false);
    expect(await store.session()).toBe(next);
    expect(await store.reloadPending()).toBe(true);
  });
});

describe("promote", () => {
  const mcp = { gh: { url: "https://gh.example/mcp" } };

  it("keeps the promoted names once each, in order, in both modes", () => {
    const multi = parseConfig({ promote: ["gh/b", "gh/a", "gh/b"], mcp });
    expect(multi.ok && multi.config.promote).toEqual(["gh/b", "gh/a"]);
    const single = parseConfig({ url: "https://one.example/mcp", promote: ["search"] });
    expect(single.ok && single.config.promote).toEqual(["search"]);
    const none = parseConfig({ mcp });
    expect(none.ok && "promote" in none.config).toBe(false);
  });

  it("refuses more than 20, empty names and a non-list with the path named", () => {
    const many = parseConfig({ promote: Array.from({ length: 21 }, (_, i) => `gh/t${i}`), mcp });
    expect(many.ok).toBe(false);
    expect(!many.ok && many.errors.join("\n")).toMatch(/^promote: /m);
    expect(parseConfig({ promote: [""], mcp }).ok).toBe(false);
    expect(parseConfig({ promote: "gh/a", mcp }).ok).toBe(false);
  });

  it("a stored config read leniently promotes nothing when its list is broken, and keeps a good list", () => {
    const broken = parseStoredConfig({ promote: "gh/a", mcp: { ...mcp, bad: { url: 3 } } });
    expect(broken.ok && broken.config.promote).toBeUndefined();
    const good = parseStoredConfig({ promote: ["gh/a"], mcp: { ...mcp, bad: { url: 3 } } });
    expect(good.ok && good.config.promote).toEqual(["gh/a"]);
  });
});

describe("catalog_budget", () => {
  const mcp = { gh: { url: "https://gh.example/mcp" } };

  it("is 1500 tokens unless set, in both modes, and keeps what a config sets", () => {
    const unset = parseConfig({ mcp });
    expect(unset.ok && unset.config.catalogBudget).toBe(1500);
    const multi = parseConfig({ catalog_budget: 4000, mcp });
    expect(multi.ok && multi.config.catalogBudget).toBe(4000);
    const single = parseConfig({ url: "https://one.example/mcp", catalog_budget: 800 });
    expect(single.ok && single.config.catalogBudget).toBe(800);
  });

  it("refuses a budget under the meta-tools' own cost, over 200,000, or not a whole number, saying why", () => {
    const low = parseConfig({ catalog_budget: 100, mcp });
    expect(!low.ok && low.errors.join("\n")).toMatch(/^catalog_budget: catalog_budget is at least 600 tokens/m);
    expect(parseConfig({ catalog_budget: 200_001, mcp }).ok).toBe(false);
    expect(parseConfig({ catalog_budget: 1500.5, mcp }).ok).toBe(false);
    expect(parseConfig({ catalog_budget: "1500", mcp }).ok).toBe(false);
  });

  it("a stored config read leniently keeps a good budget and reads a broken one as the default", () => {
    const good = parseStoredConfig({ catalog_budget: 3000, mcp: { ...mcp, bad: { url: 3 } } });
    expect(good.ok && good.config.catalogBudget).toBe(3000);
    const broken = parseStoredConfig({ catalog_budget: -1, mcp: { ...mcp, bad: { url: 3 } } });
    expect(broken.ok && broken.config.catalogBudget).toBe(1500);
  });
});
