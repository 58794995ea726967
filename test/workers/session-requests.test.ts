// A session object's request paths (the 2025 session's, the 2026 era's), the writing of its record at its start, and
// what it tells its team's index, each called on its own over a real object's storage (src/session/session-parts.ts).
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ROUTE_HEADERS, type Env } from "../../src/lib/env.ts";
import { IndexReports } from "../../src/session/index-reports.ts";
import { serveModernRequest } from "../../src/session/modern-requests.ts";
import { createSessionRecord } from "../../src/session/record-creation.ts";
import { readRoute } from "../../src/session/routed-request.ts";
import { sessionParts, type SessionParts } from "../../src/session/session-parts.ts";
import { serveSessionRequest } from "../../src/session/session-requests.ts";
import { BASE, initializeBody, replayUrl, seedTeam, waitFor } from "./helpers.ts";

const TOKEN = "0123456789abcdef";
const MODERN = "2026-07-28";

function withParts<T>(team: string, id: string, fn: (parts: SessionParts, storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  return runInDurableObject(env.SESSIONS.getByName(`${team}/${id}`), (_object, state) => fn(sessionParts(state, env), state.storage));
}

/** A request as the router hands it to the object `<team>/<id>`: its route headers, the host's body. */
function routed(team: string, id: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/t/${team}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      [ROUTE_HEADERS.team]: team,
      [ROUTE_HEADERS.tokenId]: TOKEN,
      [ROUTE_HEADERS.session]: id,
      [ROUTE_HEADERS.subject]: JSON.stringify({ kind: "token", id: TOKEN }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const listBody = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
const memoryTeam = (team: string, extra: Record<string, unknown> = {}) => seedTeam(team, { ...extra, mcp: { memory: { url: replayUrl("memory") } } });

describe("a 2025 session's request", () => {
  it("is not found without a record unless it initializes, nor when the record is another token's", async () => {
    await memoryTeam("sr-404");
    await withParts("sr-404", "s", async (parts) => {
      const request = routed("sr-404", "s", listBody);
      expect((await serveSessionRequest(parts, request, readRoute(request))).status).toBe(404);
      const init = routed("sr-404", "s", initializeBody, { [ROUTE_HEADERS.initialize]: "1" });
      expect((await serveSessionRequest(parts, init, readRoute(init))).ok).toBe(true);
      const other = routed("sr-404", "s", listBody, { [ROUTE_HEADERS.tokenId]: "fedcba9876543210" });
      expect((await serveSessionRequest(parts, other, readRoute(other))).status).toBe(404);
      await parts.end.end();
    });
  });

  it("is served nothing, and nothing is written, without the router's subject or with another principal's", async () => {
    await memoryTeam("sr-subject");
    await withParts("sr-subject", "s", async (parts, storage) => {
      const others = ["", "not json", JSON.stringify({ kind: "token", id: "fedcba9876543210" }), JSON.stringify({ kind: "member", id: TOKEN })];
      for (const subject of others) {
        const init = routed("sr-subject", "s", initializeBody, { [ROUTE_HEADERS.initialize]: "1", [ROUTE_HEADERS.subject]: subject });
        expect((await serveSessionRequest(parts, init, readRoute(init))).status).toBe(404);
        const modern = routed("sr-subject", `p.${TOKEN}`, listBody, { [ROUTE_HEADERS.era]: "modern", [ROUTE_HEADERS.subject]: subject });
        expect((await serveModernRequest(parts, modern, readRoute(modern))).status).toBe(404);
      }
      expect((await storage.list()).size).toBe(0);
    });
  });

  it("writes the record and the transport at initialize, and refuses a later request for another view", async () => {
    await memoryTeam("sr-init");
    await withParts("sr-init", "s", async (parts, storage) => {
      const init = routed("sr-init", "s", initializeBody, { [ROUTE_HEADERS.initialize]: "1", [ROUTE_HEADERS.view]: "direct" });
      const answer = await serveSessionRequest(parts, init, readRoute(init));
      expect(answer.ok).toBe(true);
      await answer.text();
      expect(await parts.store.session()).toMatchObject({ team: "sr-init", tokenId: TOKEN, sessionId: "s", view: "direct" });
      expect(await parts.store.transport()).toMatchObject({ sessionId: "s", initialized: true });
      expect(await storage.get("activity")).toBeTypeOf("number");

      const meta = routed("sr-init", "s", listBody, { [ROUTE_HEADERS.view]: "meta", "mcp-session-id": "s", "mcp-protocol-version": "2025-11-25" });
      const refused = await serveSessionRequest(parts, meta, readRoute(meta));
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("started with ?view=direct");
      await parts.end.end();
    });
  });

  it("ends a session whose initialize failed: nothing is left of it", async () => {
    await memoryTeam("sr-badinit");
    await withParts("sr-badinit", "s", async (parts, storage) => {
      const init = routed("sr-badinit", "s", { ...initializeBody, params: { nonsense: true } }, { [ROUTE_HEADERS.initialize]: "1" });
      const answer = await serveSessionRequest(parts, init, readRoute(init));
      expect(answer.ok).toBe(false);
      expect((await storage.list()).size).toBe(0);
    });
  });
});

describe("a 2026-era request", () => {
  const modern = (team: string, id: string, view?: string) =>
    routed(team, id, { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } } }, {
      [ROUTE_HEADERS.era]: "modern",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/list",
      ...(view ? { [ROUTE_HEADERS.view]: view } : {}),
    });

  it("writes the object's record at its first request, marked modern, and counts its start", async () => {
    await memoryTeam("sr-modern", { view: "direct" });
    await withParts("sr-modern", `p.${TOKEN}`, async (parts, storage) => {
      const request = modern("sr-modern", `p.${TOKEN}`);
      const answer = await serveModernRequest(parts, request, readRoute(request));
      expect(answer.status).toBe(200);
      await answer.text();
      // The era's objects serve the meta view (or code, asked by the router): a team's direct view is not theirs.
      expect(await parts.store.session()).toMatchObject({ era: "modern", sessionId: `p.${TOKEN}`, view: "meta" });
      expect(await waitFor(async () => (await storage.get<{ counted: boolean }>("usage"))?.counted === true)).toBe(true);
      await parts.end.end();
    });
  });

  it("is not found where the object's record is a 2025 session's", async () => {
    await memoryTeam("sr-mixed");
    await withParts("sr-mixed", "s", async (parts) => {
      const init = routed("sr-mixed", "s", initializeBody, { [ROUTE_HEADERS.initialize]: "1" });
      await (await serveSessionRequest(parts, init, readRoute(init))).text();
      const request = modern("sr-mixed", "s");
      expect((await serveModernRequest(parts, request, readRoute(request))).status).toBe(404);
      await parts.end.end();
    });
  });
});

describe("a session object's record at its start", () => {
  const fields = (team: string) => ({ team, tokenId: TOKEN, sessionId: "s", base: BASE });

  it("is refused, nothing written, for a team without a config and for a view this deployment does not serve", async () => {
    await withParts("sr-none", "s", async ({ store }) => {
      const missing = await createSessionRecord(env, store, fields("sr-none"), undefined);
      expect(missing instanceof Response && missing.status).toBe(503);
      await memoryTeam("sr-none");
      const off: Env = { ...env, CODE_MODE: "off" };
      const refused = await createSessionRecord(off, store, fields("sr-none"), "code");
      expect(refused instanceof Response && (await refused.text()).includes("Code mode is off")).toBe(true);
      expect(await store.session()).toBeUndefined();
    });
    expect(await env.TEAM_INDEX.getByName("sr-none").list()).toEqual([]);
  });

  it("takes the view asked for, else the team's, once the team's index has admitted the session", async () => {
    await memoryTeam("sr-view", { view: "direct" });
    await withParts("sr-view", "s", async ({ store }) => {
      expect(await createSessionRecord(env, store, fields("sr-view"), undefined)).toMatchObject({ view: "direct", base: BASE });
      expect(await store.session()).toMatchObject({ team: "sr-view", view: "direct" });
    });
    await withParts("sr-view", "t", async ({ store }) => {
      expect(await createSessionRecord(env, store, { ...fields("sr-view"), sessionId: "t" }, "meta")).toMatchObject({ view: "meta" });
    });
    expect((await env.TEAM_INDEX.getByName("sr-view").list()).sort()).toEqual(["s", "t"]);
  });
});

describe("what a session object tells its team's index", () => {
  it("sends the figures not sent yet under its principal, and that it was used", async () => {
    await memoryTeam("sr-reports");
    const index = env.TEAM_INDEX.getByName("sr-reports");
    await index.admit("sr-reports", "s", `t:${TOKEN}`, 20);
    const usedAt = () => runInDurableObject(index, (_o, state) => state.storage.get<number>(`live:t:${TOKEN}/s`));
    const admitted = await usedAt();
    await withParts("sr-reports", "s", async ({ store, meter, reports }) => {
      const record = await createSessionRecord(env, store, { team: "sr-reports", tokenId: TOKEN, sessionId: "s" }, undefined);
      if (record instanceof Response) throw new Error("no record");
      // As the object does: its runtime's build reads what an earlier instance left before anything is counted.
      await meter.restore();
      meter.started(record.createdAt);
      await reports.used(record);
    });
    expect(await usedAt()).toBeGreaterThan(admitted!);
    expect(await index.usageByPrincipal(1)).toMatchObject([{ principal: `t:${TOKEN}`, figures: { sessions: 1 } }]);
  });

  it("keeps the figures an unreachable index did not take, for the next flush", async () => {
    await memoryTeam("sr-giveback");
    await withParts("sr-giveback", "s", async ({ store, meter, reports }) => {
      const record = await createSessionRecord(env, store, { team: "sr-giveback", tokenId: TOKEN, sessionId: "s" }, undefined);
      if (record instanceof Response) throw new Error("no record");
      // As the object does: its runtime's build reads what an earlier instance left before anything is counted.
      await meter.restore();
      meter.started(record.createdAt);
      // The fault: a team index that refuses every addition (a fake; the real one is reached next).
      const down = { ...env, TEAM_INDEX: { getByName: () => ({ addUsage: () => Promise.reject(new Error("index down")) }) } } as unknown as Env;
      await new IndexReports(down, meter).flushUsage(record);
      await reports.flushUsage(record);
    });
    expect((await env.TEAM_INDEX.getByName("sr-giveback").usage(1))[0]?.figures.sessions).toBe(1);
  });
});
