// Multi-tenant safety, attack by attack: admin API, team secrets never echoed, credentials never forwarded,
// Origin/CORS, request hygiene, rate limits, tool poisoning, filters and pins. Each test tries the attack.
import { env } from "cloudflare:workers";
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { kvKeys } from "../../src/config/keys.ts";
import { adminOpenApi } from "../../src/edge/admin/openapi.ts";
import { app } from "../../src/edge/app.ts";
import { openSecret, sealSecret, type SealedSecret } from "../../src/lib/secrets.ts";
import {
  ADMIN,
  BASE,
  adminFetch,
  connect,
  discoverDescription,
  initializeBody,
  loadMcp,
  mutateTool,
  post,
  replayStats,
  replayUrl,
  seedTeam,
  waitFor,
  text,
  workerFetch,
} from "./helpers.ts";

const sessions = async () => (await listDurableObjectIds(env.SESSIONS)).length;

describe("admin API", () => {
  it("refuses a missing or wrong admin token with 401 and WWW-Authenticate", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "Basic test-admin-token" }] as Array<Record<string, string>>) {
      const res = await adminFetch("GET", "/teams/acme/tokens", undefined, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
    }
  });

  it("is off without ADMIN_TOKEN: 503 for every team route, whatever token is sent", async () => {
    const off = { ...env, ADMIN_TOKEN: undefined };
    for (const headers of [{}, { authorization: "Bearer test-admin-token" }] as Array<Record<string, string>>) {
      const res = await app.request("https://proxy.test/admin/teams/acme/tokens", { headers }, off);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: "admin_disabled" });
    }
  });

  it("validates configs with the config schema and answers errors as a list with JSON paths", async () => {
    const res = await adminFetch("PUT", "/teams/acme/config", { mcp: { fs: { transport: "stdio", command: "npx" }, ok: { url: "not a url" } } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; issues: Array<{ path: string; message: string }> };
    expect(body.error).toBe("invalid_config");
    expect(body.issues.map((i) => i.path)).toEqual(expect.arrayContaining(["mcp.fs.transport", "mcp.fs", "mcp.ok.url"]));
    expect(body.issues.find((i) => i.path === "mcp.fs.transport")!.message).toMatch(/stdio servers cannot run at the edge/);
    expect(await env.TEAMS.get(kvKeys.config("acme"))).toBeNull();
  });

  it("creates, reads (masked), replaces and deletes a config", async () => {
    const config = { mcp: { a: { url: replayUrl("memory"), headers: { "X-Plain": "literal-credential-value" } } } };
    const put = await adminFetch("PUT", "/teams/crud/config", config);
    expect(put.status).toBe(200);
    expect(((await put.json()) as { warnings: string[] }).warnings).toEqual([]);
    const got = await adminFetch("GET", "/teams/crud/config", undefined);
    expect(await got.json()).toEqual({ mcp: { a: { url: replayUrl("memory"), headers: { "X-Plain": "***" } } } });
    expect((await adminFetch("PUT", "/teams/crud/config", { url: replayUrl("memory") })).status).toBe(200);
    expect((await adminFetch("DELETE", "/teams/crud/config")).status).toBe(204);
    expect((await adminFetch("GET", "/teams/crud/config")).status).toBe(404);
    expect((await adminFetch("DELETE", "/teams/crud/config")).status).toBe(404);
  });

  it("mints a token once, lists ids and labels only, and a revoked token stops working", async () => {
    await adminFetch("PUT", "/teams/tok/config", { mcp: { a: { url: replayUrl("memory") } } });
    const minted = await adminFetch("POST", "/teams/tok/tokens", { label: "ci runner" });
    expect(minted.status).toBe(201);
    const { id, token, label, createdAt } = (await minted.json()) as { id: string; token: string; label: string; createdAt: string };
    expect(token).toMatch(/^dmt_[0-9a-f]{16}_/);
    expect(label).toBe("ci runner");
    const list = await (await adminFetch("GET", "/teams/tok/tokens")).text();
    expect(JSON.parse(list)).toEqual({ tokens: [{ id, label: "ci runner", createdAt }] });
    expect(list).not.toContain(/^dmt_[0-9a-f]{16}_(.+)$/.exec(token)![1]);
    expect((await post("tok", initializeBody, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await adminFetch("DELETE", `/teams/tok/tokens/${id}`)).status).toBe(204);
    // TOKEN_CACHE_SECONDS is 0 here; deployed, the documented bound is KV propagation plus at most 60 s.
    expect((await post("tok", initializeBody, { authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await adminFetch("DELETE", `/teams/tok/tokens/${id}`)).status).toBe(404);
  });

  it("answers bad input with 4xx and a readable error, never 5xx", async () => {
    expect((await adminFetch("PUT", "/teams/BAD!/config", {})).status).toBe(400);
    expect((await adminFetch("PUT", "/teams/acme/config", "{nope")).status).toBe(400);
    const wrongType = await workerFetch(`${BASE}/admin/teams/acme/config`, { method: "PUT", headers: { ...ADMIN, "content-type": "text/plain" }, body: "{}" });
    expect(wrongType.status).toBe(415);
    const badBody = await adminFetch("POST", "/teams/acme/tokens", { label: 5, extra: true });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
    expect((await adminFetch("PUT", "/teams/acme/secrets/bad-name", { value: "x" })).status).toBe(400);
    expect((await adminFetch("GET", "/nowhere")).status).toBe(404);
  });

  it("publishes an OpenAPI document generated from the zod schemas", async () => {
    const doc = (await (await workerFetch(`${BASE}/admin/openapi.json`)).json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/admin/teams/{team}/config", "/admin/teams/{team}/tokens", "/admin/teams/{team}/tokens/{id}", "/admin/teams/{team}/secrets/{name}", "/admin/teams/{team}/pins/{server}/{tool}/approve"]),
    );
    const tokenBody = JSON.stringify(doc.paths["/admin/teams/{team}/tokens"]!.post);
    expect(tokenBody).toContain('"label"');
    expect(tokenBody).toContain('"maxLength":100');
  });

  it("serves the document the schemas make now (the asset written at set-up, not a stale one), as JSON", async () => {
    const response = await workerFetch(`${BASE}/admin/openapi.json`);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    // The generator runs here, in the test, as it runs at set-up; the Worker only serves its output.
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(adminOpenApi())));
  });
});

describe("team secrets", () => {
  const logged: string[] = [];
  beforeEach(() => {
    logged.length = 0;
    for (const method of ["log", "error", "warn", "info", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(" "));
      });
    }
  });
  afterEach(() => vi.restoreAllMocks());

  it("refuses a config that references a secret the team does not have, naming it", async () => {
    const res = await adminFetch("PUT", "/teams/nosecret/config", { mcp: { gh: { url: replayUrl("memory"), headers: { Authorization: "Bearer ${secret:GH_TOKEN}" } } } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("the team has no secret named GH_TOKEN");
  });

  it("resolves secrets into upstream headers only, and never shows them anywhere else", async () => {
    const value = "sk-live-0123456789-very-secret";
    expect((await adminFetch("PUT", "/teams/sec/secrets/UP_TOKEN", { value })).status).toBe(204);
    const names = await (await adminFetch("GET", "/teams/sec/secrets")).text();
    expect(JSON.parse(names).secrets.map((s: { name: string }) => s.name)).toEqual(["UP_TOKEN"]);
    expect(names).not.toContain(value);
    const put = await adminFetch("PUT", "/teams/sec/config", {
      mcp: {
        eager: { url: replayUrl("sec-headers"), headers: { Authorization: "Bearer ${secret:UP_TOKEN}" } },
        lazy: { url: replayUrl("sec-headers"), headers: { "X-Key": "${secret:UP_TOKEN}" }, description: "Loads later." },
        broken: { url: env.DEAD_URL, headers: { "X-Key": "${secret:UP_TOKEN}" } },
      },
    });
    expect(put.status).toBe(200);
    const minted = (await (await adminFetch("POST", "/teams/sec/tokens", {})).json()) as { token: string };

    const { client, sessionId } = await connect("sec", minted.token);
    const seen: string[] = [];
    seen.push(JSON.stringify(await client.listTools()));
    seen.push(JSON.stringify(await client.callTool({ name: "use_tool", arguments: { tool_name: "eager/read_graph" } })));
    seen.push(JSON.stringify(await client.callTool({ name: "use_tool", arguments: { tool_name: "broken/x" } })));
    seen.push(JSON.stringify(await client.callTool({ name: "discover_tool", arguments: { tool_name: "eager/read_graph" } })));
    seen.push(JSON.stringify(await loadMcp(client, "lazy")));
    seen.push(JSON.stringify(await client.listResources()));
    seen.push(JSON.stringify(await client.callTool({ name: "use_tool", arguments: { tool_name: "nope/x" } })));
    seen.push(await (await adminFetch("GET", "/teams/sec/config")).text());
    expect((await replayStats("sec-headers")).lastHeaders["x-key"] ?? (await replayStats("sec-headers")).lastHeaders.authorization).toContain(value);

    for (const answer of seen) expect(answer).not.toContain(value);
    for (const line of logged) expect(line).not.toContain(value);
    const stored = await runInDurableObject(env.SESSIONS.getByName(`sec/${sessionId}`), async (_o, state) =>
      JSON.stringify([...(await state.storage.list())]),
    );
    expect(stored).toContain("eager");
    expect(stored).not.toContain(value);
    const raw = await env.TEAMS.get(kvKeys.secret("sec", "UP_TOKEN"));
    expect(raw).not.toBeNull();
    expect(raw).not.toContain(value);
    await client.close();
  });

  it("uses a rotated secret from the next connect on", async () => {
    await adminFetch("PUT", "/teams/rot/secrets/KEY", { value: "first-value-123" });
    await adminFetch("PUT", "/teams/rot/config", { mcp: { up: { url: replayUrl("sec-rotate"), headers: { "X-Key": "${secret:KEY}" } } } });
    const token = ((await (await adminFetch("POST", "/teams/rot/tokens", {})).json()) as { token: string }).token;
    const first = await connect("rot", token);
    await first.client.listTools();
    expect((await replayStats("sec-rotate")).lastHeaders["x-key"]).toBe("first-value-123");
    await first.client.close();
    await adminFetch("PUT", "/teams/rot/secrets/KEY", { value: "second-value-456" });
    const second = await connect("rot", token);
    await second.client.listTools();
    expect((await replayStats("sec-rotate")).lastHeaders["x-key"]).toBe("second-value-456");
    await second.client.close();
  });

  it("binds a ciphertext to its team and name: copied elsewhere it does not open", async () => {
    const key = "k".repeat(40);
    const sealed: SealedSecret = await sealSecret(key, "team-a", "TOKEN", "value-a");
    expect(await openSecret(key, "team-a", "TOKEN", sealed)).toBe("value-a");
    expect(await openSecret(key, "team-b", "TOKEN", sealed)).toBeUndefined();
    expect(await openSecret(key, "team-a", "OTHER", sealed)).toBeUndefined();
    expect(await openSecret("x".repeat(40), "team-a", "TOKEN", sealed)).toBeUndefined();
  });

  it("gives no way to name another team's secret or the Worker's own secrets", async () => {
    await adminFetch("PUT", "/teams/owner/secrets/SHARED", { value: "owner-only-value" });
    // Another team cannot reference it: its config is refused (it has no such secret).
    const res = await adminFetch("PUT", "/teams/thief/config", { mcp: { a: { url: replayUrl("memory"), headers: { X: "${secret:SHARED}" } } } });
    expect(res.status).toBe(400);
    // Worker secrets are not team secrets: ${secret:ADMIN_TOKEN} resolves to nothing.
    const res2 = await adminFetch("PUT", "/teams/thief/config", { mcp: { a: { url: replayUrl("memory"), headers: { X: "${secret:ADMIN_TOKEN}" } } } });
    expect(res2.status).toBe(400);
    expect(JSON.stringify(await res2.json())).toContain("the team has no secret named ADMIN_TOKEN");
  });
});

describe("redirects", () => {
  it("does not follow an upstream's redirect to another origin", async () => {
    const token = await seedTeam("redir", { mcp: { away: { url: replayUrl("sec-redirect-away") }, ok: { url: replayUrl("memory") } } });
    const { client } = await connect("redir", token);
    // Named for what happened: the redirect's own status, not followed.
    expect(await discoverDescription(client)).toMatch(/^away: unavailable — HTTP 307$/m);
    expect((await replayStats("sec-redirect-target")).requests).toBe(0);
    await client.close();
  });
});

describe("credentials of the host", () => {
  it("never forwards the host's Authorization, cookies or other headers upstream", async () => {
    const token = await seedTeam("fwdhdr", { mcp: { up: { url: replayUrl("sec-headers"), headers: { "X-Configured": "yes" } } } });
    const { client } = await connect("fwdhdr", token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } });
    const seen = (await replayStats("sec-headers")).lastHeaders;
    expect(seen["x-configured"]).toBe("yes");
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain(token);
    await client.close();
  });
});

describe("the MCP endpoint", () => {
  it("refuses a foreign Origin with 403 and creates nothing; no Origin and allowed origins pass", async () => {
    const token = await seedTeam("origin", { mcp: { a: { url: replayUrl("memory") } } });
    const before = await sessions();
    const evil = await post("origin", initializeBody, { authorization: `Bearer ${token}`, origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(await sessions()).toBe(before);
    const allowed = await post("origin", initializeBody, { authorization: `Bearer ${token}`, origin: "https://app.example" });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(allowed.headers.get("access-control-expose-headers")).toContain("Mcp-Session-Id");
    const none = await post("origin", initializeBody, { authorization: `Bearer ${token}` });
    expect(none.status).toBe(200);
    expect(none.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers CORS preflight for allowed origins only, never with *", async () => {
    const ok = await workerFetch(`${BASE}/t/any/mcp`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(ok.headers.get("access-control-allow-headers")).toContain("Mcp-Session-Id");
    const bad = await workerFetch(`${BASE}/t/any/mcp`, { method: "OPTIONS", headers: { origin: "https://evil.example" } });
    expect(bad.status).toBe(403);
    expect(bad.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("checks protocol version, batches, media types, JSON and body size before anything else", async () => {
    const token = await seedTeam("hygiene", { mcp: { a: { url: replayUrl("memory") } } });
    const auth = { authorization: `Bearer ${token}` };
    const before = await sessions();
    const version = await post("hygiene", initializeBody, { ...auth, "mcp-protocol-version": "1999-01-01" });
    expect(version.status).toBe(400);
    const batch = await post("hygiene", [initializeBody], { ...auth, "mcp-protocol-version": "2025-11-25" });
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ error: { code: -32600 } });
    const type = await post("hygiene", initializeBody, { ...auth, "content-type": "text/plain" });
    expect(type.status).toBe(415);
    const accept = await post("hygiene", initializeBody, { ...auth, accept: "text/html" });
    expect(accept.status).toBe(406);
    const json = await post("hygiene", "{broken", auth);
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: { code: -32700 } });
    const notRpc = await post("hygiene", { hello: "world" }, auth);
    expect(notRpc.status).toBe(400);
    // Over the limit without a Content-Length: the streamed bytes are counted.
    const big = new ReadableStream<Uint8Array>({
      start(controller) {
        const chunk = new Uint8Array(1024 * 1024).fill(32);
        for (let i = 0; i < 5; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const tooBig = await workerFetch(`${BASE}/t/hygiene/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: big,
      duplex: "half",
    } as RequestInit);
    expect(tooBig.status).toBe(413);
    expect(await sessions()).toBe(before);
  });

  it("limits requests per token with 429 and Retry-After, other tokens unaffected", async () => {
    const token = await seedTeam("limited", { mcp: { a: { url: replayUrl("memory") } } });
    const other = await seedTeam("unlimited", { mcp: { a: { url: replayUrl("memory") } } });
    let limited: Response | undefined;
    // The limiter counts per minute window: on a slow machine the first 150 may straddle a window's end, so up to
    // three windows' worth are sent (the loop stops at the first 429).
    for (let i = 0; i < 450 && !limited; i++) {
      const res = await workerFetch(`${BASE}/t/limited/mcp`, { method: "GET", headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(400);
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
    // Over the limit, 429 wins over whatever a later step would answer, and nothing reaches a session object.
    const before = await sessions();
    const auth = { authorization: `Bearer ${token}` };
    const overLimit = [
      await post("limited", initializeBody, auth),
      await workerFetch(`${BASE}/t/limited/mcp`, { method: "POST", headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{not json" }),
      await workerFetch(`${BASE}/t/limited/mcp`, { method: "PUT", headers: auth }),
    ];
    for (const res of overLimit) {
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("60");
      expect(res.headers.get("allow")).toBeNull();
      expect(((await res.json()) as { error?: { message?: string } }).error?.message).toMatch(/^Too many requests/);
    }
    expect(await sessions()).toBe(before);
    expect((await post("unlimited", initializeBody, { authorization: `Bearer ${other}` })).status).toBe(200);
  });
});

describe("tool poisoning and rug pulls", () => {
  it("strips invisible characters, skips names outside the MCP rules, and upstream names never shadow meta-tools", async () => {
    const token = await seedTeam("poison", { mcp: { p: { url: replayUrl("sec-poison") } } });
    const { client } = await connect("poison", token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool"]);
    const description = tools[0]!.description!;
    // "Reads\u200B files.\u202E evil\u0007 text": the invisible characters gone, and one sentence (it goes on in lower case).
    expect(description).toContain("- fine_tool: Reads files. evil text\n");
    expect(description).not.toMatch(/[\u200B\u202E\u0007]/);
    expect(description).not.toContain("bad name with spaces");
    expect(description).not.toContain("x".repeat(129));
    // An upstream tool called discover_tool is only ever p/discover_tool.
    expect(description).toContain("- discover_tool: Tries to look like a meta-tool\n");
    const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: "discover_tool" } });
    expect(found.isError).toBe(true);
    const details = await client.callTool({ name: "discover_tool", arguments: { tool_name: "p/fine_tool" } });
    expect(text(details)).not.toMatch(/[\u200B\u202E\u0007]/);
    await client.close();
  });

  it("enforces allow/deny filters in the catalog, discover_tool, load_mcp listings and use_tool alike", async () => {
    const token = await seedTeam("filtered", {
      mcp: {
        p: { url: replayUrl("sec-poison"), tools: { allow: ["*_tool", "read_*", "delete_*"], deny: ["delete_*"] } },
        q: { url: replayUrl("sec-poison"), tools: { deny: ["delete_*"] }, description: "Lazy copy." },
      },
    });
    const { client } = await connect("filtered", token);
    const description = await discoverDescription(client);
    expect(description).toContain("- read_one:");
    expect(description).not.toContain("delete_everything");
    for (const name of ["p/delete_everything", "q/delete_everything"]) {
      const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: name } });
      expect(found.isError).toBe(true);
    }
    const used = await client.callTool({ name: "use_tool", arguments: { tool_name: "p/delete_everything" } });
    expect(used.isError).toBe(true);
    const listing = (await loadMcp(client, "q")).structuredContent as { tools: Record<string, string> };
    expect(Object.keys(listing.tools)).not.toContain("delete_everything");
    expect(Object.keys(listing.tools)).toContain("read_one");
    expect((await replayStats("sec-poison")).calls.some((c) => c.name === "delete_everything")).toBe(false);
    await client.close();
  });

  it("pins tool definitions: a changed one is withheld until an admin approves it", async () => {
    await adminFetch("PUT", "/teams/pinned/config", { pin_tools: true, mcp: { up: { url: replayUrl("sec-pin") } } });
    const token = ((await (await adminFetch("POST", "/teams/pinned/tokens", {})).json()) as { token: string }).token;
    const first = await connect("pinned", token);
    expect(await discoverDescription(first.client)).toContain("- add_observations:");
    await first.client.close();
    const pins = (await (await adminFetch("GET", "/teams/pinned/pins")).json()) as { pins: Array<{ tool: string; pending?: string }> };
    expect(pins.pins.length).toBeGreaterThan(3);
    expect(pins.pins.every((p) => p.pending === undefined)).toBe(true);

    const changed = await mutateTool("sec-pin");
    const second = await connect("pinned", token);
    // The session may first show the team's cached catalog (the approved definitions); once the upstream's real
    // catalog is in, the changed definition is withheld.
    let withheld = "";
    expect(await waitFor(async () => !(withheld = await discoverDescription(second.client)).includes(`- ${changed}:`))).toBe(true);
    expect(withheld).toContain("- read_graph:");
    const refused = await second.client.callTool({ name: "use_tool", arguments: { tool_name: `up/${changed}` } });
    expect(refused.isError).toBe(true);
    await second.client.close();
    const waiting = ((await (await adminFetch("GET", "/teams/pinned/pins")).json()) as { pins: Array<{ tool: string; pending?: string }> }).pins.filter((p) => p.pending);
    expect(waiting.map((p) => p.tool)).toEqual([changed]);

    expect((await adminFetch("POST", `/teams/pinned/pins/up/${changed}/approve`)).status).toBe(204);
    const third = await connect("pinned", token);
    expect(await discoverDescription(third.client)).toContain(`- ${changed}: `);
    await third.client.close();
    expect((await adminFetch("POST", `/teams/pinned/pins/up/${changed}/approve`)).status).toBe(404);
  });
});

describe("observability", () => {
  afterEach(() => vi.restoreAllMocks());

  it("logs tool calls as JSON with team, session, upstream, tool, duration and outcome, never argument values", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
    const token = await seedTeam("observed", { mcp: { up: { url: replayUrl("memory") } } });
    const { client } = await connect("observed", token);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "up/search_nodes", tool_input: { query: "private-argument-value" } } });
    // The line is written just after the answer has gone out (src/lib/log.ts).
    expect(await waitFor(() => lines.some((l) => l.includes('"event":"tool_call"')))).toBe(true);
    const calls = lines.map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return undefined; } }).filter((l) => l?.event === "tool_call");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ team: "observed", upstream: "up", tool: "search_nodes", outcome: "ok", ms: expect.any(Number), session: expect.any(String) });
    expect(lines.join("\n")).not.toContain("private-argument-value");
    await client.close();
  });
});
