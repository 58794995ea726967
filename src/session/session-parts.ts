// The parts of one session object, each with one job, made once per object instance over its storage: the object
// (src/session/object.ts) routes each call to one of them.
import type { Subject } from "../config/subject.ts";
import type { Env } from "../lib/env.ts";
import { ResourceLinks } from "../relay/resource-links.ts";
import { ParkedCalls } from "../modern/parked-calls.ts";
import { AuditOutbox } from "./audit-outbox.ts";
import { IndexReports } from "./index-reports.ts";
import { ObjectRuntimes } from "./object-runtimes.ts";
import { SessionActivity } from "./session-activity.ts";
import { SessionAlarm } from "./session-alarm.ts";
import { SessionEnd } from "./session-end.ts";
import { SessionReload } from "./session-reload.ts";
import type { AnyRuntime, Lease } from "./served-runtime.ts";
import { PLACEHOLDER_ID } from "./routed-request.ts";
import { SessionStore, type SessionRecord } from "./state.ts";
import { UsageMeter } from "./usage.ts";

export interface SessionParts {
  env: Env;
  /**
   * Who the object's calls are made for: one object for the object's life, made the subject each routed request
   * brings before it is served (routed-request.ts takeSubject); the views' CallSession holds this very object.
   */
  subject: Subject;
  /** Work the object finishes beside an answer, never before it. */
  waitUntil(promise: Promise<unknown>): void;
  /** The object's storage, typed (src/session/state.ts). */
  store: SessionStore;
  /** This session's token accounting (src/session/usage.ts); what it has not sent yet is in storage too. */
  meter: UsageMeter;
  /** The audit outbox: entries written before their answers, shipped to the team's trail (src/session/audit-outbox.ts). */
  audit: AuditOutbox;
  runtimes: ObjectRuntimes;
  activity: SessionActivity;
  reports: IndexReports;
  reload: SessionReload;
  end: SessionEnd;
  alarm: SessionAlarm;
}

export function sessionParts(ctx: DurableObjectState, env: Env): SessionParts {
  const store = new SessionStore(ctx.storage);
  const meter = new UsageMeter(ctx.storage);
  // A placeholder until the first request is served, which makes it that request's (nothing is called before).
  const subject: Subject = { kind: "token", id: PLACEHOLDER_ID };
  // What the runtimes of this object's life share (a retired one and its successor included).
  const audit = new AuditOutbox(ctx.storage, env);
  const runtimes = new ObjectRuntimes(env, store, { meter, links: new ResourceLinks(store), parks: new ParkedCalls(), subject, audit, waitUntil: (work) => ctx.waitUntil(work) });
  const activity = new SessionActivity(env, store, ctx.storage);
  const reports = new IndexReports(env, meter);
  const end = new SessionEnd(store, ctx.storage, runtimes, reports, meter, audit);
  return {
    env,
    subject,
    waitUntil: (promise) => ctx.waitUntil(promise),
    store,
    meter,
    runtimes,
    activity,
    reports,
    reload: new SessionReload(env, store, runtimes),
    end,
    alarm: new SessionAlarm({ env, store, alarms: ctx.storage, runtimes, activity, reports, end, audit }),
    audit,
  };
}

/**
 * One request served on the session's runtime: its activity noted (`touched`: written now), and the runtime kept
 * (leased) while the answer is made, so that no idle close or reload takes its upstream clients meanwhile.
 */
export async function onRuntime(
  parts: SessionParts,
  record: SessionRecord,
  serve: (runtime: AnyRuntime, lease: Lease, touched: boolean) => Promise<Response>,
): Promise<Response> {
  const touched = await parts.activity.touch();
  const served = parts.runtimes.serve(record);
  const lease = served.take();
  try {
    return await serve(await served.runtime, lease, touched);
  } finally {
    lease.done();
  }
}

/**
 * The caller's policies now read another subject (a member's groups changed at a token refresh): every loaded catalog
 * is read anew and filtered for it, and the host told what changed, as a reload would. Calls are decided on the
 * subject of the moment meanwhile (src/views/tool-call.ts).
 */
export async function filterAnew(runtime: AnyRuntime): Promise<void> {
  const { registry, bridge } = runtime.session;
  const changes = await Promise.all(registry.servers.map((name) => registry.refresh(name).catch(() => undefined)));
  const change = { tools: false, resources: false, prompts: false };
  for (const each of changes) {
    change.tools ||= each?.tools === true;
    change.resources ||= each?.resources === true;
    change.prompts ||= each?.prompts === true;
  }
  if (change.tools || change.resources || change.prompts) await bridge.announce(change);
}
