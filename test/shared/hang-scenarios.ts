// Upstreams that read a request and never answer: on every method (after connecting, or from before the session
// starts) and on each method alone. Whatever hangs, the healthy upstream beside it answers at once, the hanging one
// ends in an isError within its timeout, no request slot stays taken, and the session recovers. The same
// scenarios run in the workerd pool (test/workers/hangs.test.ts) and against `wrangler dev` (test/e2e/hangs.test.ts).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { CorpusServer, Fault, ReplayRoute, RouteStats } from "../../harness/replay-types.ts";
import { waitFor } from "./wait.ts";

/** The hanging upstream's timeout; the healthy one must answer without waiting for it. */
export const HANG_TIMEOUT = 2000;
// A call held behind a hanging exchange waits at least that exchange's deadline: anything under it was not held.
const QUICK = HANG_TIMEOUT;

/** One session of the scenarios: its team, the route its `flaky` upstream points at, and that upstream's timeout. */
export interface HangCase {
  team: string;
  route: string;
  timeout: number;
}

/** What each route of the scenarios does wrong (nothing: it is made to hang at run time). */
const HANG_FAULTS: Record<string, Record<string, Fault> | undefined> = {
  "hang-all-a": undefined,
  "hang-all-b": undefined,
  "hang-all-c": undefined,
  "hang-init": { initialize: { kind: "hang" } },
  "hang-initialized": { "notifications/initialized": { kind: "hang" } },
  "hang-list": { "tools/list": { kind: "hang" } },
  "hang-call": { "tools/call": { kind: "hang" } },
  "hang-cancel": { "tools/call": { kind: "hang" }, "notifications/cancelled": { kind: "hang" } },
  "hang-delete": { "tools/list": { kind: "rpc-error", code: -32603, message: "catalog exploded" }, DELETE: { kind: "hang" } },
  "hang-delete-end": { DELETE: { kind: "hang" } },
  "hang-get": { GET: { kind: "hang" } },
};

/** The replay routes the scenarios need, each replaying `catalog`. */
export const hangRoutes = (catalog: CorpusServer): Record<string, ReplayRoute> =>
  Object.fromEntries(Object.entries(HANG_FAULTS).map(([route, faults]) => [route, faults ? { catalog, faults } : { catalog }]));

const ONE_METHOD = [
  ["hang-init", "initialize"],
  ["hang-initialized", "notifications/initialized"],
  ["hang-list", "tools/list"],
] as const;

/** Every session the scenarios open, so a runtime that provisions teams ahead (wrangler dev) can. */
export const HANG_CASES: HangCase[] = [
  { team: "h-after", route: "hang-all-a", timeout: HANG_TIMEOUT },
  { team: "h-before", route: "hang-all-b", timeout: HANG_TIMEOUT },
  // Longer than the lists wait for eager upstreams: the catalog is served while this one is still connecting.
  { team: "h-connecting", route: "hang-all-c", timeout: 20_000 },
  ...ONE_METHOD.map(([route]) => ({ team: `h-${route}`, route, timeout: HANG_TIMEOUT })),
  { team: "h-call", route: "hang-call", timeout: HANG_TIMEOUT },
  { team: "h-cancel", route: "hang-cancel", timeout: HANG_TIMEOUT },
  { team: "h-delete", route: "hang-delete", timeout: HANG_TIMEOUT },
  { team: "h-delete-end", route: "hang-delete-end", timeout: HANG_TIMEOUT },
  { team: "h-get", route: "hang-get", timeout: HANG_TIMEOUT },
];

/** A team config with `flaky` (the case's route) beside `good` (a healthy replay of the same catalog). */
export const hangConfig = (c: HangCase, url: (route: string) => string) => ({
  mcp: { flaky: { url: url(c.route), timeout: c.timeout }, good: { url: url("memory") } },
});

/** What a runtime gives the scenarios. */
export interface HangHarness {
  /** A host connected to the case's team (a new session each call). */
  connect(c: HangCase): Promise<{ client: Client; token: string; sessionId: string }>;
  /** Ends a session as a host does (HTTP DELETE) and returns the status. */
  end(c: HangCase, token: string, sessionId: string): Promise<number>;
  control(action: "hang" | "up" | "forget", route: string): Promise<void>;
  stats(route: string): Promise<RouteStats>;
  /** Upstream request slots in use in the session, where the runtime lets a test look. */
  slots?(c: HangCase, sessionId: string): Promise<number>;
}

const byTeam = (team: string): HangCase => HANG_CASES.find((c) => c.team === team)!;

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
const use = (client: Client, tool: string) => client.callTool({ name: "use_tool", arguments: { tool_name: tool } }) as Promise<CallToolResult>;
const catalog = async (client: Client) => (await client.listTools()).tools.find((t) => t.name === "discover_tool")?.description ?? "";

/** How long `work` takes, with its result. */
async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await work();
  return { ms: Date.now() - started, value };
}

export function hangScenarios(h: HangHarness): void {
  const session = async (team: string) => {
    const c = byTeam(team);
    const connected = await h.connect(c);
    /** The healthy upstream answers at once, however the other one behaves. */
    const goodIsQuick = async () => {
      const { ms, value } = await timed(() => use(connected.client, "good/read_graph"));
      expect(value.isError, text(value)).toBeFalsy();
      expect(ms).toBeLessThan(QUICK);
    };
    /** Every request slot comes back once the hanging exchanges reach their deadline. */
    const slotsFreed = async () => {
      if (h.slots) expect(await waitFor(async () => (await h.slots!(c, connected.sessionId)) === 0, { tries: 100, ms: 50 })).toBe(true);
    };
    return { ...connected, c, goodIsQuick, slotsFreed };
  };

  describe("an upstream that hangs on every method", () => {
    it("after connecting: the other upstream and the lists stay quick; its calls time out; it is used again once it answers", async () => {
      const s = await session("h-after");
      expect(await catalog(s.client)).toContain("flaky:\n- add_observations:");
      await h.control("hang", "hang-all-a");

      // More calls to the hanging upstream than the session has request slots, all at once.
      const stuck = Array.from({ length: 8 }, () => timed(() => use(s.client, "flaky/read_graph")));
      await s.goodIsQuick();
      const listed = await timed(() => catalog(s.client));
      expect(listed.ms).toBeLessThan(QUICK);
      for (const { ms, value } of await Promise.all(stuck)) {
        expect(value.isError).toBe(true);
        expect(text(value)).toContain(`did not answer within ${HANG_TIMEOUT} ms`);
        expect(ms).toBeLessThan(HANG_TIMEOUT * 3);
      }
      await s.goodIsQuick();
      await s.slotsFreed();

      // It comes back, having forgotten its sessions (a restart): re-initialized without the host noticing.
      const sessionsBefore = (await h.stats("hang-all-a")).sessions;
      await h.control("forget", "hang-all-a");
      await h.control("up", "hang-all-a");
      const back = await use(s.client, "flaky/read_graph");
      expect(back.isError, text(back)).toBeFalsy();
      expect((await h.stats("hang-all-a")).sessions).toBe(sessionsBefore + 1);
      await s.client.close();
    });

    it("from before the session starts: the session answers at once, the upstream is unavailable, then served once it answers", async () => {
      await h.control("hang", "hang-all-b");
      const s = await session("h-before");
      // The first call goes to the healthy upstream while the other one's connect hangs.
      await s.goodIsQuick();
      const listed = await timed(() => catalog(s.client));
      expect(listed.ms).toBeLessThan(HANG_TIMEOUT * 2);
      expect(listed.value).toContain(`flaky: unavailable — no answer within ${HANG_TIMEOUT} ms`);
      expect(listed.value).toContain("good:\n- add_observations:");
      const down = await timed(() => use(s.client, "flaky/read_graph"));
      expect(down.value.isError).toBe(true);
      expect(down.ms).toBeLessThan(HANG_TIMEOUT * 2);
      await s.slotsFreed();

      // The failed attempt was forgotten: once the upstream answers, the next call connects anew and succeeds.
      await h.control("up", "hang-all-b");
      const up = await use(s.client, "flaky/read_graph");
      expect(up.isError, text(up)).toBeFalsy();
      expect(await catalog(s.client)).toContain("flaky:\n- add_observations:");
      await s.client.close();
    });

    it("while the lists are served: shown as connecting; once it answers, a new session has its tools", async () => {
      await h.control("hang", "hang-all-c");
      const s = await session("h-connecting");
      await s.goodIsQuick();
      const listed = await catalog(s.client);
      expect(listed).toContain("flaky: connecting — its tools appear when it answers");
      expect(listed).toContain("good:\n- add_observations:");
      await h.control("up", "hang-all-c");
      const again = await session("h-connecting");
      expect(await catalog(again.client)).toContain("flaky:\n- add_observations:");
      await again.client.close();
      await s.client.close();
    });
  });

  describe("an upstream that hangs on one method", () => {
    for (const [route, method] of ONE_METHOD) {
      it(`${method} while connecting: the session answers at once; the upstream is unavailable with a timeout`, async () => {
        const s = await session(`h-${route}`);
        await s.goodIsQuick();
        const listed = await timed(() => catalog(s.client));
        expect(listed.ms).toBeLessThan(HANG_TIMEOUT * 2);
        expect(listed.value).toContain(`flaky: unavailable — no answer within ${HANG_TIMEOUT} ms`);
        expect((await h.stats(route)).methods[method]).toBeGreaterThanOrEqual(1);
        const call = await timed(() => use(s.client, "flaky/read_graph"));
        expect(call.value.isError).toBe(true);
        expect(call.ms).toBeLessThan(HANG_TIMEOUT * 2);
        await s.goodIsQuick();
        await s.slotsFreed();
        await s.client.close();
      });
    }

    it("tools/call: the call times out within its timeout and frees its slot; the session goes on", async () => {
      const s = await session("h-call");
      await catalog(s.client);
      const call = await timed(() => use(s.client, "flaky/read_graph"));
      expect(text(call.value)).toContain(`did not answer within ${HANG_TIMEOUT} ms`);
      expect(call.ms).toBeLessThan(HANG_TIMEOUT * 2);
      await s.goodIsQuick();
      await s.slotsFreed();
      // The upstream is still connected and still hangs on calls only: its lists keep working.
      expect(await catalog(s.client)).toContain("flaky:\n- add_observations:");
      await s.client.close();
    });

    it("tools/call and its notifications/cancelled: calls time out, the cancellations hold no slot past their deadline", async () => {
      const s = await session("h-cancel");
      await catalog(s.client);
      const calls = await Promise.all(Array.from({ length: 6 }, () => use(s.client, "flaky/read_graph")));
      for (const r of calls) expect(text(r)).toContain(`did not answer within ${HANG_TIMEOUT} ms`);
      // The cancellations are on their way, and hang too: the healthy upstream is not kept waiting for a slot.
      await s.goodIsQuick();
      expect(await waitFor(async () => ((await h.stats("hang-cancel")).methods["notifications/cancelled"] ?? 0) >= 1)).toBe(true);
      await s.slotsFreed();
      await s.goodIsQuick();
      await s.client.close();
    });

    it("DELETE after a failed connect: the failure is answered at once, not after the DELETE", async () => {
      const s = await session("h-delete");
      const listed = await timed(() => catalog(s.client));
      expect(listed.value).toContain("flaky: unavailable — error: catalog exploded");
      expect(listed.ms).toBeLessThan(QUICK);
      expect(await waitFor(async () => (await h.stats("hang-delete")).deletes >= 1)).toBe(true);
      await s.goodIsQuick();
      await s.slotsFreed();
      await s.client.close();
    });

    it("DELETE when the host ends the session: the host's DELETE is answered without waiting for it", async () => {
      const s = await session("h-delete-end");
      expect(await catalog(s.client)).toContain("flaky:\n- add_observations:");
      const before = (await h.stats("hang-delete-end")).deletes;
      const ended = await timed(() => h.end(s.c, s.token, s.sessionId));
      expect(ended.value).toBe(200);
      expect(ended.ms).toBeLessThan(HANG_TIMEOUT);
      expect(await waitFor(async () => (await h.stats("hang-delete-end")).deletes > before)).toBe(true);
      await s.client.close().catch(() => {});
    });

    it("GET stream headers (the host holds its stream): calls to it and to the other upstream are not held up", async () => {
      const s = await session("h-get");
      expect(await catalog(s.client)).toContain("flaky:\n- add_observations:");
      // The host's SDK client holds its GET stream, so the proxy asks the upstream for one: it never answers.
      expect(await waitFor(async () => (await h.stats("hang-get")).gets >= 1)).toBe(true);
      const call = await timed(() => use(s.client, "flaky/read_graph"));
      expect(call.value.isError, text(call.value)).toBeFalsy();
      expect(call.ms).toBeLessThan(QUICK);
      await s.goodIsQuick();
      await s.client.close();
    });
  });
}
