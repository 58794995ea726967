// The session Durable Object: boots one session runtime, restores it after eviction, closes idle upstreams on its
// alarm, deletes itself when abandoned, and takes an admin's reload or reconnect between requests.
import { DurableObject } from "cloudflare:workers";
import { loadTeamConfig } from "../config/load.ts";
import { DEFAULT_VIEW, View, resolveView } from "../config/view.ts";
import { ROUTE_HEADERS, type Env, type SessionRpc } from "../env.ts";
import { codeModeAvailable, settings } from "../settings.ts";
import { httpError, sessionNotFound } from "../responses.ts";
import { log } from "../log.ts";
import type { FetchGate } from "../upstream/fetch-gate.ts";
import { watchStream } from "./host-stream.ts";
import { createModernRuntime, createRuntime, type ModernRuntime, type Runtime } from "./runtime.ts";
import { SessionStore, principalOf, sessionView, type SessionRecord } from "./state.ts";
import { UsageMeter } from "./usage.ts";

/** Activity is written to storage at most this often, and at least four times per idle period (the alarm reads it). */
const ACTIVITY_WRITE_MS = 60_000;

export class SessionObject extends DurableObject<Env> implements SessionRpc {
  readonly #store = new SessionStore(this.ctx.storage);
  /** A 2025 session's runtime, or a 2026-era object's (record.era), built on the first request of each object life. */
  #runtime: Promise<Runtime | ModernRuntime> | undefined;
  /** Host GET streams open right now: while there is one, upstreams keep their streams open too. */
  #hostStreams = 0;
  /** Answers whose body has not ended yet (src/session/host-stream.ts follows them). */
  #answering = 0;
  #activityWritten = 0;
  /** This session's token accounting (src/session/usage.ts); what it has not sent yet is in storage too. */
  readonly #meter = new UsageMeter(this.ctx.storage);
  /** The upstream connection gate of the live runtime (its counters are what tests read). */
  gate: FetchGate | undefined;

  override async fetch(request: Request): Promise<Response> {
    const team = request.headers.get(ROUTE_HEADERS.team) ?? "";
    const tokenId = request.headers.get(ROUTE_HEADERS.tokenId) ?? "";
    const user = request.headers.get(ROUTE_HEADERS.user) ?? undefined;
    const base = new URL(request.url).origin;
    const sessionId = request.headers.get(ROUTE_HEADERS.session) ?? "";
    const initialize = request.headers.get(ROUTE_HEADERS.initialize) === "1";
    // The router checked it: the view the session starts with at initialize, later only one the URL names.
    const asked = View.safeParse(request.headers.get(ROUTE_HEADERS.view) ?? undefined);
    const view = asked.success ? asked.data : undefined;
    if (request.headers.get(ROUTE_HEADERS.era) === "modern") return this.#modern(request, team, tokenId, sessionId, user, base, view === "code" ? "code" : DEFAULT_VIEW);

    let record = await this.#store.session();
    if (initialize && !record) {
      const created = await this.#newRecord({ team, tokenId, sessionId, base, ...(user ? { user } : {}) }, view);
      if (created instanceof Response) return created;
      record = created;
    } else if (!record || record.team !== team || record.tokenId !== tokenId || record.sessionId !== sessionId) {
      return sessionNotFound();
    } else if (view !== undefined && view !== sessionView(record)) {
      // The view is fixed at initialize (the host has listed its tools under it): asking for another is a mistake.
      return httpError("invalid_view", `This session was started with ?view=${sessionView(record)}; start a new session to use ?view=${view}.`);
    } else if (await this.#store.reloadPending()) {
      record = await this.#reload(record);
    }

    const touched = await this.#touch();
    const runtime = await this.#boot(record);
    if (!("transport" in runtime)) return sessionNotFound();
    const response = await runtime.transport.handleRequest(request);
    if (initialize) {
      if (response.ok) {
        // Answer initialize at once; the first tools/list waits for these connections.
        this.ctx.waitUntil(runtime.registry.ensureEager());
        this.#meter.started(record.createdAt);
        await this.#index(record.team).add(record.sessionId);
      } else if (!(await this.#store.transport())?.initialized) {
        await this.#end();
      }
    }
    if (request.method === "DELETE" && response.ok) await this.#end();
    // Usage goes to the team's index when activity is written (at most once a minute), beside the answer, not before
    // it; not at initialize, where the team's index is busy adding the session (the figures wait for the next one).
    else if (touched && !initialize) this.ctx.waitUntil(this.#flushUsage(record));
    if (request.method === "GET" && response.ok && response.body) {
      return watchStream(
        response,
        () => this.#hostStreams++ === 0 && void runtime.registry.setStreaming(true),
        () => --this.#hostStreams === 0 && void runtime.registry.setStreaming(false),
      );
    }
    return this.#answer(response);
  }

  /**
   * An answer counted until its body ends: a tool call can outlast the idle period (a slow upstream, a program
   * waiting for the user's consent), and the idle alarm must not take its runtime away meanwhile.
   */
  #answer(response: Response): Response {
    if (!response.body) return response;
    return watchStream(
      response,
      () => this.#answering++,
      () => this.#answering--,
    );
  }

  /**
   * A 2026-era request (the router chose this object: a principal's, or a toolset's by its handle). The object's
   * record is written on its first request, with the team's config of that moment; later ones take admin reloads
   * as sessions do. Each request is served whole by the per-request handler; the upstream registry stays. `view`:
   * `code` for a principal's code object (the router sends `?view=code` there), else the meta-tools.
   */
  async #modern(request: Request, team: string, tokenId: string, objectId: string, user: string | undefined, base: string, view: View): Promise<Response> {
    let record = await this.#store.session();
    if (!record) {
      const created = await this.#newRecord({ team, tokenId, sessionId: objectId, era: "modern", base, ...(user ? { user } : {}) }, view);
      if (created instanceof Response) return created;
      record = created;
      this.#meter.started(record.createdAt);
      await this.#index(team).add(objectId);
    } else if (record.era !== "modern" || record.team !== team || record.tokenId !== tokenId || record.sessionId !== objectId) {
      return sessionNotFound();
    } else if (await this.#store.reloadPending()) {
      record = await this.#reload(record);
    }
    const touched = await this.#touch();
    const runtime = await this.#boot(record);
    if (!("handler" in runtime)) return sessionNotFound();
    const response = await runtime.handler.fetch(request);
    if (touched) this.ctx.waitUntil(this.#flushUsage(record));
    return this.#answer(response);
  }

  /**
   * The object's record, written with the team's config of this moment (a session at initialize, a 2026-era object
   * on its first request); the 503 an operator must act on when the team has no config that validates.
   */
  async #newRecord(fields: Omit<SessionRecord, "createdAt" | "config" | "view">, asked: View | undefined): Promise<SessionRecord | Response> {
    const config = await loadTeamConfig(this.env.TEAMS, fields.team);
    if (!config?.ok) {
      const why = config ? "has nothing that validates" : "does not exist";
      return httpError("not_configured", `The team's config ${why}; an operator must store one with \`npm run team -- put\`.`);
    }
    // The URL's or the token's view, else the team's, else the default; code mode only where this deployment runs it.
    const chosen = resolveView(asked, config.config.view, codeModeAvailable(this.env));
    if ("refused" in chosen) return httpError("invalid_view", chosen.refused);
    const record: SessionRecord = { ...fields, view: chosen.view, createdAt: new Date().toISOString(), config: config.config };
    await this.#store.putSession(record);
    return record;
  }

  /**
   * Idle upstream clients are closed (so the object can hibernate and is not billed while idle; the next call
   * reconnects), and a session unused for its time-to-live is deleted.
   */
  override async alarm(): Promise<void> {
    const record = await this.#store.session();
    if (!record) {
      // Only an unreadable session record gets here (the alarm is set after the record is written, and deleted
      // with it): that session answers 404 anyway, so its storage goes.
      await this.ctx.storage.deleteAlarm();
      await this.#store.clear();
      return;
    }
    const now = Date.now();
    // Activity is written before the alarm is set. Unreadable, it counts from this alarm rather than from the epoch,
    // and is written so that the next alarm counts from the same moment: the time-to-live still runs out.
    let last = await this.#store.activity();
    if (last === undefined) {
      last = now;
      await this.#store.putActivity(now);
    }
    // Upstream clients nothing used for UPSTREAM_IDLE_SECONDS are closed; a session unused for SESSION_TTL_SECONDS is deleted.
    const idleMs = settings(this.env).upstreamIdleSeconds * 1000;
    const ttlMs = settings(this.env).sessionTtlSeconds * 1000;
    if (now - last >= ttlMs) {
      await this.#end();
      return;
    }
    // What an idle session (or an evicted one, whose figures wait in storage) has not sent yet goes now.
    await this.#flushUsage(record);
    if (now - last >= idleMs && this.#answering > 0) {
      // A request is still being answered (a long call, a program waiting for consent): not idle; look again later.
      await this.ctx.storage.setAlarm(now + idleMs);
      return;
    }
    if (now - last >= idleMs && this.#hostStreams === 0) {
      // Close the upstream clients and let the whole runtime go: its state is in storage, and the next request
      // builds it again as after an eviction, so an idle session holds no memory while the object lives on.
      // The next request notes its activity at once, which brings this alarm back within one idle period.
      await this.#dropRuntime();
      this.#activityWritten = 0;
    }
    await this.ctx.storage.setAlarm(now - last >= idleMs ? last + ttlMs : last + idleMs);
  }

  /** Admin: take the team's current config at the start of the next request (never in the middle of one). */
  async reload(): Promise<boolean> {
    if (!(await this.#store.session())) return false;
    await this.#store.setReloadPending(true);
    return true;
  }

  /** Admin: close one upstream's connection and connect it again now (its catalog read anew). */
  async reconnect(name: string): Promise<boolean> {
    const record = await this.#store.session();
    if (!record) return false;
    const runtime = await this.#boot(record);
    return runtime.registry.reconnect(name);
  }

  /** Swaps in the team's current config; upstreams whose entry did not change keep their state. */
  async #reload(record: SessionRecord): Promise<SessionRecord> {
    await this.#store.setReloadPending(false);
    const config = await loadTeamConfig(this.env.TEAMS, record.team);
    if (!config?.ok) return record;
    await this.#dropRuntime();
    const kept = new Map(config.config.upstreams.map((u) => [u.name, JSON.stringify(u)]));
    for (const old of record.config.upstreams) {
      if (kept.get(old.name) !== JSON.stringify(old)) await this.#store.remove(old.name);
    }
    const next = { ...record, config: config.config };
    await this.#store.putSession(next);
    return next;
  }

  /**
   * Notes activity (in storage at most once a minute, and at least four times per idle period) and makes sure
   * the alarm looks at it within one idle period: after an idle close the alarm waits for the time-to-live, so a
   * session used again pulls it forward, or its new clients would stay open until then.
   */
  async #touch(): Promise<boolean> {
    const now = Date.now();
    const idleMs = settings(this.env).upstreamIdleSeconds * 1000;
    if (now - this.#activityWritten < Math.min(ACTIVITY_WRITE_MS, idleMs / 4)) return false;
    this.#activityWritten = now;
    await this.#store.putActivity(now);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > now + idleMs) await this.ctx.storage.setAlarm(now + idleMs);
    return true;
  }

  /** Builds the runtime once per object life; a failed boot is retried next time. */
  #boot(record: SessionRecord): Promise<Runtime | ModernRuntime> {
    const create = (): Promise<Runtime | ModernRuntime> =>
      record.era === "modern" ? createModernRuntime(this.env, record, this.#store, this.#meter) : createRuntime(this.env, record, this.#store, this.#meter);
    this.#runtime ??= this.#meter.restore().then(create).then(
      (runtime) => {
        this.gate = runtime.gate;
        // A runtime built while the host holds its GET stream (after a reload, say) streams from the start.
        if (this.#hostStreams > 0) void runtime.registry.setStreaming(true);
        return runtime;
      },
      (err: unknown) => {
        this.#runtime = undefined;
        throw err;
      },
    );
    return this.#runtime;
  }

  #index(team: string) {
    return this.env.TEAM_INDEX.getByName(team);
  }

  /**
   * Sends the usage figures not sent yet to the team's index. They leave the session's storage first; a send that
   * fails gives them back for the next flush (at the end of the session they are lost).
   */
  async #flushUsage(record: SessionRecord): Promise<void> {
    try {
      await this.#meter.restore();
      const days = await this.#meter.take();
      if (days.length === 0) return;
      try {
        await this.#index(record.team).addUsage(days, principalOf(record));
      } catch (err) {
        this.#meter.giveBack(days);
        throw err;
      }
    } catch (err) {
      log({ event: "unhandled", error: `usage not sent to the team index: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  /** Lets the runtime go (its state is in storage): its upstream clients are closed. */
  async #dropRuntime(): Promise<void> {
    const runtime = await this.#runtime?.catch(() => undefined);
    this.#runtime = undefined;
    this.gate = undefined;
    await runtime?.registry.closeAll();
  }

  /** Ends the session: upstream sessions closed, storage wiped, so the id answers 404 from now on. */
  async #end(): Promise<void> {
    const record = await this.#store.session();
    // The last usage figures go to the team's index while the upstream sessions close; then the meter stops.
    await Promise.all([record && this.#flushUsage(record), this.#dropRuntime()]);
    this.#meter.close();
    await this.ctx.storage.deleteAlarm();
    await this.#store.clear();
    if (record) await this.#index(record.team).remove(record.sessionId);
  }
}
