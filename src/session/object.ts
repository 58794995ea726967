// The session Durable Object, named `<team>/<session id>` (or a 2026-era object's `<team>/p.<token id>`,
// `<team>/ts.<nonce>`, `<team>/c.<token id>`): a shell that routes each call to the part with that job
// (src/session/session-parts.ts). A request is a 2025 session's (session-requests.ts) or a 2026-era one
// (modern-requests.ts), each checked against the object's record; the alarm closes idle upstreams and deletes an
// abandoned session (session-alarm.ts); an admin's reload and reconnect (session-reload.ts) and the team index's
// `endIfIdle` (session-end.ts) come in as RPC.
import { DurableObject } from "cloudflare:workers";
import type { Subject } from "../config/subject.ts";
import type { Env, SessionRpc } from "../lib/env.ts";
import type { FetchGate } from "../upstream/fetch-gate.ts";
import type { AuditOutbox } from "./audit-outbox.ts";
import { serveModernRequest } from "./modern-requests.ts";
import { readRoute } from "./routed-request.ts";
import { sessionParts } from "./session-parts.ts";
import { serveSessionRequest } from "./session-requests.ts";

export class SessionObject extends DurableObject<Env> implements SessionRpc {
  readonly #parts = sessionParts(this.ctx, this.env);

  /** The upstream connection gate of the live runtime (its counters are what tests read). */
  get gate(): FetchGate | undefined {
    return this.#parts.runtimes.gate;
  }

  /** The subject the live runtime's views read in their CallSession, once it is built (what tests read). */
  async viewSubject(): Promise<Subject | undefined> {
    return (await this.#parts.runtimes.current?.runtime)?.session.subject;
  }

  /** The object's audit outbox (tests put a fault in place of its sender). */
  get audit(): AuditOutbox {
    return this.#parts.audit;
  }

  override async fetch(request: Request): Promise<Response> {
    const route = readRoute(request);
    return route.modern ? serveModernRequest(this.#parts, request, route) : serveSessionRequest(this.#parts, request, route);
  }

  override async alarm(): Promise<void> {
    await this.#parts.alarm.ring();
  }

  async reload(): Promise<boolean> {
    return this.#parts.reload.ask();
  }

  async reconnect(name: string): Promise<boolean> {
    return this.#parts.reload.reconnect(name);
  }

  async endIfIdle(evenListening = false): Promise<boolean> {
    return this.#parts.end.ifIdle(evenListening);
  }
}
