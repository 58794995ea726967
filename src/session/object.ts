// The session Durable Object: boots one session runtime, restores it after eviction, closes idle upstreams on its
// alarm, deletes itself when abandoned, and takes an admin's reload (a new runtime for new requests, while the
// calls under way finish on the old one: served-runtime.ts) or reconnect between requests.
import { DurableObject } from "cloudflare:workers";
import { loadTeamConfig } from "../config/load.ts";
import { DEFAULT_VIEW, View, resolveView } from "../config/view.ts";
import { ROUTE_HEADERS, type Env, type SessionRpc } from "../env.ts";
import { codeModeAvailable, settings } from "../settings.ts";
import { httpError, sessionNotFound } from "../responses.ts";
import { log } from "../log.ts";
import { ResourceLinks } from "../forward/resource-links.ts";
import { ParkedCalls } from "../modern/parked-calls.ts";
import type { FetchGate } from "../upstream/fetch-gate.ts";
import { createModernRuntime, createRuntime, type ObjectParts } from "./runtime.ts";
import { ServedRuntime } from "./served-runtime.ts";
import { handleWithRetired, reloadTag } from "./transport.ts";
import { SessionStore, principalOf, sessionView, type SessionRecord } from "./state.ts";
import { admitSession } from "./admission.ts";
import { UsageMeter } from "./usage.ts";

/** Activity is written to storage at most this often, and at least four times per idle period (the alarm reads it). */
const ACTIVITY_WRITE_MS = 60_000;

export class SessionObject extends DurableObject<Env> implements SessionRpc {
  readonly #store = new SessionStore(this.ctx.storage);
  /**
   * The runtime new requests take: a 2025 session's, or a 2026-era object's (record.era), built on the first request
   * of each object life, and again after a reload or an idle close.
   */
  #runtime: ServedRuntime | undefined;
  /** Runtimes a reload replaced that still answer calls begun before it; each leaves the set once closed. */
  readonly #retired = new Set<ServedRuntime>();
  /** The next runtime is built by a reload (its host hears that the lists may have changed). */
  #reloaded = false;
  /** Reloads taken in this object's life: the runtimes they build tag their requests to the host (transport.ts). */
  #reloads = 0;
  #activityWritten = 0;
  /** This session's token accounting (src/session/usage.ts); what it has not sent yet is in storage too. */
  readonly #meter = new UsageMeter(this.ctx.storage);
  /** What the runtimes of this object's life share (a retired one and its successor included). */
  readonly #parts: ObjectParts = { meter: this.#meter, links: new ResourceLinks(this.#store), parks: new ParkedCalls() };
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
    const served = this.#serve(record);
    const lease = served.take();
    try {
      const runtime = await served.runtime;
      if (!("transport" in runtime)) return sessionNotFound();
      // The runtimes a reload retired still hear the host's answers to what they asked (transport.ts).
      const response = await handleWithRetired(runtime.transport, [...this.#retired].flatMap((s) => s.transport ?? []), request);
      if (initialize) {
        if (response.ok) {
          // Answer initialize at once; the first tools/list waits for these connections.
          this.ctx.waitUntil(runtime.registry.ensureEager());
          this.#meter.started(record.createdAt);
        } else if (!(await this.#store.transport())?.initialized) {
          await this.#end();
        }
      }
      if (request.method === "DELETE" && response.ok) await this.#end();
      // Usage and use go to the team's index when activity is written (at most once a minute), beside the answer, not
      // before it; not at initialize, which the index has just admitted (the figures wait for the next one).
      else if (touched && !initialize) this.ctx.waitUntil(this.#report(record));
      // Followed until its body ends: a call can outlast the idle period (a slow upstream, a program waiting for the
      // user's consent) or a reload, and neither may take its upstream clients away meanwhile.
      return request.method === "GET" && response.ok && response.body ? lease.hostStream(response) : lease.answer(response);
    } finally {
      lease.done();
    }
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
    } else if (record.era !== "modern" || record.team !== team || record.tokenId !== tokenId || record.sessionId !== objectId) {
      return sessionNotFound();
    } else if (await this.#store.reloadPending()) {
      record = await this.#reload(record);
    }
    const touched = await this.#touch();
    const served = this.#serve(record);
    const lease = served.take();
    try {
      const runtime = await served.runtime;
      if (!("handler" in runtime)) return sessionNotFound();
      const response = await runtime.handler.fetch(request);
      if (touched) this.ctx.waitUntil(this.#report(record));
      return lease.answer(response);
    } finally {
      lease.done();
    }
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
    const refused = await admitSession(this.env, fields);
    if (refused) return refused;
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
    if (now - last >= idleMs && (this.#runtime?.answering ?? 0) > 0) {
      // A request is still being answered (a long call, a program waiting for consent): not idle; look again later.
      await this.ctx.storage.setAlarm(now + idleMs);
      return;
    }
    if (now - last >= idleMs && (this.#runtime?.hostStreams ?? 0) === 0) {
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
    const served = this.#serve(record);
    const lease = served.take();
    try {
      return await (await served.runtime).registry.reconnect(name);
    } finally {
      lease.done();
    }
  }

  /**
   * The team's index, for a principal at its bound: this session ends if it answers nothing right now, and, unless
   * `evenListening`, holds no host GET stream either (a stream left open by a host that forgot its session is ended
   * with it; the host, if alive, gets 404 at its next request and starts a new session).
   */
  async endIfIdle(evenListening = false): Promise<boolean> {
    const served = [this.#runtime, ...this.#retired].filter((one) => one !== undefined);
    if (served.some((one) => one.answering > 0 || (!evenListening && one.hostStreams > 0))) return false;
    for (const one of served) one.endHostStream();
    await this.#end();
    return true;
  }

  /**
   * Swaps in the team's current config; upstreams whose entry did not change keep their state. The runtime serving
   * until now is retired, not closed: the calls it is answering finish on their upstream clients (served-runtime.ts).
   */
  async #reload(record: SessionRecord): Promise<SessionRecord> {
    await this.#store.setReloadPending(false);
    const config = await loadTeamConfig(this.env.TEAMS, record.team);
    if (!config?.ok) return record;
    const kept = new Map(config.config.upstreams.map((u) => [u.name, JSON.stringify(u)]));
    const changed = record.config.upstreams.filter((old) => kept.get(old.name) !== JSON.stringify(old));
    const next = { ...record, config: config.config };
    // Nothing is awaited from the retirement until every write below is issued: the old registry writes no record
    // after it, and a runtime built from here on reads these writes (storage reads see the writes issued before them).
    this.#retire();
    await Promise.all([...changed.map((old) => this.#store.remove(old.name)), this.#store.putSession(next)]);
    return next;
  }

  /** The runtime serving until now takes no new request; it closes itself once its answers have ended. */
  #retire(): void {
    const served = this.#runtime;
    this.#runtime = undefined;
    this.gate = undefined;
    this.#reloaded = true;
    this.#reloads++;
    if (!served) return;
    this.#retired.add(served);
    served.retire();
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

  /**
   * The runtime new requests take, built when there is none; a failed build is tried again by the next request. It is
   * built from the session record as stored when the build starts: a reload may have replaced `record` since the
   * request read it.
   */
  #serve(record: SessionRecord): ServedRuntime {
    if (this.#runtime) return this.#runtime;
    const tag = this.#reloads > 0 ? reloadTag(this.#reloads) : undefined;
    const build = async () => {
      await this.#meter.restore();
      const current = (await this.#store.session()) ?? record;
      return current.era === "modern" ? createModernRuntime(this.env, current, this.#store, this.#parts) : createRuntime(this.env, current, this.#store, this.#parts, tag);
    };
    const served: ServedRuntime = new ServedRuntime(build(), { afterReload: this.#reloaded, onRetiredClosed: () => this.#retired.delete(served) });
    this.#reloaded = false;
    this.#runtime = served;
    served.runtime.then(
      (runtime) => {
        if (this.#runtime === served) this.gate = runtime.gate;
      },
      () => {
        if (this.#runtime === served) this.#runtime = undefined;
      },
    );
    return served;
  }

  #index(team: string) {
    return this.env.TEAM_INDEX.getByName(team);
  }

  /** What a request that noted activity tells the team's index: the usage not sent yet, and that the session is in use. */
  #report(record: SessionRecord): Promise<unknown> {
    const seen = this.#index(record.team).seen(record.sessionId);
    return Promise.all([this.#flushUsage(record), seen.catch((err) => log({ event: "unhandled", error: `use not told to the team index: ${err instanceof Error ? err.message : String(err)}` }))]);
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
    const served = this.#runtime;
    this.#runtime = undefined;
    this.gate = undefined;
    await served?.close();
  }

  /** Ends the session: upstream sessions closed (those of retired runtimes too), storage wiped, so the id answers 404 from now on. */
  async #end(): Promise<void> {
    const record = await this.#store.session();
    const retired = [...this.#retired];
    this.#retired.clear();
    // The last usage figures go to the team's index while the upstream sessions close; then the meter stops.
    await Promise.all([record && this.#flushUsage(record), this.#dropRuntime(), ...retired.map((served) => served.close())]);
    this.#meter.close();
    await this.ctx.storage.deleteAlarm();
    await this.#store.clear();
    if (record) await this.#index(record.team).remove(record.sessionId);
  }
}
