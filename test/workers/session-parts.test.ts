// The parts of a session object, each on its own over a real object's storage (src/session/session-parts.ts): its
// activity, its runtimes, an admin's reload and reconnect, its end, and its alarm. The object routing to them is
// tested through the Worker (sessions, lifecycle, reload, session-bound).
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { kvKeys } from "../../src/config/keys.ts";
import { loadTeamConfig } from "../../src/config/load.ts";
import { sessionParts, type SessionParts } from "../../src/session/session-parts.ts";
import type { SessionRecord } from "../../src/session/state.ts";
import { replayUrl, seedTeam, waitFor } from "./helpers.ts";

/** The settings' defaults (wrangler.toml sets neither): UPSTREAM_IDLE_SECONDS, SESSION_TTL_SECONDS. */
const IDLE_MS = 120_000;
const TTL_MS = 86_400_000;
const TOKEN = "0123456789abcdef";

/** Runs `fn` in the object `<team>/<id>` with a fresh set of its parts (the object's own are never asked). */
function withParts<T>(team: string, id: string, fn: (parts: SessionParts, storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  return runInDurableObject(env.SESSIONS.getByName(`${team}/${id}`), (_object, state) => fn(sessionParts(state, env), state.storage));
}

/** A session record of `team` with the team's stored config, as a session writes it at initialize. */
async function recordOf(team: string, sessionId: string): Promise<SessionRecord> {
  const config = await loadTeamConfig(env.TEAMS, team);
  if (!config?.ok) throw new Error(`no config for ${team}`);
  return { team, tokenId: TOKEN, sessionId, view: "meta", createdAt: new Date().toISOString(), config: config.config };
}

const memoryTeam = (team: string) => seedTeam(team, { mcp: { a: { url: replayUrl("memory") }, b: { url: replayUrl("memory") } } });

describe("a session object's activity", () => {
  it("is written at most once a minute, and keeps the alarm within one idle period of the last use", async () => {
    await withParts("sp-activity", "a", async ({ activity }, storage) => {
      expect(await activity.touch()).toBe(true);
      const written = await storage.get<number>("activity");
      expect((await storage.getAlarm())! - written!).toBe(IDLE_MS);
      expect(await activity.touch()).toBe(false);
      expect(await storage.get("activity")).toBe(written);

      // After an idle close the alarm waits for the time-to-live: the next use pulls it forward.
      await storage.setAlarm(Date.now() + TTL_MS);
      activity.forget();
      expect(await activity.touch()).toBe(true);
      expect((await storage.getAlarm())! - Date.now()).toBeLessThanOrEqual(IDLE_MS);
      // An alarm already nearer is kept.
      const near = Date.now() + IDLE_MS / 2;
      await storage.setAlarm(near);
      activity.forget();
      expect(await activity.touch()).toBe(true);
      expect(await storage.getAlarm()).toBe(near);
      await storage.deleteAlarm();
    });
  });
});

describe("a session object's runtimes", () => {
  it("builds one runtime per life and gives its gate once built; a retired one serves its calls, then leaves", async () => {
    await memoryTeam("sp-runtimes");
    const record = await recordOf("sp-runtimes", "r");
    await withParts("sp-runtimes", "r", async ({ runtimes }) => {
      const served = runtimes.serve(record);
      expect(runtimes.serve(record)).toBe(served);
      expect(runtimes.gate).toBeUndefined();
      const runtime = await served.runtime;
      expect(runtimes.gate).toBe(runtime.gate);

      const call = served.take();
      runtimes.retire();
      expect(runtimes.current).toBeUndefined();
      expect(runtimes.gate).toBeUndefined();
      expect(runtimes.serving()).toEqual([served]);
      expect(runtimes.retiredTransports()).toEqual([served.transport]);
      const next = runtimes.serve(record);
      expect(next).not.toBe(served);
      expect(runtimes.serving()).toEqual([next, served]);

      // Its last call over, the retired runtime closes its clients and leaves the set.
      call.done();
      expect(await waitFor(() => runtimes.serving().length === 1)).toBe(true);
      expect(runtimes.takeRetired()).toEqual([]);
      await next.runtime;
      await runtimes.drop();
      expect(runtimes.current).toBeUndefined();
      expect(runtimes.gate).toBeUndefined();
    });
  });

  it("forgets a runtime whose build failed: the next request builds anew", async () => {
    await memoryTeam("sp-broken");
    const record = await recordOf("sp-broken", "r");
    await withParts("sp-broken", "r", async ({ runtimes }) => {
      // A record no runtime can be built from (the fault: its config is missing).
      const broken = runtimes.serve({ ...record, config: undefined as never });
      await expect(broken.runtime).rejects.toThrow();
      expect(runtimes.current).toBeUndefined();
      const again = runtimes.serve(record);
      expect(again).not.toBe(broken);
      await again.runtime;
      await runtimes.drop();
    });
  });
});

describe("an admin's reload and reconnect of a session object", () => {
  it("asks only a live session; takes the reload at the next request: changed upstreams start afresh, the runtime retires", async () => {
    await memoryTeam("sp-reload");
    const record = await recordOf("sp-reload", "r");
    await withParts("sp-reload", "r", async ({ reload, store, runtimes }, storage) => {
      expect(await reload.ask()).toBe(false);
      expect(await storage.get("reload")).toBeUndefined();
      await store.putSession(record);
      await storage.put({ "upstream:a": { status: "failed", reason: "down", at: 0 }, "upstream:b": { status: "failed", reason: "down", at: 0 } });
      expect(await reload.takePending(record)).toBe(record);

      expect(await reload.ask()).toBe(true);
      expect(await storage.get("reload")).toBe(true);
      const served = runtimes.serve(record);
      await served.runtime;
      await env.TEAMS.put(kvKeys.config("sp-reload"), JSON.stringify({ mcp: { a: { url: replayUrl("memory") }, b: { url: replayUrl("memory"), headers: { "X-Changed": "1" } } } }));
      const next = await reload.takePending(record);
      expect(next.config.upstreams.find((u) => u.name === "b")?.headers).toEqual({ "X-Changed": "1" });
      expect(await store.session()).toEqual(next);
      expect(await storage.get("reload")).toBeUndefined();
      // Only the changed upstream's record goes; the runtime serving until now takes no new request.
      expect([...(await storage.list({ prefix: "upstream:" })).keys()]).toEqual(["upstream:a"]);
      expect(runtimes.current).toBeUndefined();
      expect(runtimes.serve(next)).not.toBe(served);

      // A team whose config is gone: the reload is taken, the session keeps its config.
      await reload.ask();
      await env.TEAMS.delete(kvKeys.config("sp-reload"));
      expect(await reload.takePending(next)).toBe(next);
      expect(await storage.get("reload")).toBeUndefined();
      await Promise.all([runtimes.drop(), ...runtimes.takeRetired().map((one) => one.close())]);
    });
  });

  it("reconnects only an upstream the live session has", async () => {
    await memoryTeam("sp-reconnect");
    const record = await recordOf("sp-reconnect", "r");
    await withParts("sp-reconnect", "r", async ({ reload, store, runtimes }) => {
      expect(await reload.reconnect("a")).toBe(false);
      await store.putSession(record);
      expect(await reload.reconnect("nowhere")).toBe(false);
      expect(await reload.reconnect("a")).toBe(true);
      expect(runtimes.current?.answering).toBe(0);
      await runtimes.drop();
    });
  });
});

describe("the end of a session object", () => {
  it("sends the last figures, closes the runtimes, wipes the storage and its alarm, and leaves the team's index", async () => {
    await memoryTeam("sp-end");
    const record = await recordOf("sp-end", "e");
    const index = env.TEAM_INDEX.getByName("sp-end");
    await index.admit("sp-end", "e", `t:${TOKEN}`, 20);
    await withParts("sp-end", "e", async ({ store, meter, runtimes, end }, storage) => {
      await store.putSession(record);
      await storage.setAlarm(Date.now() + TTL_MS);
      // As the object does: its runtime's build reads what an earlier instance left before anything is counted.
      await meter.restore();
      meter.started(record.createdAt);
      const served = runtimes.serve(record);
      await served.runtime;
      const call = served.take();
      runtimes.retire();
      await end.end();
      call.done();
      expect(runtimes.serving()).toEqual([]);
      expect((await storage.list()).size).toBe(0);
      expect(await storage.getAlarm()).toBeNull();
    });
    expect(await index.list()).toEqual([]);
    expect((await index.usage(1))[0]?.figures.sessions).toBe(1);
  });

  it("ends at the index's asking only when idle: never under a call, and under a host's open stream only when told so", async () => {
    await memoryTeam("sp-idle");
    const record = await recordOf("sp-idle", "i");
    await withParts("sp-idle", "i", async ({ store, runtimes, end }) => {
      await store.putSession(record);
      const served = runtimes.serve(record);
      await served.runtime;
      const call = served.take();
      expect(await end.ifIdle(true)).toBe(false);
      call.done();
      const listen = served.take();
      const stream = listen.hostStream(new Response(new ReadableStream()));
      listen.done();
      expect(await end.ifIdle(false)).toBe(false);
      expect(await store.session()).toEqual(record);
      expect(await end.ifIdle(true)).toBe(true);
      expect(await store.session()).toBeUndefined();
      await stream.body?.cancel();
    });
  });
});

describe("a session object's alarm", () => {
  it("ends a session unused for its time-to-live", async () => {
    await memoryTeam("sp-ttl");
    const record = await recordOf("sp-ttl", "t");
    await env.TEAM_INDEX.getByName("sp-ttl").admit("sp-ttl", "t", `t:${TOKEN}`, 20);
    await withParts("sp-ttl", "t", async ({ alarm, store }, storage) => {
      await store.putSession(record);
      await store.putActivity(Date.now() - TTL_MS - 1);
      await alarm.ring();
      expect((await storage.list()).size).toBe(0);
    });
    expect(await env.TEAM_INDEX.getByName("sp-ttl").list()).toEqual([]);
  });

  it("while used, sends the figures not sent yet and looks again an idle period after the last use", async () => {
    await memoryTeam("sp-used");
    const record = await recordOf("sp-used", "u");
    await withParts("sp-used", "u", async ({ alarm, store, meter, runtimes }, storage) => {
      await store.putSession(record);
      const last = Date.now() - 1000;
      await store.putActivity(last);
      await meter.restore();
      meter.started(record.createdAt);
      const served = runtimes.serve(record);
      await alarm.ring();
      expect(await storage.getAlarm()).toBe(last + IDLE_MS);
      expect(runtimes.current).toBe(served);
      await runtimes.drop();
      await storage.deleteAlarm();
    });
    expect((await env.TEAM_INDEX.getByName("sp-used").usage(1))[0]?.figures.sessions).toBe(1);
  });

  it("keeps the runtime of a session answering a call past the idle time; lets it go once nothing uses it", async () => {
    await memoryTeam("sp-quiet");
    const record = await recordOf("sp-quiet", "q");
    await withParts("sp-quiet", "q", async ({ alarm, store, runtimes, activity }, storage) => {
      await store.putSession(record);
      const last = Date.now() - IDLE_MS - 1000;
      await store.putActivity(last);
      const served = runtimes.serve(record);
      await served.runtime;
      const call = served.take();
      await alarm.ring();
      expect(runtimes.current).toBe(served);
      expect((await storage.getAlarm())! - Date.now()).toBeLessThanOrEqual(IDLE_MS);
      call.done();
      await alarm.ring();
      expect(runtimes.current).toBeUndefined();
      expect(await storage.getAlarm()).toBe(last + TTL_MS);
      // The next request notes its activity at once.
      expect(await activity.touch()).toBe(true);
      await storage.deleteAlarm();
    });
  });
});

describe("a session object's alarm over what does not parse", () => {
  it("wipes an object whose record is unreadable", async () => {
    await withParts("sp-alarm", "unreadable", async ({ alarm }, storage) => {
      await storage.put({ session: { not: "a record" }, activity: 5 });
      await storage.setAlarm(Date.now() + TTL_MS);
      await alarm.ring();
      expect((await storage.list()).size).toBe(0);
      expect(await storage.getAlarm()).toBeNull();
    });
  });

  it("counts from now when the activity is unreadable, and writes it so that the time-to-live still runs out", async () => {
    await memoryTeam("sp-noactivity");
    const record = await recordOf("sp-noactivity", "n");
    await withParts("sp-noactivity", "n", async ({ alarm, store }, storage) => {
      await store.putSession(record);
      await storage.put("activity", "yesterday");
      const before = Date.now();
      await alarm.ring();
      const written = await storage.get<number>("activity");
      expect(written).toBeGreaterThanOrEqual(before);
      expect(await storage.getAlarm()).toBe(written! + IDLE_MS);
      await storage.deleteAlarm();
    });
  });
});
