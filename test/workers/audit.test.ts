// The audit trail through the real Worker: calls in the meta, direct and code views and in both eras become entries
// with the right fields, each in the calling object's storage before its answer; a batch the team's index did not
// take is sent again and counted once; old entries go; the admin API filters, orders, pages and exports; nothing of
// a call's arguments is kept or logged anywhere. The team index's faults are a sender put in the outbox's place.
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tokenId } from "../../src/auth/token.ts";
import type { SessionObject } from "../../src/session/object.ts";
import type { AuditSend } from "../../src/session/audit-outbox.ts";
import type { AuditEntry } from "../../src/views/audit-entry.ts";
import { BASE, adminFetch, connect, connectAt, loadMcp, replayUrl, seedTeam, waitFor, workerFetch, type Connected } from "./helpers.ts";

/** A word only the calls' arguments carry: it may appear in no entry, outbox, answer of the API or log line. */
const CANARY = "quokkacanary";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

interface Page {
  entries: AuditEntry[];
  next: string | null;
}

async function trail(team: string, query = ""): Promise<Page> {
  const res = await adminFetch("GET", `/teams/${team}/audit${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** The team's entries once `count` of them arrived (shipping runs beside the answers). */
async function entriesWhen(team: string, count: number): Promise<AuditEntry[]> {
  let entries: AuditEntry[] = [];
  expect(await waitFor(async () => (entries = (await trail(team, "?limit=1000")).entries).length >= count, { tries: 100, ms: 30 })).toBe(true);
  return entries;
}

const outboxOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, async (_o, state) => [...(await state.storage.list({ prefix: "audit:" })).values()]);

const sessionStub = (team: string, s: Connected) => env.SESSIONS.getByName(`${team}/${s.sessionId}`);

let logged: string[] = [];
beforeEach(() => {
  logged = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
});
afterEach(() => vi.restoreAllMocks());

const memory = { url: replayUrl("memory") };

describe("entries of every view and era", () => {
  it("a 2025 meta session: calls, an unknown tool and a load, with who, which host, view, era, trace and sizes, and no argument anywhere", async () => {
    const token = await seedTeam("au-meta", { mcp: { memory, lazy: { url: replayUrl("ts-lazy"), description: "A lazy graph." } } });
    const s = await connect("au-meta", token);
    const input = { query: CANARY };
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/search_nodes", tool_input: input }, _meta: { traceparent: TRACEPARENT } });
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/no_such_tool", tool_input: { q: CANARY } } });
    await loadMcp(s.client, "lazy");
    const entries = await entriesWhen("au-meta", 3);
    const principal = { kind: "token", id: tokenId(token) };
    const common = { principal, client: { name: "test-host", version: "1.0.0" }, view: "meta", era: "2025" };
    expect(entries.find((e) => e.tool === "memory/search_nodes")).toMatchObject({
      ...common,
      kind: "tool_call",
      outcome: "ok",
      traceparent: TRACEPARENT,
      request_bytes: JSON.stringify(input).length,
    });
    expect(entries.find((e) => e.tool === "memory/search_nodes")!.answer_bytes).toBeGreaterThan(0);
    expect(entries.find((e) => e.tool === "memory/no_such_tool")).toMatchObject({ ...common, kind: "tool_call", outcome: "unknown_tool" });
    expect(entries.find((e) => e.kind === "load")).toMatchObject({ ...common, tool: "lazy", outcome: "ok" });
    expect(entries.find((e) => e.tool === "memory/search_nodes")!.arguments_sha256).toBeUndefined();
    // Newest first.
    expect(entries.map((e) => e.at)).toEqual([...entries.map((e) => e.at)].sort().reverse());
    // Each entry is one `audit` log line; nothing of the arguments is in them, the trail or the outbox.
    await waitFor(() => logged.filter((l) => l.includes('"event":"audit"')).length >= 3);
    const lines = logged.filter((l) => l.includes('"event":"audit"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.id).sort()).toEqual(entries.map((e) => e.id).sort());
    expect(lines[0]).toMatchObject({ team: "au-meta", principal });
    expect(JSON.stringify(entries)).not.toContain(CANARY);
    expect(logged.join("\n")).not.toContain(CANARY);
    expect(JSON.stringify(await outboxOf(sessionStub("au-meta", s)))).not.toContain(CANARY);
    const ndjson = await (await adminFetch("GET", "/teams/au-meta/audit?format=ndjson")).text();
    expect(ndjson).not.toContain(CANARY);
    await s.client.close();
  });

  it("the direct and code views name their view, and a program's calls are entries of their own", async () => {
    const token = await seedTeam("au-views", { mcp: { memory } });
    const direct = await connectAt("au-views", token, "?view=direct");
    await direct.client.callTool({ name: "memory__read_graph", arguments: {} });
    const code = await connectAt("au-views", token, "?view=code");
    const run = await code.client.callTool({ name: "execute", arguments: { code: `await memory.read_graph(); return await memory.search_nodes({ query: "${CANARY}" });` } });
    expect(run.isError, JSON.stringify(run)).toBeFalsy();
    const entries = await entriesWhen("au-views", 3);
    expect(entries.filter((e) => e.view === "direct").map((e) => [e.tool, e.outcome])).toEqual([["memory/read_graph", "ok"]]);
    expect(entries.filter((e) => e.view === "code").map((e) => e.tool).sort()).toEqual(["memory/read_graph", "memory/search_nodes"]);
    expect(entries.every((e) => e.era === "2025" && e.kind === "tool_call")).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(CANARY);
    await direct.client.close();
    await code.client.close();
  });

  it("the user's answers to code mode's consent questions are approval entries, yes and no", async () => {
    const token = await seedTeam("au-approve", { approve: ["*delete*"], mcp: { memory } });
    const s = await connectAt("au-approve", token, "?view=code", { capabilities: { elicitation: { form: {} } } });
    let asked = 0;
    s.client.setRequestHandler(ElicitRequestSchema, async () => (++asked === 1 ? { action: "accept", content: { allow: true } } : { action: "decline" }));
    const program = [
      `await memory.delete_entities({ entityNames: ['${CANARY}'] });`,
      `try { await memory.delete_entities({ entityNames: ['b'] }); } catch {}`,
      "return 1;",
    ].join("\n");
    const run = await s.client.callTool({ name: "execute", arguments: { code: program } });
    expect(run.isError, JSON.stringify(run)).toBeFalsy();
    const entries = await entriesWhen("au-approve", 3);
    expect(entries.map((e) => [e.kind, e.tool, e.outcome]).reverse()).toEqual([
      ["approval", "memory/delete_entities", "ok"],
      ["tool_call", "memory/delete_entities", "ok"],
      ["approval", "memory/delete_entities", "approval_refused"],
    ]);
    expect(JSON.stringify(entries)).not.toContain(CANARY);
    await s.client.close();
  });

  it("a 2026-era call names that era and the client the request's envelope gives", async () => {
    const token = await seedTeam("au-modern", { mcp: { memory } });
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/au-modern/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "modern-host", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    await client.callTool({ name: "use_tool", arguments: { tool_name: "memory/search_nodes", tool_input: { query: CANARY } } });
    const [entry] = await entriesWhen("au-modern", 1);
    expect(entry).toMatchObject({ kind: "tool_call", era: "2026", view: "meta", tool: "memory/search_nodes", outcome: "ok", client: { name: "modern-host", version: "2.0.0" } });
    expect(entry!.principal).toEqual({ kind: "token", id: tokenId(token) });
    await client.close();
  });

  it("with audit.hash_arguments, an entry carries the SHA-256 of the arguments' canonical JSON, never the arguments", async () => {
    const token = await seedTeam("au-hash", { audit: { hash_arguments: true }, mcp: { memory } });
    const s = await connect("au-hash", token);
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/search_nodes", tool_input: { query: CANARY } } });
    const [entry] = await entriesWhen("au-hash", 1);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`{"query":"${CANARY}"}`)));
    expect(entry!.arguments_sha256).toBe([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
    await s.client.close();
  });

  it("an admin action is an entry of kind admin", async () => {
    await seedTeam("au-admin", { mcp: { memory } });
    const minted = (await (await adminFetch("POST", "/teams/au-admin/tokens", { label: "ci" })).json()) as { id: string };
    const [entry] = await entriesWhen("au-admin", 1);
    expect(entry).toMatchObject({ kind: "admin", principal: { kind: "admin", id: "admin" }, tool: "admin/token.mint", target: minted.id, outcome: "ok" });
  });
});

describe("the outbox", () => {
  it("holds each entry in the session's storage before its answer, and sends a batch the index refused again, once", async () => {
    const token = await seedTeam("au-outbox", { mcp: { memory } });
    const s = await connect("au-outbox", token);
    const stub = sessionStub("au-outbox", s);
    await s.client.listTools();
    // The fault: a team index that refuses every batch.
    const tries: number[] = [];
    await runInDurableObject(stub, (object: SessionObject) => {
      object.audit.send = async (_team, entries) => {
        tries.push(entries.length);
        throw new Error("team index down");
      };
    });
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    // Read right after the answer: the entry is there (no batch could have shipped it).
    expect((await outboxOf(stub)).length).toBe(1);
    await waitFor(() => tries.length >= 1);
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    await waitFor(() => tries.length >= 2);
    expect(tries).toEqual([1, 2]);
    expect((await outboxOf(stub)).length).toBe(2);
    expect((await trail("au-outbox")).entries).toEqual([]);
    // A new instance (with the real index) sends what waits at its alarm: every entry, once. (The host's streams
    // closed first: an open one keeps an object from being evicted.)
    await s.client.close();
    await evictDurableObject(stub);
    expect((await outboxOf(stub)).length).toBe(2);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await outboxOf(stub)).length).toBe(0);
    const entries = (await trail("au-outbox")).entries;
    expect(entries.map((e) => e.tool)).toEqual(["memory/read_graph", "memory/read_graph"]);
  });

  it("keeps what the index did not take past the session's end, and its alarm sends it", async () => {
    const token = await seedTeam("au-end", { mcp: { memory } });
    const s = await connect("au-end", token);
    const stub = sessionStub("au-end", s);
    await s.client.listTools();
    let real: AuditSend | undefined;
    await runInDurableObject(stub, (object: SessionObject) => {
      real = object.audit.send;
      // The fault: the team index refuses every batch until the test gives the real one back.
      object.audit.send = () => Promise.reject(new Error("team index down"));
    });
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    await s.transport.terminateSession();
    // The session is gone (its record wiped), its entry is not.
    const left = await runInDurableObject(stub, async (_o, state) => [...(await state.storage.list()).keys()]);
    expect(left.length).toBe(1);
    expect(left[0]).toMatch(/^audit:/);
    await runInDurableObject(stub, (object: SessionObject) => {
      object.audit.send = real!;
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await trail("au-end")).entries.map((e) => e.tool)).toEqual(["memory/read_graph"]);
    expect(await runInDurableObject(stub, async (_o, state) => (await state.storage.list()).size)).toBe(0);
  });

  it("a refused batch stays for the next call, and the index counts an entry sent twice once", async () => {
    const token = await seedTeam("au-resend", { mcp: { memory } });
    const s = await connect("au-resend", token);
    const stub = sessionStub("au-resend", s);
    await s.client.listTools();
    let failures = 0;
    await runInDurableObject(stub, (object: SessionObject) => {
      const real: AuditSend = object.audit.send;
      object.audit.send = async (team, entries, days) => {
        // The fault: the RPC fails once, after the index took the batch (its answer lost).
        const added = await real(team, entries, days);
        if (failures++ === 0) throw new Error("answer lost");
        return added;
      };
    });
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    await waitFor(() => failures >= 1);
    expect((await outboxOf(stub)).length).toBe(1);
    await s.client.callTool({ name: "use_tool", arguments: { tool_name: "memory/read_graph" } });
    await waitFor(async () => (await outboxOf(stub)).length === 0);
    const entries = await entriesWhen("au-resend", 2);
    expect(entries.length).toBe(2);
    expect(new Set(entries.map((e) => e.id)).size).toBe(2);
    await s.client.close();
  });
});

/** A synthetic entry `minutesAgo` minutes old. */
function entry(minutesAgo: number, fields: Partial<AuditEntry> = {}): AuditEntry {
  const at = Date.now() - minutesAgo * 60_000;
  const id = `${at.toString(36).padStart(9, "0")}-${crypto.getRandomValues(new Uint8Array(8)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "")}`;
  return {
    id,
    at: new Date(at).toISOString(),
    kind: "tool_call",
    principal: { kind: "token", id: "0123456789abcdef" },
    tool: "memory/read_graph",
    outcome: "ok",
    ms: 3,
    request_bytes: 2,
    answer_bytes: 40,
    ...fields,
  };
}

describe("the team's trail", () => {
  it("deletes entries older than audit.days as new ones come, and takes a batch sent twice once", async () => {
    const index = env.TEAM_INDEX.getByName("au-keep");
    const old = entry(31 * 24 * 60);
    const fresh = entry(1);
    expect(await index.appendAudit("au-keep", [old], undefined)).toBe(1);
    expect((await trail("au-keep")).entries.map((e) => e.id)).toEqual([old.id]);
    expect(await index.appendAudit("au-keep", [fresh], 30)).toBe(1);
    expect(await index.appendAudit("au-keep", [fresh], 30)).toBe(0);
    expect((await trail("au-keep")).entries.map((e) => e.id)).toEqual([fresh.id]);
  });

  it("is read newest first, filtered by time, principal, tool and outcome, a page at a time, and as NDJSON", async () => {
    const index = env.TEAM_INDEX.getByName("au-read");
    const e = [
      entry(50, { principal: { kind: "token", id: "aaaaaaaaaaaaaaaa", label: "ci-bot" } }),
      entry(40, { principal: { kind: "member", id: "au-read.m1", email: "ann@example.com" }, tool: "github/merge_pr", outcome: "denied" }),
      entry(30, { tool: "github/get_issue", outcome: "timeout" }),
      entry(20, { kind: "load", tool: "github" }),
      entry(10, { kind: "admin", principal: { kind: "admin", id: "admin" }, tool: "admin/token.mint", target: "0123456789abcdef" }),
    ];
    await index.appendAudit("au-read", e, 30);
    const ids = (p: Page) => p.entries.map((x) => x.id);
    expect(ids(await trail("au-read"))).toEqual([...e].reverse().map((x) => x.id));
    expect(ids(await trail("au-read", "?principal=ci-bot"))).toEqual([e[0]!.id]);
    expect(ids(await trail("au-read", "?principal=ann@example.com"))).toEqual([e[1]!.id]);
    expect(ids(await trail("au-read", "?principal=au-read.m1"))).toEqual([e[1]!.id]);
    expect(ids(await trail("au-read", "?tool=github/merge_pr"))).toEqual([e[1]!.id]);
    expect(ids(await trail("au-read", `?tool=${encodeURIComponent("github/*")}`))).toEqual([e[3]!.id, e[2]!.id, e[1]!.id]);
    expect(ids(await trail("au-read", "?outcome=timeout"))).toEqual([e[2]!.id]);
    const since = encodeURIComponent(e[2]!.at);
    const until = encodeURIComponent(e[4]!.at);
    expect(ids(await trail("au-read", `?since=${since}&until=${until}`))).toEqual([e[3]!.id, e[2]!.id]);
    // Pages of two, following `next`, give every entry once, in order; the last page has no next.
    const paged: string[] = [];
    let page = await trail("au-read", "?limit=2");
    paged.push(...ids(page));
    while (page.next) {
      page = await trail("au-read", `?limit=2&cursor=${page.next}`);
      paged.push(...ids(page));
    }
    expect(paged).toEqual([...e].reverse().map((x) => x.id));
    const ndjson = await adminFetch("GET", "/teams/au-read/audit?format=ndjson&limit=3");
    expect(ndjson.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await ndjson.text()).trim().split("\n").map((l) => JSON.parse(l) as AuditEntry);
    expect(lines.map((x) => x.id)).toEqual([e[4]!.id, e[3]!.id, e[2]!.id]);
    expect(ids(await trail("au-read", `?cursor=${ndjson.headers.get("x-next-cursor")}`))).toEqual([e[1]!.id, e[0]!.id]);
  });

  it("answers a bad parameter with a 400 that names it", async () => {
    for (const [query, field] of [
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
      ["?limit=ten", "limit"],
      ["?outcome=fine", "outcome"],
      ["?since=yesterday", "since"],
      ["?since=2026-11-28&until=2026-11-27", "until"],
      ["?cursor=bm90LWEtY3Vyc29y", "cursor"],
      ["?format=csv", "format"],
      ["?colour=blue", "(root)"],
    ] as const) {
      const res = await adminFetch("GET", `/teams/au-bad/audit${query}`);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: string; issues: Array<{ path: string }> };
      expect(body.error).toBe("invalid_query");
      expect(body.issues.map((i) => i.path), query).toContain(field);
    }
    expect((await adminFetch("GET", "/teams/au-bad/audit", undefined, {})).status).toBe(401);
  });
});
